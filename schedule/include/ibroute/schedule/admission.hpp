// The rate a schedule can run at (docs/background.md#the-admission-rule): every source and destination link,
// and every switch out-port in every phase, must carry what is put on it.
#pragma once

#include <string>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

struct RateLimit {
  double max_rate = 0;  // bytes per second per node
  std::string limited_by;
};

// `slotted`: the phases last their own slots (phase_slots()), so a link carries at once what it
// carries relative to its phase's slots (LoadReport::link_share); else every phase lasts one slot.
RateLimit max_rate(const EvalContext& ctx, const LoadReport& load, bool slotted = false);

// Timing for a message size and a rate (0: the highest admissible). Throws InputError naming the
// limiting link when the rate is more than the fabric carries.
Timing make_timing(const EvalContext& ctx, const LoadReport& load, uint64_t message_size, double rate, bool slotted = false);

std::string describe_link(const fabric::Fabric& f, const fabric::LinkIndex& links, int32_t link);

}  // namespace ibroute::schedule
