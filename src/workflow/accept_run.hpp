// `ibroute accept` as a workflow: the scan judged against the expectation (structure, routing),
// the plan, the delivery (simulated, launched through `ibroute run`, or an earlier run's report
// bound to its run), the links' counters, the diagnosis and its confirmation run; the report's
// data out. src/cli/cmd_accept binds the options, writes the page and prints (docs/acceptance.md).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "accept_plan.hpp"
#include "expectation.hpp"
#include "fabric_context.hpp"
#include "ibroute/fabric/progress.hpp"
#include "pair_heatmap.hpp"

namespace ibroute::workflow {

struct AcceptRequest {
  std::string db;
  std::optional<int64_t> scan;
  std::string expect_file;  // named in the report
  Expectation expect;
  std::string hosts, senders, receivers;
  std::string order = "auto", method = "auto";
  bool shifts_only = false;
  // Exactly one: simulate, launch (a launcher prefix for `ibroute run`; {ranks} = hosts) or run_report.
  bool simulate = false;
  std::string launch;
  std::vector<std::string> run_args;
  std::string run_report;
  std::string message_size = "1MiB", rate;
  std::string counters = "auto";  // auto | snapshots | off: which counter window the links are judged by
  bool confirm = false;           // with launch: one more run of the suspects' transfers and controls
};

// What the command line sees of the work: progress, the moment a launched run takes over the
// terminal, and one-line notes (the command started, a warning).
struct AcceptHooks {
  fabric::ProgressFn progress;
  std::function<void()> hand_over;
  std::function<void(const std::string&)> note;
};

struct AcceptOutcome {
  std::unique_ptr<FabricContext> context;  // the judged scan
  AcceptPlan plan;                         // the plan made for this scan (what the plan checks judged)
  std::optional<PlanOutcome> ran;          // --run-report: the stored schedule the run ran, measured as a plan
  // What the delivery was judged against: the schedule that ran (the plan itself, where accept ran it).
  const PlanOutcome& judged() const { return ran ? *ran : plan.chosen; }
  nlohmann::json report;  // the report's data: checks, plan, loads, delivery, diagnosis, stage seconds
  Heatmap heat;
  bool accepted() const { return report["accepted"].get<bool>(); }
};

// InputError where the request names no mode or several, or --confirm without a launch.
void check_accept_modes(const AcceptRequest& r);

// InputError on a request that cannot be judged (modes, a run report of another fabric, ...).
AcceptOutcome run_acceptance(const AcceptRequest& r, const AcceptHooks& h);

}  // namespace ibroute::workflow
