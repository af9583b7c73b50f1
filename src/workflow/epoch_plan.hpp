// What `ibroute watch` plans for each new state of the fabric: the host set of one stored schedule
// (fixed when the watch starts, hosts by port GUID), minus the hosts the fabric no longer has and
// plus those that came back, planned like `plan` plans it, and the schedule document peers read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric_context.hpp"
#include "fabric_store.hpp"
#include "ibroute/schedule/schedule.hpp"
#include "plan_pipeline.hpp"

namespace ibroute::workflow {

struct FollowedSet {
  std::string name;                           // the schedule the watch follows
  std::vector<schedule::HostIdentity> hosts;  // its hosts in rank order
  std::vector<int32_t> senders, receivers;    // ranks of `hosts`; both empty: all-to-all
  PlanRequest request;                        // its message size and rate
};

// The stored schedule `name` as a set to follow (InputError when there is none).
FollowedSet followed_set(store::FabricStore& store, const std::string& name);

struct EpochPlan {
  Exchange exchange;                // the hosts present, in the set's order
  std::vector<std::string> absent;  // hosts of the set this fabric does not have (or not up)
  PlanOutcome outcome;
  size_t broken = 0;          // transfers of the plan without a working route
  bool rate_lowered = false;  // the set's rate is more than this fabric carries: timed at the most it does
};

// The set's hosts present in `ctx`'s fabric (port GUID there, cabled, with a LID), planned and
// timed at the set's rate (or, where the fabric no longer carries it, at the most it carries).
// InputError when fewer than two are present (or no sender or receiver is left). `progress` is
// called between steps on the calling thread; what it throws ends the plan (watch abandons a plan
// that a newer change of the fabric has made stale).
EpochPlan plan_epoch(const schedule::EvalContext& ctx, const FollowedSet& set, const fabric::ProgressFn& progress = {});

// The document of an epoch: the plan, its hosts as the scan names them, the scan it was planned on.
schedule::ScheduleDoc epoch_doc(const fabric::Fabric& f, const store::ScanInfo& scan, const schedule::Schedule& s,
                                uint64_t epoch, int64_t from_unix_ns, const std::string& created_at);

}  // namespace ibroute::workflow
