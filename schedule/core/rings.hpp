// Shifts over a ring with empty places. The plain shifts (rank i sends to rank i+k mod N) are
// congestion-free on a fat-tree whose routing spreads destinations by their index (d-mod-k, OpenSM's
// ftree), but only where N is a multiple of the up-link counts: otherwise every shift's wrap from
// rank N-1 to rank 0 puts two of a leaf's transfers on one up-link, and every phase takes twice as
// long (10 000 hosts on 18-port switches: efficiency 0.5). Placing the ranks on a ring of M >= N
// places (schedule.hpp's Ring) - in topology, LID or tree order, as the routing numbers them, with the
// places the routing counts but the host set lacks left empty - restores the alignment: M-1
// phases, each at one transfer per link, some ranks idle in each. Internal to schedule/core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"
#include "phase_packing.hpp"

namespace ibroute::schedule {

struct NamedRing {
  Ring ring;
  std::string name;  // "topology order, 10044 places"
};

// The rank order as given on a ring of exactly its ranks: the plain shifts.
NamedRing given_ring(size_t ranks);

// The ranks in a scrambled order, the same for the same `seed` on every machine (a splitmix64
// Fisher-Yates): no alignment between the shifts and whatever order the routing spreads paths by.
NamedRing scrambled_ring(size_t ranks, uint64_t seed);

// Rings worth trying for `hosts`: topology (leaf GUID), LID and tree order (as `ibroute routing`
// numbers destinations; where it differs from the topology order), each compact and each leaf padded to the
// fullest leaf's host count, each on its own size and rounded up to multiples of the up-link counts
// of the levels; none larger than `most` places.
std::vector<NamedRing> candidate_rings(const EvalContext& ctx, const std::vector<Host>& hosts, const Leaves& leaves,
                                       size_t most);

// The phases of `ring` for the shifts listed (1..size-1), leaving out phases in which nobody sends.
std::vector<Phase> ring_phases(const Ring& ring, const std::vector<size_t>& shifts);
// Every shift 1..size-1.
std::vector<Phase> ring_phases(const Ring& ring);

// `count` shifts spread evenly over 1..size-1 (all of them where there are fewer).
std::vector<size_t> sample_shifts(size_t size, size_t count);

}  // namespace ibroute::schedule
