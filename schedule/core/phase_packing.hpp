// Phases beyond the shifts of one rank order: where a leaf holds more of the host set than it has
// up-links, or one group is larger than the other, every shift overloads the same up-links and a
// plan timed shift by shift runs at half the rate. Instead, such a leaf's excess transfers wait
// (they are deferred from the shift they belong to) and are packed into phases of their own, each
// a partial matching in which no link carries more than it can at the host link rate.
// Internal to schedule/core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"
#include "option_table.hpp"

namespace ibroute::schedule {

struct Transfer {
  int32_t src, dst;  // ranks
};

// Per directed link: how many transfers at the host link rate it carries at once (a link twice as
// fast carries two; one slower than a host link none: even one transfer makes its phase longer).
// With `slots` > 1, in a phase of that many slots (a link of half the host rate carries one in two).
std::vector<int> unit_capacities(const EvalContext& ctx, int slots = 1);

// The slots a phase lasts at the least where a host link of the set is slower than the host link
// rate (every phase that holds one of its transfers lasts as long): 1 where none is; at most 8.
int slowest_host_slots(const EvalContext& ctx, const std::vector<Host>& hosts);

// The hosts' leaves: per rank its leaf (the switch it is cabled to, numbered; -1 none), and per
// leaf the transfers at the host link rate its up-links carry at once.
struct Leaves {
  std::vector<int> of_rank;
  std::vector<int> up;
  // `slots`: the up-links' transfers counted in phases of that many slots (unit_capacities).
  Leaves(const EvalContext& ctx, const std::vector<Host>& hosts, int slots = 1);
  // The least worst load of a phase: transfers leaving (entering) a leaf over its up-links.
  int phase_bound(const Phase& ph) const;
  // Takes transfers out of `ph` until no leaf sends or receives more than its up-links carry at
  // once; those of the ranks that waited least so far (`waits`, per rank, counted up) wait.
  void defer_excess(Phase& ph, std::vector<uint32_t>& waits, std::vector<Transfer>& deferred) const;
  // The same ranks with each leaf's spread evenly over the list (its k-th of c at about (k + 1/2) / c).
  std::vector<int32_t> interleave(const std::vector<int32_t>& ranks) const;
};

// Packs `deferred` into `phases`: first into those there are (where both ends wait and the links
// have room), then into new ones appended, each a partial matching with a DLID per transfer such
// that no link carries more than `cap` (unit_capacities); the busiest senders, receivers and leaves
// first, so that the bottleneck works in every phase. In phases of several slots, the room the
// critical links (critical_links.hpp) have in each phase there was is filled before anything else
// (in the new phases the pressure keeps them full: 175 of 181 on the tree that showed the need).
// `max_slots`: the slots of the best composition so far. Packing stops, returning false, once the
// slots it needs are sure to exceed it — the phases there are count `slots` each (the length their
// composition filled them to), a new one as long as what it carries, a slot at least — or,
// projected from the transfers its new phases have taken so far and their slots, will (the
// projection is on the hopeful side: later phases have fewer transfers left to choose from). Its
// work is then bounded by the composition it has to beat, not by the routing.
// `slots`: the phases' length (`cap` counted for it); with 1, every new phase counts one slot.
// `work`: the links of the options it looked at and the waiting transfers it scanned, counted as it
// goes; packing stops (false) once they pass `budget` — the same on any machine, unlike a clock.
struct PackWork {
  uint64_t budget = UINT64_MAX;
  uint64_t work = 0;
  bool over = false;           // stopped for the budget
  bool critical_links = true;  // in long phases, the critical links' room first (off: for comparison)
  std::function<void(size_t placed, size_t total)> progress;  // transfers placed of those waiting, phase by phase
};
bool pack_phases(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, const Leaves& leaves,
                 const std::vector<int>& cap, std::vector<Transfer> deferred, std::vector<Phase>& phases,
                 size_t max_slots = SIZE_MAX, PackWork* work = nullptr, int slots = 1);

}  // namespace ibroute::schedule
