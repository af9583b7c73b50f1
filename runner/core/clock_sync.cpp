#include "ibroute/runner/clock_sync.hpp"

#include <algorithm>
#include <climits>

namespace ibroute::runner {

ClockEstimate estimate_offset(std::vector<ClockSample> samples, double keep) {
  ClockEstimate e;
  e.samples = samples.size();
  if (samples.empty()) return e;
  auto rtt = [](const ClockSample& s) { return s.received - s.sent; };
  std::sort(samples.begin(), samples.end(), [&](const ClockSample& a, const ClockSample& b) { return rtt(a) < rtt(b); });
  size_t n = std::max<size_t>(1, static_cast<size_t>(static_cast<double>(samples.size()) * keep));
  samples.resize(n);
  e.kept = n;
  e.min_rtt_ns = rtt(samples.front());
  e.median_rtt_ns = rtt(samples[n / 2]);
  int64_t lo = INT64_MIN, hi = INT64_MAX, lo_any = INT64_MAX, hi_any = INT64_MIN;
  std::vector<int64_t> mids, times;
  for (const ClockSample& s : samples) {
    int64_t l = s.remote - s.received, h = s.remote - s.sent;
    lo = std::max(lo, l), hi = std::min(hi, h);
    lo_any = std::min(lo_any, l), hi_any = std::max(hi_any, h);
    mids.push_back(l + (h - l) / 2);
    times.push_back(s.sent + (s.received - s.sent) / 2);
  }
  std::nth_element(times.begin(), times.begin() + static_cast<long>(n / 2), times.end());
  e.at_ns = times[n / 2];
  if (lo <= hi) {
    e.offset_ns = lo + (hi - lo) / 2;
    e.uncertainty_ns = (hi - lo + 1) / 2;
  } else {
    std::nth_element(mids.begin(), mids.begin() + static_cast<long>(n / 2), mids.end());
    e.offset_ns = mids[n / 2];
    e.uncertainty_ns = std::max(e.offset_ns - lo_any, hi_any - e.offset_ns);
  }
  return e;
}

int64_t ClockModel::to_reference(int64_t peer_ns) const {
  // peer = ref + offset + drift * (ref - at)  =>  ref = (peer - offset + drift * at) / (1 + drift)
  double ref = (static_cast<double>(peer_ns - offset_ns) + drift * static_cast<double>(at_ns)) / (1.0 + drift);
  return static_cast<int64_t>(ref);
}

ClockModel fit_clock(const ClockEstimate& before, const ClockEstimate* after) {
  ClockModel m{before.offset_ns, 0.0, before.at_ns};
  if (after && after->at_ns != before.at_ns && after->samples > 0)
    m.drift = static_cast<double>(after->offset_ns - before.offset_ns) / static_cast<double>(after->at_ns - before.at_ns);
  return m;
}

}  // namespace ibroute::runner
