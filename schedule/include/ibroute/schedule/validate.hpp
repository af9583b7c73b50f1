// Checks a schedule against a scan: same hosts (GUIDs, LIDs)? a complete all-to-all? every DLID
// one of its destination's? routes that work and stay within the link bound on this scan?
// So a schedule made last week can be checked against today's routing.
#pragma once

#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/progress.hpp"
#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

struct Check {
  std::string name;  // "fabric", "all_to_all" (or "groups"), "dlids", "routes", "congestion"
  bool ok;
  std::string detail;
};

struct Validation {
  std::vector<Check> checks;
  LoadReport load;  // empty when the hosts could not be matched
  bool ok() const;
};

// Resolve the document's hosts against fabric `f` by port GUID; mismatches go into `problems`.
std::vector<Host> resolve_hosts(const fabric::Fabric& f, const ScheduleDoc& doc, std::vector<std::string>& problems);
// The identity of each host as the fabric knows it.
std::vector<HostIdentity> identify_hosts(const fabric::Fabric& f, const std::vector<Host>& hosts);

// Structure only: every (sender, receiver) pair of the schedule's groups (all ranks when it has
// none) exactly once, no other transfer, no rank receiving twice in a phase. Empty when fine.
std::string check_pairs(const Schedule& s);
std::string check_all_to_all(size_t hosts, const std::vector<Phase>& phases);  // check_pairs of an all-to-all

// `progress` hears the load evaluation (the long part on a large fabric).
Validation validate(const EvalContext& ctx, const ScheduleDoc& doc, const fabric::ProgressFn& progress = {});

}  // namespace ibroute::schedule
