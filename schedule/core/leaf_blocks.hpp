// All-to-all in blocks of leaf pairs. A shift sends from every host at once, so a leaf of 18 hosts
// over 8 up-links needs ceil(18/8) = 3 slots where 2.25 would do: the whole 3 456-host three-level
// tree plans at 0.75 on shifts, and packing its 7.9 M waiting transfers is a three-sided matching
// (sender, receiver, up-link) that greedy fills to 75-90 %.
// Here the leaves are paired instead (block s: leaf g sends to leaf g+s), and each pair's hosts
// exchange in phases of as many transfers as the smaller side's up-links carry, the receivers
// taken in ring order, so that each phase's receivers are as many consecutive places of the ring
// (on a routing that spreads destinations by their place: as many up-links). Block 0 is each
// leaf's own exchange, its shifts within the leaf at the host links' rate.
// Internal to schedule/core.
#pragma once

#include <cstdint>
#include <vector>

#include "ibroute/schedule/schedule.hpp"
#include "phase_packing.hpp"

namespace ibroute::schedule {

// The phases over `ring`'s order: each leaf's hosts in the order of their places, the leaves in
// the order the ring first meets them; a rank on no leaf is a leaf of its own. `period`: places
// this far apart share links on a routing that spreads destinations by their place (the product
// of the up-link counts below the top level: d-mod-k's divisors). Two leaves whose first places
// are a multiple of it apart would receive over the same links in every phase; every second one
// of them takes its windows one later, so that in each phase the two receive on different hosts.
// (The 3 456-host tree: 388 k transfers left to pack instead of 549 k; alternating neighbouring
// leaves instead, 1.05 M.)
std::vector<Phase> leaf_block_phases(const Ring& ring, const Leaves& leaves, size_t period);

// How many phases leaf_block_phases makes (without the rare phase a collision adds): a block lasts
// as long as its largest pair needs, so that leaves of unequal host counts leave the others idle.
size_t leaf_block_phase_count(const Ring& ring, const Leaves& leaves);

// Whether blocks can beat shifts: some leaf has more hosts than it has up-links.
bool leaf_blocks_may_help(const Leaves& leaves);

}  // namespace ibroute::schedule
