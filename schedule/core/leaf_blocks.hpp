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
#include "leaf_pairs.hpp"
#include "phase_packing.hpp"

namespace ibroute::schedule {

class OptionTable;

// The routes the leaf pairs' open shop (leaf_shop.hpp) takes its receivers by: every transfer's
// paths and each link's capacity (unit_capacities).
struct LeafPaths {
  const OptionTable* table = nullptr;
  std::vector<int> cap;
};

// How the leaf pairs go: in blocks over the leaves' planned hosts; in blocks over the leaves'
// host ports, a port not planned an empty slot (where the fullest leaf is full, the blocks last as
// long either way, and windows at the ports keep the routing's alignment: a few hosts missing from
// the 3 456-host tree left 1.2 M transfers to pack in blocks over the planned hosts); or as an open
// shop (leaf_shop.hpp), where that takes 4 % fewer phases than the blocks (leaves of unequal host
// counts; on equal ones the blocks' windows move in step, which keeps the core links apart: the
// whole 3 456-host tree 0.940 against 0.918).
enum class LeafPairsWay { blocks, blocks_at_ports, open_shop };
struct LeafPairsPlan {
  LeafPairsWay way = LeafPairsWay::blocks;
  size_t phases = 0;  // without the rare phase a collision adds, nor the open shop's leftovers
};
LeafPairsPlan leaf_pairs_plan(const Ring& ring, const Leaves& leaves, const LeafSlots* slots = nullptr);

// The phases over `ring`'s order: each leaf's hosts in the order of their places, the leaves in
// the order the ring first meets them; a rank on no leaf is a leaf of its own. `period`: places
// this far apart share links on a routing that spreads destinations by their place (the product
// of the up-link counts below the top level: d-mod-k's divisors). Two leaves whose first places
// are a multiple of it apart would receive over the same links in every phase; every second one
// of them takes its windows one later, so that in each phase the two receive on different hosts.
// (The 3 456-host tree: 388 k transfers left to pack instead of 549 k; alternating neighbouring
// leaves instead, 1.05 M.) `slots`, `paths`, `leftover`: for the ports' blocks and the open shop.
std::vector<Phase> leaf_block_phases(const Ring& ring, const Leaves& leaves, size_t period,
                                     const LeafSlots* slots = nullptr, const LeafPaths* paths = nullptr,
                                     std::vector<Transfer>* leftover = nullptr);

// Transfers appended to `phases` (each of `n` ranks) in phases of their own, each sender and
// receiver once per phase: what the open shop left over, where it is not packed.
void append_leftover_phases(const std::vector<Transfer>& leftover, size_t n, std::vector<Phase>& phases);

// leaf_pairs_plan's phases and whether it is the open shop.
size_t leaf_block_phase_count(const Ring& ring, const Leaves& leaves, const LeafSlots* slots = nullptr);
bool leaf_blocks_as_open_shop(const Ring& ring, const Leaves& leaves, const LeafSlots* slots = nullptr);

// Whether blocks can beat shifts: some leaf has more hosts than it has up-links.
bool leaf_blocks_may_help(const Leaves& leaves);

}  // namespace ibroute::schedule
