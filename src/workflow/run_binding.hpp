// A run report bound to the run it reports (accept --run-report): its schedule is one of the
// database's, its ranks are that schedule's hosts (by the port GUIDs the report names), the
// schedule was planned on this fabric, and every DLID it lists belongs to its destination. A
// report that fails any of these describes another run or another fabric: one InputError naming
// the file and the field. Accept then judges the run against the schedule it ran, not a new plan.
#pragma once

#include <string>

#include "fabric_context.hpp"
#include "ibroute/schedule/schedule.hpp"
#include "run_report_read.hpp"

namespace ibroute::store {
class FabricStore;
}

namespace ibroute::workflow {

struct RunBinding {
  schedule::Schedule schedule;  // as stored, its hosts resolved into the judged scan's fabric
  int64_t scan_id = 0;          // the scan it was planned on
  std::string warning;          // one line where the report predates the binding fields; "" otherwise
};

RunBinding bind_run_report(store::FabricStore& store, const FabricContext& c, const RunReportInput& run,
                           const std::string& source);

}  // namespace ibroute::workflow
