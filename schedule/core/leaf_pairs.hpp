// The leaves as the leaf-pair compositions see them (leaf_blocks.hpp): each leaf's ranks in ring
// order, what its up-links carry at once, and each pair's exchange as a sequence of transfers.
// Internal to schedule/core.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "phase_packing.hpp"
#include "rings.hpp"

namespace ibroute::schedule {

struct LeafGroup {
  std::vector<int32_t> ranks;  // in ring order (at their slots: -1 where a host is not planned)
  int up = 1;                  // transfers its up-links carry at once
  bool later = false;          // receives its windows one later than its twin (leaf_block_phases)
};

// Where each rank's port stands among its leaf's host ports (the fabric's, planned or not), and how
// many host ports each leaf has: the leaves as the routing numbers their hosts.
struct LeafSlots {
  std::vector<int32_t> slot;   // per rank (-1: on no leaf)
  std::vector<int32_t> count;  // per leaf (Leaves' numbering)
};
LeafSlots leaf_slots(const EvalContext& ctx, const std::vector<Host>& hosts, const Leaves& leaves);

// The leaves in the order the ring first meets them; a rank on no leaf is a leaf of its own.
// `period`: twins (first places a multiple of it apart) alternate `later`; 1 for none.
// With `slots`, each leaf's ranks at their slots, the hosts not planned left empty (-1), and the
// twins found by the slots' places (a leaf's first after all slots of the leaves before it).
std::vector<LeafGroup> leaf_groups(const Ring& ring, const Leaves& leaves, size_t period,
                                   const LeafSlots* slots = nullptr);

// One leaf pair's exchange as a sequence: the complete bipartite graph as max(n, m) matchings, the
// c-th pairing the smaller side's q-th host with the larger side's (q + c)-th, each in q order.
// Any `width` <= min(n, m) consecutive transfers have distinct senders and receivers (but where a
// window straddles two matchings of exactly `width`), and their receivers are consecutive. At an
// empty slot (-1 on either side) there is no transfer.
struct LeafPair {
  const LeafGroup* from;
  const LeafGroup* to;
  size_t next = 0, width = 1, offset = 0;
  size_t total() const { return from->ranks.size() * to->ranks.size(); }
  std::pair<int32_t, int32_t> at(size_t k) const {
    k = (k + offset) % total();
    const size_t n = from->ranks.size(), m = to->ranks.size();
    const size_t small = n < m ? n : m, large = n < m ? m : n;
    const size_t q = k % small, c = k / small, other = (q + c) % large;
    return n <= m ? std::pair(from->ranks[q], to->ranks[other]) : std::pair(from->ranks[other], to->ranks[q]);
  }
};

// Transfers a pair exchanges per phase: as many as the fewer up-links carry (and hosts allow).
size_t pair_width(const LeafGroup& a, const LeafGroup& b);

// Where pair (from, from + s)'s windows start: twins' one later, and each block `s` moved on by a
// step prime to the receiving leaf's host count (leaf_pairs.cpp says why).
size_t pair_offset(const LeafGroup& to, size_t width, size_t s);

// Each pair's phases at its width, leaf by leaf (none within a leaf: the leaves' own exchange).
std::vector<std::vector<uint64_t>> pair_durations(const std::vector<LeafGroup>& groups);

// Phases of the leaves' own exchange (shifts within each leaf): the fullest leaf's hosts less one.
size_t own_exchange_phases(const std::vector<LeafGroup>& groups);

}  // namespace ibroute::schedule
