#include "ibroute/runner/histogram.hpp"

#include <algorithm>
#include <bit>
#include <climits>

namespace ibroute::runner {

namespace {
constexpr size_t kSub = size_t{1} << LogHistogram::kSubBits;

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
}  // namespace

// Values below 2*kSub have a bucket each; above, bucket = (exponent, top kSubBits after the
// leading one).
size_t LogHistogram::bucket_of(int64_t v) {
  if (v < 0) v = 0;
  if (v > kMaxValue) v = kMaxValue;
  const auto u = static_cast<uint64_t>(v);
  if (u < 2 * kSub) return static_cast<size_t>(u);
  const int e = 63 - std::countl_zero(u);  // >= kSubBits + 1
  const size_t sub = static_cast<size_t>(u >> (e - kSubBits)) & (kSub - 1);
  return std::min(kBuckets - 1, (static_cast<size_t>(e - kSubBits) + 1) * kSub + sub);
}

int64_t LogHistogram::bucket_low(size_t b) {
  if (b < 2 * kSub) return static_cast<int64_t>(b);
  const int e = static_cast<int>(b / kSub) - 1 + kSubBits;
  return static_cast<int64_t>((uint64_t{1} << e) | (static_cast<uint64_t>(b % kSub) << (e - kSubBits)));
}

int64_t LogHistogram::bucket_high(size_t b) {
  if (b + 1 >= kBuckets) return kMaxValue;
  return bucket_low(b + 1) - 1;
}

void LogHistogram::add(int64_t v, uint64_t times) {
  if (times == 0) return;
  if (v < 0) negative_ += times, v = 0;
  if (v > kMaxValue) v = kMaxValue;
  counts_[bucket_of(v)] += times;
  count_ += times;
  min_ = std::min(min_, v), max_ = std::max(max_, v);
  const int64_t add = times > static_cast<uint64_t>(INT64_MAX / (v + 1)) ? INT64_MAX : v * static_cast<int64_t>(times);
  sum_ = saturating_add(sum_, add);
}

void LogHistogram::merge(const LogHistogram& o) {
  if (o.count_ == 0) return;
  // Only the buckets between its smallest and largest value can be non-empty: a destination's
  // distribution spans a few dozen of the 320, and rank 0 merges hundreds of thousands of them.
  for (size_t b = bucket_of(o.min_), last = bucket_of(o.max_); b <= last; ++b) counts_[b] += o.counts_[b];
  count_ += o.count_, negative_ += o.negative_;
  min_ = std::min(min_, o.min_), max_ = std::max(max_, o.max_);
  sum_ = saturating_add(sum_, o.sum_);
}

int64_t LogHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // The rank of the value asked for, 1-based: at least one value lies at or below it.
  const auto want = std::max<uint64_t>(1, static_cast<uint64_t>(q * static_cast<double>(count_) + 0.5));
  uint64_t seen = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    seen += counts_[b];
    if (seen >= want) return std::clamp(bucket_high(b), min_, max_);
  }
  return max_;
}

LogHistogram::Sparse LogHistogram::sparse() const {
  Sparse s{count_, negative_, min(), max(), sum_, {}};
  for (size_t b = 0; b < kBuckets; ++b)
    if (counts_[b]) s.buckets.emplace_back(static_cast<uint16_t>(b), counts_[b]);
  return s;
}

bool LogHistogram::from_sparse(const Sparse& s, LogHistogram& out) {
  out.counts_.fill(0);
  out.count_ = out.negative_ = 0, out.min_ = INT64_MAX, out.max_ = 0, out.sum_ = 0;
  uint64_t total = 0;
  int last = -1;
  for (const auto& [b, n] : s.buckets) {
    if (b >= kBuckets || static_cast<int>(b) <= last || n == 0 || n > s.count - total) return false;
    last = b;
    out.counts_[b] = n;
    total += n;
  }
  if (total != s.count || s.negative > s.count) return false;
  if (s.count) {
    if (s.min < 0 || s.min > s.max || s.max > kMaxValue || s.sum < 0) return false;
    if (bucket_of(s.min) != s.buckets.front().first || bucket_of(s.max) != s.buckets.back().first) return false;
    out.min_ = s.min, out.max_ = s.max;
  } else if (s.min || s.max || s.sum) {
    return false;  // an empty histogram writes zeros: anything else was not written by this class
  }
  out.count_ = s.count, out.negative_ = s.negative, out.sum_ = s.sum;
  return true;
}

}  // namespace ibroute::runner
