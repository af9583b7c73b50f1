// `ibroute run --find-rate`: the highest per-node rate whose skipped share stays under a limit,
// from short runs (steps) in one job. A rate holds only if it was also achieved (measured
// throughput at least 95 % of what was asked, less the skipped share): a sender whose CPU falls
// behind its plan skips nothing, it just posts late. The rate doubles while it holds (the seeds' staged
// speed-up), halves while it does not, and once a held and a failed rate bracket the limit,
// bisects between them until they are within 5 % or the steps are used up.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ibroute/runner/run_stats.hpp"

namespace ibroute::runner {

struct RateStep {
  double rate = 0;  // bytes/s per node
  uint32_t rounds = 0;
  uint64_t planned = 0, ok = 0, skipped = 0, failed = 0;  // failed: not ok and not skipped
  double skipped_share = 0, gbps_per_node = 0;
  bool held = false;  // no failures, skipped share within the limit, and the rate achieved
};

// A step as rank 0 judges it from the merged aggregates of every rank: transfers planned, ok,
// skipped and failed, and the throughput measured, not planned — each node's bytes over its
// first post to its last completion, averaged over `nodes`.
RateStep measure_step(const RunMerge& merged, double rate, uint32_t rounds, size_t nodes);

class RateSearch {
 public:
  RateSearch(double start_rate, double max_skipped_share, int max_steps, int64_t step_ns, size_t phases);
  // The step's result and its merged aggregates (kept if it is the best held step or the last).
  // Returns whether the rate held.
  bool record(RateStep step, std::unique_ptr<RunMerge> merged);
  // The next rate to try, or 0 when the search is over.
  double next() const;
  // Rounds of a step at this slot: about step_ns of sending, at least 2.
  uint32_t rounds_for(int64_t slot_ns) const;
  const std::vector<RateStep>& steps() const { return steps_; }
  double answer() const;  // the highest rate that held; 0 if none
  // The best held step's aggregates, or the last step's when none held.
  std::unique_ptr<RunMerge> take_best();

 private:
  double start_, max_skipped_;
  int max_steps_;
  int64_t step_ns_;
  size_t phases_;
  std::vector<RateStep> steps_;
  std::unique_ptr<RunMerge> best_, last_;
};

}  // namespace ibroute::runner
