// Clock offsets from round trips (docs/background.md#clock-synchronisation-by-round-trips): the reference (rank 0)
// stamps a ping when it leaves and its pong when it returns, the peer stamps the moment in between. Causality bounds
// the offset by every sample; the tightest bounds come from the fastest round trips.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibroute::runner {

struct ClockSample {
  int64_t sent = 0;      // reference clock, ping posted
  int64_t remote = 0;    // peer clock, ping seen and pong posted
  int64_t received = 0;  // reference clock, pong seen
};

// offset = peer clock - reference clock, within +- uncertainty (both in ns).
struct ClockEstimate {
  int64_t offset_ns = 0;
  int64_t uncertainty_ns = 0;
  int64_t min_rtt_ns = 0;
  int64_t median_rtt_ns = 0;
  int64_t at_ns = 0;  // reference time of the measurement (middle of the kept samples)
  size_t samples = 0, kept = 0;
};

// Keeps the `keep` fraction with the shortest round trips (the slow ones met a busy CPU or
// link), intersects their bounds [remote - received, remote - sent] and takes the middle. If the
// bounds do not intersect (the clock moved during the measurement) the median of the midpoints
// is taken and the uncertainty covers the kept bounds.
ClockEstimate estimate_offset(std::vector<ClockSample> samples, double keep = 0.7);

// The peer's offset as a linear function of reference time, from a measurement before the run
// and optionally one after it (drift: frequency difference of the two oscillators).
struct ClockModel {
  int64_t offset_ns = 0;
  double drift = 0;  // d(offset)/dt, e.g. 2e-6 for 2 ppm
  int64_t at_ns = 0;
  int64_t offset_at(int64_t reference_ns) const {
    return offset_ns + static_cast<int64_t>(drift * static_cast<double>(reference_ns - at_ns));
  }
  int64_t to_peer(int64_t reference_ns) const { return reference_ns + offset_at(reference_ns); }
  int64_t to_reference(int64_t peer_ns) const;
};

ClockModel fit_clock(const ClockEstimate& before, const ClockEstimate* after = nullptr);

// A rank's own model of its offset to the reference during a run, from repeated measurements:
// a least-squares line through the last few (offset against reference time, each weighted by
// 1/uncertainty^2). Posts convert their planned reference times with it, so a clock that runs
// fast or slow stays aligned.
class ClockTracker {
 public:
  static constexpr size_t kWindow = 8;
  static constexpr double kMaxSlopeError = 50e-6;  // a drift read with a larger standard error is not used
  // `e`: offset = local - reference, its at_ns on the reference clock. Returns the residual
  // (measured - predicted before this measurement); 0 for the first. The statistics count how
  // far the prediction lay outside the measurement's uncertainty. `count_residual` false: a
  // measurement before the run starts (its error cost no post) stays out of the statistics.
  int64_t add(const ClockEstimate& e, bool count_residual = true);
  // Whether a measurement is good enough to join: its uncertainty at most three times the
  // median of those kept (plus 10 us). A burst whose round trips all met a busy CPU is noise,
  // and one such point would tilt the line.
  bool plausible(const ClockEstimate& e) const;
  int64_t offset_at(int64_t reference_ns) const;
  int64_t to_local(int64_t reference_ns) const { return reference_ns + offset_at(reference_ns); }
  int64_t to_reference(int64_t local_ns) const;
  double drift() const { return slope_; }
  size_t measurements() const { return count_; }
  int64_t residual_max_ns() const { return residual_max_; }
  double residual_rms_ns() const;
  int64_t last_uncertainty_ns() const { return points_.empty() ? 0 : points_.back().uncertainty_ns; }

 private:
  struct Point {
    int64_t at_ns, offset_ns, uncertainty_ns;
  };
  std::vector<Point> points_;  // the last kWindow measurements
  size_t count_ = 0;
  double slope_ = 0;       // d(offset)/d(reference time)
  int64_t anchor_at_ = 0;  // the line passes through (anchor_at_, anchor_offset_)
  double anchor_offset_ = 0;
  int64_t residual_max_ = 0;
  double residual_sq_ = 0;
  size_t residuals_ = 0;
};

}  // namespace ibroute::runner
