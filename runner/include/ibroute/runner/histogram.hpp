// A distribution of durations in fixed memory: log-linear buckets (8 per power of two, so a
// quantile is off by at most 1/8 of its value), as HDR histograms do. Debian 12 packages no C or
// C++ histogram library (HdrHistogram only for Java and Go), and this one is 2.5 KiB, merges by
// adding and serialises sparsely: runs of hours keep one per destination per rank.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibroute::runner {

class LogHistogram {
 public:
  static constexpr int kSubBits = 3;                      // 8 buckets per power of two
  static constexpr int64_t kMaxValue = int64_t{1} << 42;  // ~73 min in ns; larger values clamp
  static constexpr size_t kBuckets = (42 - kSubBits + 1) * (size_t{1} << kSubBits);

  // Negative values count as 0 (and are counted apart), values above kMaxValue as kMaxValue.
  void add(int64_t v, uint64_t times = 1);
  void merge(const LogHistogram& o);
  uint64_t count() const { return count_; }
  uint64_t negative() const { return negative_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  // The value below which a share q (0..1) of the values lie: the upper end of its bucket,
  // never above the largest value seen.
  int64_t quantile(double q) const;

  static size_t bucket_of(int64_t v);
  static int64_t bucket_low(size_t b);
  static int64_t bucket_high(size_t b);  // inclusive

  // Sparse form: the non-empty buckets. `from_sparse` refuses (returns false) what this class
  // could not have written: a bucket out of range or repeated, counts that do not add up.
  struct Sparse {
    uint64_t count = 0, negative = 0;
    int64_t min = 0, max = 0, sum = 0;
    std::vector<std::pair<uint16_t, uint64_t>> buckets;
  };
  Sparse sparse() const;
  // The non-empty buckets in order, without building a Sparse (encoding thousands per message).
  template <class F>
  void for_each_bucket(F&& f) const {
    if (count_ == 0) return;
    for (size_t b = bucket_of(min_), last = bucket_of(max_); b <= last; ++b)
      if (counts_[b]) f(static_cast<uint16_t>(b), counts_[b]);
  }
  uint16_t buckets_used() const {
    uint16_t n = 0;
    for_each_bucket([&](uint16_t, uint64_t) { ++n; });
    return n;
  }
  int64_t sum() const { return sum_; }
  static bool from_sparse(const Sparse& s, LogHistogram& out);

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0, negative_ = 0;
  int64_t min_ = INT64_MAX, max_ = 0;
  int64_t sum_ = 0;  // saturating
};

}  // namespace ibroute::runner
