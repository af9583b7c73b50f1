// Phases emptied after packing. A greedy packing fills phase after phase; where every path is fixed
// (LMC 0) it leaves each phase some senders short and a tail of nearly empty phases. The emptiest
// phase's transfers are moved into the others, each where its sender, its receiver and the links of
// one of its paths are free, or else where exactly one transfer is in its way, which is moved on in
// turn (an ejection chain, as in timetabling). A phase is removed only once all of its transfers
// found a place; otherwise everything is put back as it was. Internal to schedule/core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "option_table.hpp"

namespace ibroute::schedule {

struct CompactWork {
  uint64_t budget = UINT64_MAX;  // links and transfers looked at; the same on any machine
  uint64_t work = 0;
  std::function<void(size_t removed, size_t phases)> progress;
};

// Removes phases from `phases` (each kept within `cap` per link, as unit_capacities gives it) while
// the emptiest can be emptied and the work is within budget, down to `floor` phases at the least.
// Phases whose links are over their capacity already are left as they are and receive nothing.
// Returns the phases removed. Deterministic: the same phases on any machine.
size_t compact_phases(const OptionTable& table, const std::vector<int>& cap, std::vector<Phase>& phases, size_t floor,
                      CompactWork& work);

// Whether compacting `phases` phases of `hosts` ranks over `links` links fits its memory limit.
bool compaction_fits(size_t phases, size_t hosts, size_t links);

}  // namespace ibroute::schedule
