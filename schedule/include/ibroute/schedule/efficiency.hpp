// How close a schedule comes to the least time any schedule could take for its host set on this
// fabric: efficiency = T* / T, both in message-times at the host link rate.
//
// T* (the least possible time) is the largest of what the exchange must push through a bottleneck
// over that bottleneck's capacity: the messages each host sends or receives over its own link;
// the transfers that leave (enter) every group of switches below a level — a leaf, a pod, a
// director's line card — over the links that leave it; and the transfers the forwarding tables
// send over one link at every one of their destination's LIDs, over that link.
// T (the plan's time) is the sum of its phases' times, each phase lasting as long as its most
// loaded link needs: a phase with 2 transfers on a link of the host rate takes 2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

struct LeastTime {
  double time = 0;          // T*, message-times at the host link rate
  std::string limited_by;   // what sets it: "host links (99 messages each)" or "leaf-3's 12 up-links: 4275 transfers leave"
};

// T* of an exchange among `hosts`: two groups (rank lists) or, both empty, all-to-all.
// Without `forced_links`, the links the tables leave as the only path are not walked (cheaper, and
// possibly lower).
LeastTime least_time(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<int32_t>& senders,
                     const std::vector<int32_t>& receivers, bool forced_links = true);

// T of phases as evaluated: the sum of their times in whole message-times (phase_slot_count), each
// phase with a transfer at least one.
double planned_time(const LoadReport& load);

struct Efficiency {
  double least = 0, planned = 0;  // T*, T
  double value = 0;               // T* / T (0 when T is 0)
  // Per node: with a timed schedule its planned_rate() (bytes each node moves / planned time), in
  // Gb/s; without one an estimate (messages per node / T at the host link rate), timed false.
  double rate_gbps = 0;
  bool timed = false;
  std::string limited_by;         // from LeastTime
};

Efficiency efficiency_of(const EvalContext& ctx, const LeastTime& least, const LoadReport& load, size_t max_sends,
                         const Schedule* timed = nullptr);

}  // namespace ibroute::schedule
