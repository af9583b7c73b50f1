// What a run leaves at rank 0 for its report: the channels, the merged results, the clocks, the
// ranks that never reported, a rate search's steps. Filled by the data plane (runner/verbs), read by
// the report's writer (src/workflow/run_report_write), which needs no verbs for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ibroute/runner/rate_search.hpp"
#include "ibroute/runner/run_plan.hpp"
#include "ibroute/runner/run_report.hpp"
#include "ibroute/runner/run_stats.hpp"

namespace ibroute::runner {

struct RunOutcome {
  bool root = false;  // the rest is filled at MPI rank 0 only
  std::vector<Channel> channels;
  std::unique_ptr<RunMerge> merged;
  std::vector<RankClock> clocks;
  std::vector<int32_t> missing;        // schedule ranks that never reported
  std::vector<int32_t> schedule_rank;  // per MPI rank
  std::string device;
  bool ethernet = false;
  int64_t t0_ns = 0;
  uint32_t rounds_run = 0;
  int stop_signal = 0;  // the signal that ended the run early (at a round boundary); 0: none
  std::vector<std::pair<double, int64_t>> rss_kib;  // rank 0's resident memory: (seconds since t0, KiB)
  int64_t slot_ns = 0;                              // of the run, or of the rate search's best step
  std::vector<RateStep> steps;                      // a rate search's steps
  size_t best_step = SIZE_MAX;
  // A following run: the ranks dropped, each with the stretch (index into merged->epochs) from
  // which it was left out.
  std::vector<std::pair<uint32_t, int32_t>> dropped;
};

}  // namespace ibroute::runner
