// How close a schedule comes to the least time any schedule could take for its host set on this
// fabric: efficiency = T* / T, both in message-times at the host link rate.
//
// T* (the least possible time) is the largest of what the exchange must push through a bottleneck
// over that bottleneck's capacity: the messages each host sends or receives over its own link;
// the transfers that leave (enter) every group of switches below a level — a leaf, a pod, a
// director's line card — over the links that leave it; over the routing tables also the
// transfers they send over one link at every one of their destination's LIDs, over that link,
// and those whose every route leaves (enters) one switch by one of a few links, over those links.
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
  double time = 0;  // T*, message-times at the host link rate
  std::string
      limited_by;  // what sets it: "host links (99 messages each)" or "leaf-3's 12 up-links: 4275 transfers leave"
};

// T* twice: over the fabric (host links and every group's cut over all its working up-links: what
// any routing could reach) and over the routing tables (the cuts over only the up-links some route
// of these hosts uses — idle up-links carry nothing — and the links the tables leave as the only
// path). tables.time >= fabric.time; where it is higher, the routing is the limit.
struct LeastTimes {
  LeastTime fabric, tables;
};

// Of an exchange among `hosts`: two groups (rank lists) or, both empty, all-to-all.
LeastTimes least_times(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<int32_t>& senders,
                       const std::vector<int32_t>& receivers);

// One of them: the tables' (walks every route of the hosts) or, cheaper, the fabric's. `max_lids`:
// the tables' over each destination's first LIDs alone (1: its base LID, what a plan over the base
// LIDs can reach at best).
LeastTime least_time(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<int32_t>& senders,
                     const std::vector<int32_t>& receivers, bool over_tables = true, uint32_t max_lids = UINT32_MAX);

// T of phases as evaluated: the sum of their times in whole message-times (phase_slot_count), each
// phase with a transfer at least one.
double planned_time(const LoadReport& load);

struct Efficiency {
  double least = 0, planned = 0;  // T* over the fabric, T
  double value = 0;               // T* / T: the headline (0 when T is 0 or a transfer is lost)
  double least_tables = 0;        // T* over the routing tables
  double value_tables = 0;        // least_tables / T: what the tables let a plan reach
  std::string limited_by, tables_limited_by;
  size_t broken = 0;  // transfers without a working route: the exchange does not complete
  // Per node: with a timed schedule its planned_rate() (bytes each node moves / planned time), in
  // Gb/s; without one an estimate (messages per node / T at the host link rate), timed false. Only
  // the delivered share counts where transfers are lost.
  double rate_gbps = 0;
  bool timed = false;
  // The tables, not the fabric, set the least time (by more than 0.5 %): `ibroute routing`.
  bool routing_limits() const { return least_tables > least * 1.005 + 1e-9; }
};

Efficiency efficiency_of(const EvalContext& ctx, const LeastTimes& least, const LoadReport& load, size_t max_sends,
                         const Schedule* timed = nullptr);

}  // namespace ibroute::schedule
