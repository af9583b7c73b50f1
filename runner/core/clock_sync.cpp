#include "ibroute/runner/clock_sync.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

namespace ibroute::runner {

ClockEstimate estimate_offset(std::vector<ClockSample> samples, double keep) {
  ClockEstimate e;
  e.samples = samples.size();
  if (samples.empty()) return e;
  auto rtt = [](const ClockSample& s) { return s.received - s.sent; };
  std::sort(samples.begin(), samples.end(),
            [&](const ClockSample& a, const ClockSample& b) { return rtt(a) < rtt(b); });
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
    m.drift =
        static_cast<double>(after->offset_ns - before.offset_ns) / static_cast<double>(after->at_ns - before.at_ns);
  return m;
}

}  // namespace ibroute::runner

namespace ibroute::runner {

int64_t ClockTracker::add(const ClockEstimate& e, bool count_residual) {
  int64_t residual = 0;
  if (count_ > 0) residual = e.offset_ns - offset_at(e.at_ns);
  if (count_ > 0 && count_residual) {
    // The measurement says only that the offset lies within its uncertainty: the model is shown
    // wrong by the distance from that interval, not by a starved burst's wide midpoint.
    const int64_t wrong =
        std::max<int64_t>(0, (residual < 0 ? -residual : residual) - std::max<int64_t>(e.uncertainty_ns, 0));
    residual_max_ = std::max(residual_max_, wrong);
    residual_sq_ += static_cast<double>(wrong) * static_cast<double>(wrong);
    ++residuals_;
  }
  ++count_;
  points_.push_back({e.at_ns, e.offset_ns, e.uncertainty_ns});
  if (points_.size() > kWindow) points_.erase(points_.begin());
  // Least squares weighted by 1/uncertainty^2, in coordinates relative to the newest point (keeps
  // the doubles exact enough): a burst that met a busy CPU, though plausible, barely tilts the
  // line; a lasting rise of the round trips (the all-to-all's own queues) takes over as the
  // window slides.
  const Point& last = points_.back();
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Point& p : points_) {
    const double u = static_cast<double>(std::max<int64_t>(p.uncertainty_ns, 0)) + 1000.0;
    const double w = 1.0 / (u * u);
    const double x = static_cast<double>(p.at_ns - last.at_ns), y = static_cast<double>(p.offset_ns - last.offset_ns);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const double den = sw * sxx - sx * sx;
  // Half a second of span at least: over less, the offsets' noise would be read as drift. And a
  // slope only where the points resolve it: its standard error (sqrt(sw / den), the uncertainties
  // taken as standard deviations) within kMaxSlopeError. A sharp point and one starved burst a
  // second later can tilt the line by a thousand ppm, which a few failed re-measurements then
  // extrapolate into milliseconds; the last resolved slope (or none) errs by the drift at most.
  const double span = static_cast<double>(last.at_ns - points_.front().at_ns);
  if (points_.size() >= 2 && span >= 5e8 && den > 0 && std::sqrt(sw / den) <= kMaxSlopeError)
    slope_ = (sw * sxy - sx * sy) / den;
  const double mean_x = sx / sw, mean_y = sy / sw;
  anchor_at_ = last.at_ns;
  anchor_offset_ = static_cast<double>(last.offset_ns) + mean_y - slope_ * mean_x;
  return residual;
}

bool ClockTracker::plausible(const ClockEstimate& e) const {
  if (points_.empty()) return true;
  std::vector<int64_t> u;
  for (const Point& p : points_) u.push_back(p.uncertainty_ns);
  std::nth_element(u.begin(), u.begin() + static_cast<long>(u.size() / 2), u.end());
  return e.uncertainty_ns <= 3 * u[u.size() / 2] + 10'000;
}

int64_t ClockTracker::offset_at(int64_t reference_ns) const {
  if (count_ == 0) return 0;
  return static_cast<int64_t>(std::llround(anchor_offset_ + slope_ * static_cast<double>(reference_ns - anchor_at_)));
}

int64_t ClockTracker::to_reference(int64_t local_ns) const {
  // local = ref + offset(ref); offset changes by ppm, so two steps converge to the ns.
  int64_t ref = local_ns - offset_at(local_ns);
  return local_ns - offset_at(ref);
}

double ClockTracker::residual_rms_ns() const {
  return residuals_ ? std::sqrt(residual_sq_ / static_cast<double>(residuals_)) : 0.0;
}

}  // namespace ibroute::runner
