// What a run's merged results say about nodes and links: routes from the scan tell which links
// carried each path's data, and on which links the skipped and failed transfers concentrate —
// that points at the bad cable. Works from per-path counters, so it costs one route lookup per
// path, not per transfer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/runner/clock_sync.hpp"
#include "ibroute/runner/run_stats.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::runner {

struct RankClock {
  int32_t rank = 0;  // schedule rank
  ClockEstimate before, after;
  bool measured_after = false;
  double drift_ppm = 0;  // between rank 0's measurements before and after the run
};

struct LinkStat {
  int32_t link = -1;
  uint64_t bytes = 0;
  uint64_t transfers = 0, skipped = 0, failed = 0;  // failed: timeout, failed or lost
};

struct NodeStat {
  int32_t rank = 0;
  uint64_t bytes_sent = 0, bytes_received = 0;
  uint64_t ok = 0, skipped = 0, failed = 0;
  double send_gbps = 0;  // bytes sent / (last completion - first post)
  int64_t late_p99_ns = 0, completion_p99_ns = 0, completion_in_p99_ns = 0;
};

struct RunSummary {
  uint64_t planned = 0, ok = 0, skipped = 0, timeout = 0, failed = 0, lost = 0, corrupt = 0;
  uint64_t bytes_ok = 0;
  double seconds = 0;                                            // first post to last completion, all ranks
  double aggregate_gbps = 0;                                     // bytes_ok over that time
  int64_t late_median_ns = 0, late_p99_ns = 0, late_max_ns = 0;  // posted - planned
  int64_t completion_median_ns = 0, completion_p99_ns = 0, completion_max_ns = 0;
  std::vector<NodeStat> nodes;
  std::vector<LinkStat> links;         // every link that carried or was meant to carry a transfer
  std::vector<int32_t> missing_ranks;  // schedule ranks that never reported (died)
};

// `fabric`/`links` may be null (no scan given): then no per-link figures.
RunSummary summarise(const schedule::Schedule& s, const RunMerge& m, const std::vector<int32_t>& missing_ranks,
                     const fabric::Fabric* fabric, const fabric::LinkIndex* links);

}  // namespace ibroute::runner
