// The rate a schedule runs at (docs/background.md#the-admission-rule): each phase lasts as long as
// its busiest link needs at that link's own rate, and never less than one message at the per-node
// rate asked. One definition of a plan's per-node rate everywhere: the bytes each node moves over
// the planned time of one round (planned_rate).
#pragma once

#include <string>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

// Phases timed in slots: phase k lasts slots[k] x timing.slot_s (slots empty: one slot each).
struct PhaseTimes {
  Timing timing;  // timing.rate: the per-node rate the phases give (planned_rate)
  std::vector<uint32_t> slots;
  double fastest = 0;  // the most these phases allow (fastest_rate), bytes/s per node
};

// The fine slots a phase's least length is cut into: rounding a phase up to whole slots costs at
// most 1/kSlotsPerPhase of it (1.6 %).
constexpr uint32_t kSlotsPerPhase = 64;

// Times phases that need `need_s[k]` seconds each (their busiest link at its own rate) so that a
// node that sends `messages` messages of `message_size` bytes moves them at `rate` bytes/s (0: as
// fast as the links allow). No phase is shorter than it needs, none shorter than one message at
// `rate` unless the exchange has more phases than messages per node (phases of waiting transfers),
// where the short phases are shortened just enough to keep the rate. Throws InputError when `rate`
// is more than fastest_rate(); `why` is said then.
PhaseTimes time_phases(const std::vector<double>& need_s, size_t messages, uint64_t message_size, double rate,
                       const std::string& why = "");
// The most a node can move per second with phases this long (all at their own length).
double fastest_rate(const std::vector<double>& need_s, size_t messages, uint64_t message_size);

// Seconds each phase of `load` needs at its links' own rates for messages of `message_size` bytes.
std::vector<double> phase_needs(const EvalContext& ctx, const LoadReport& load, uint64_t message_size);

// Times `s` (its timing and slots) from its load at `rate` bytes/s per node (0: the most the links
// allow); refuses a rate above that, naming the busiest link and the most it allows. Returns that
// most, bytes/s per node.
double time_schedule(const EvalContext& ctx, const LoadReport& load, uint64_t message_size, double rate, Schedule& s);

// The most messages any node of `s` sends in one round.
size_t messages_per_node(const Schedule& s);
// One round of `s` as timed: sum of its phases' slots x slot_s.
double planned_seconds(const Schedule& s);
// The bytes each node moves over one round's planned time (the busiest sender's), bytes/s.
double planned_rate(const Schedule& s);

// "l001[13] -> s002[1]"
std::string describe_link(const fabric::Fabric& f, const fabric::LinkIndex& links, int32_t link);
// "100 Gb/s (12.5 GB/s)": rates as links are sold, the bytes in brackets.
std::string rate_text(double bytes_per_s);

}  // namespace ibroute::schedule
