// Clock offsets from round trips (seed 004's ib-test): the reference (rank 0) stamps a ping when
// it leaves and its pong when it returns, the peer stamps the moment in between. Causality bounds
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

}  // namespace ibroute::runner
