#include "ibroute/runner/rate_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ibroute::runner {

RateStep measure_step(const RunMerge& m, double rate, uint32_t rounds, size_t nodes) {
  RateStep st;
  st.rate = rate, st.rounds = rounds;
  for (const PathCounters& p : m.paths) st.planned += p.planned, st.ok += p.ok, st.skipped += p.skipped;
  st.skipped_share = st.planned ? static_cast<double>(st.skipped) / static_cast<double>(st.planned) : 1.0;
  st.failed = st.planned - st.ok - st.skipped;
  double gbps = 0;
  for (const NodeTotals& t : m.nodes)
    if (t.last_completion_ns > t.first_post_ns && t.first_post_ns != 0)
      gbps += static_cast<double>(t.bytes_sent) * 8 / static_cast<double>(t.last_completion_ns - t.first_post_ns);
  st.gbps_per_node = nodes ? gbps / static_cast<double>(nodes) : 0;
  return st;
}

RateSearch::RateSearch(double start_rate, double max_skipped_share, int max_steps, int64_t step_ns, size_t phases)
    : start_(start_rate),
      max_skipped_(max_skipped_share),
      max_steps_(max_steps),
      step_ns_(step_ns),
      phases_(std::max<size_t>(1, phases)) {}

bool RateSearch::record(RateStep step, std::unique_ptr<RunMerge> merged) {
  const double achieved = step.gbps_per_node * 1e9 / 8;
  step.held = step.planned > 0 && step.failed == 0 && step.skipped_share <= max_skipped_ &&
              achieved >= 0.95 * (1 - max_skipped_) * step.rate;
  if (step.held && step.rate >= answer())
    best_ = std::move(merged), last_.reset();
  else if (!step.held)
    last_ = std::move(merged);
  steps_.push_back(step);
  return step.held;
}

double RateSearch::answer() const {
  double best = 0;
  for (const RateStep& s : steps_)
    if (s.held) best = std::max(best, s.rate);
  return best;
}

double RateSearch::next() const {
  if (steps_.empty()) return start_;
  if (static_cast<int>(steps_.size()) >= max_steps_) return 0;
  const double lo = answer();
  double hi = std::numeric_limits<double>::infinity();
  for (const RateStep& s : steps_)
    if (!s.held && s.rate > lo) hi = std::min(hi, s.rate);
  if (std::isinf(hi)) return lo * 2;                         // every rate so far held: speed up
  if (lo == 0) return hi / 2 >= start_ / 1024 ? hi / 2 : 0;  // none held yet: slow down
  if (hi / lo < 1.05) return 0;                              // bracketed closely enough
  return (lo + hi) / 2;
}

uint32_t RateSearch::rounds_for(int64_t slot_ns) const {
  const double round_ns = static_cast<double>(std::max<int64_t>(1, slot_ns)) * static_cast<double>(phases_);
  return static_cast<uint32_t>(std::clamp(static_cast<double>(step_ns_) / round_ns, 2.0, 1e9));
}

std::unique_ptr<RunMerge> RateSearch::take_best() { return best_ ? std::move(best_) : std::move(last_); }

}  // namespace ibroute::runner
