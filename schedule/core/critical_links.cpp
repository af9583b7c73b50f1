#include "critical_links.hpp"

#include <algorithm>

namespace ibroute::schedule {

CriticalLinks::CriticalLinks(const OptionTable& table, const std::vector<int>& cap,
                             const std::vector<Transfer>& waiting, double bound, uint64_t& work)
    : table_(table), cap_(cap), work_(work), at_(cap.size(), -1) {
  // Per link, the waiting transfers whose one route crosses it (over 2^LMC LIDs a transfer has
  // others, and the packer's choice of route spreads it).
  std::vector<int> left(cap.size(), 0);
  for (const Transfer& t : waiting) {
    const auto [a, b] = table.range(static_cast<size_t>(t.src), static_cast<size_t>(t.dst));
    if (b - a != 1) continue;
    const int32_t* ls = table.links(a);
    for (uint16_t y = 0; y < table.opt(a).len; ++y) ++left[static_cast<size_t>(ls[y])];
    work_ += 1 + table.opt(a).len;
  }
  std::vector<std::pair<double, int32_t>> need;
  for (size_t l = 0; l < cap.size(); ++l)
    if (cap[l] > 0 && left[l] > 0) need.emplace_back(static_cast<double>(left[l]) / cap[l], static_cast<int32_t>(l));
  std::sort(need.begin(), need.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  const double most = std::max(bound, need.empty() ? 0.0 : need.front().first);
  size_t entries = 0;
  for (const auto& [n, l] : need) {
    const auto count = static_cast<size_t>(left[static_cast<size_t>(l)]);
    if (n < kShare * most || entries + count > waiting.size()) break;
    at_[static_cast<size_t>(l)] = static_cast<int>(links_.size());
    links_.push_back(l), left_.push_back(static_cast<int>(count));
    entries += count;
  }
  crossing_.resize(links_.size());
  if (links_.empty()) return;
  for (const Transfer& t : waiting) {
    const auto [a, b] = table.range(static_cast<size_t>(t.src), static_cast<size_t>(t.dst));
    if (b - a != 1) continue;
    const int32_t* ls = table.links(a);
    for (uint16_t y = 0; y < table.opt(a).len; ++y)
      if (const int c = index(ls[y]); c >= 0) crossing_[static_cast<size_t>(c)].push_back(t);
  }
}

void CriticalLinks::count(int32_t s, int32_t d, int delta) {
  if (links_.empty()) return;
  const auto [a, b] = table_.range(static_cast<size_t>(s), static_cast<size_t>(d));
  if (b - a != 1) return;
  const int32_t* ls = table_.links(a);
  for (uint16_t y = 0; y < table_.opt(a).len; ++y)
    if (const int c = index(ls[y]); c >= 0) left_[static_cast<size_t>(c)] += delta;
}

}  // namespace ibroute::schedule
