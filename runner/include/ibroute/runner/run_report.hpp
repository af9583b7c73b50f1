// A run's results: one record per planned transfer, gathered at rank 0, and what they say
// about nodes and links (routes from the scan: which links carried the data, and on which links
// the skipped and failed transfers concentrate — that points at the bad cable).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/runner/clock_sync.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::runner {

enum class Status : uint8_t { ok, skipped, timeout, failed, lost };
const char* to_string(Status s);

// Trivially copyable: ranks send arrays of these to rank 0. Times are on the reference clock
// (rank 0's) in ns; 0 where it did not happen.
struct TransferRecord {
  uint32_t seq = 0;
  int32_t src = 0, dst = 0;  // schedule ranks
  uint16_t dlid = 0;
  Status status = Status::lost;
  uint8_t verified = 0;     // 1: the receiver found the expected bytes; 2: it found others
  int32_t wc_status = -1;   // the verbs completion status of a failed transfer
  uint64_t bytes = 0;
  int64_t planned_ns = 0, posted_ns = 0, completed_ns = 0, arrived_ns = 0;
};

struct RankClock {
  int32_t rank = 0;  // schedule rank
  ClockEstimate before, after;
  bool measured_after = false;
  double drift_ppm = 0;
};

struct LinkStat {
  int32_t link = -1;
  uint64_t bytes = 0;
  uint32_t transfers = 0, skipped = 0, failed = 0;  // failed: timeout, failed or lost
};

struct NodeStat {
  int32_t rank = 0;
  uint64_t bytes_sent = 0, bytes_received = 0;
  uint32_t ok = 0, skipped = 0, failed = 0;
  double send_gbps = 0;  // bytes sent / (last completion - first post)
};

struct RunSummary {
  size_t planned = 0, ok = 0, skipped = 0, timeout = 0, failed = 0, lost = 0, corrupt = 0;
  uint64_t bytes_ok = 0;
  double seconds = 0;          // first post to last completion, all ranks
  double aggregate_gbps = 0;   // bytes_ok over that time
  int64_t late_median_ns = 0, late_p99_ns = 0, late_max_ns = 0;  // posted - planned
  std::vector<NodeStat> nodes;
  std::vector<LinkStat> links;  // every link that carried or was meant to carry a transfer
  std::vector<int32_t> missing_ranks;  // schedule ranks that never reported (died)
};

// `fabric`/`links` may be null (no scan given): then no per-link figures.
RunSummary summarise(const schedule::Schedule& s, const std::vector<TransferRecord>& records,
                     const std::vector<int32_t>& missing_ranks, const fabric::Fabric* fabric,
                     const fabric::LinkIndex* links);

}  // namespace ibroute::runner
