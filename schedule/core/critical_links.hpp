// The links that bound a packing: where each pair has one path (LMC 0), the transfers waiting to be
// packed that cross one link need at least (their number / its capacity) phases of their own, and
// on a tree whose routing loads many down-links alike (OpenSM's dfsssp over three levels) that
// link, not any rank or leaf, sets how many phases the packing appends. The phases there are (the
// shifts') leave such a link idle in a third of them; the packer fills it there first
// (docs/planner.md#critical-links). Internal to schedule/core (phase_packing.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "option_table.hpp"
#include "phase_packing.hpp"

namespace ibroute::schedule {

class CriticalLinks {
 public:
  // `bound`: the phases the ranks and leaves need at the least; a link is critical where its
  // single-route waiting transfers need within kShare of the most any link or that bound needs.
  // The lists hold at most as many entries as transfers wait (the most needed links first): a
  // fabric whose links are all loaded alike has no link that matters more than the others.
  CriticalLinks(const OptionTable& table, const std::vector<int>& cap, const std::vector<Transfer>& waiting,
                double bound, uint64_t& work);

  bool empty() const { return links_.empty(); }
  // A waiting transfer taken (-1) or back (+1), wherever it was placed.
  void count(int32_t s, int32_t d, int delta);

  // What `place` said of one transfer: not in this phase (an end busy, its leaves' up-links full or
  // its route not fitting), placed, or no longer waiting (placed by the packer's other passes).
  enum class Try { busy, placed, gone };
  // For each critical link with room in the phase (`load` below its capacity), the most needed
  // first: its waiting transfers from a place moved on every phase, at most kScan of them, offered
  // to `place` until the link is full. Returns the transfers placed.
  template <class Place>
  size_t fill(const std::vector<int>& load, size_t phase, Place place);

 private:
  static constexpr double kShare = 0.9;
  static constexpr size_t kScan = 64;  // entries of one link's list looked at per phase
  int index(int32_t l) const {
    return l >= 0 && static_cast<size_t>(l) < at_.size() ? at_[static_cast<size_t>(l)] : -1;
  }

  const OptionTable& table_;
  const std::vector<int>& cap_;
  uint64_t& work_;
  std::vector<int> at_;                          // per link: its place in links_, -1 where not critical
  std::vector<int32_t> links_;                   // the critical links
  std::vector<int> left_;                        // per critical link: its single-route transfers still waiting
  std::vector<std::vector<Transfer>> crossing_;  // per critical link: the waiting transfers that cross it
  std::vector<std::pair<double, uint32_t>> order_;
};

template <class Place>
size_t CriticalLinks::fill(const std::vector<int>& load, size_t phase, Place place) {
  order_.clear();
  for (size_t c = 0; c < links_.size(); ++c) {
    const int32_t l = links_[c];
    if (load[static_cast<size_t>(l)] < cap_[static_cast<size_t>(l)] && !crossing_[c].empty())
      order_.emplace_back(-static_cast<double>(left_[c]) / cap_[static_cast<size_t>(l)], static_cast<uint32_t>(c));
  }
  std::sort(order_.begin(), order_.end());
  size_t placed = 0;
  for (const auto& [need, c] : order_) {
    const auto l = static_cast<size_t>(links_[c]);
    std::vector<Transfer>& list = crossing_[c];
    size_t y = (phase * kScan) % list.size();
    for (size_t seen = 0; seen < kScan && !list.empty() && load[l] < cap_[l]; ++seen) {
      if (y >= list.size()) y = 0;
      ++work_;
      const Try t = place(list[y]);
      if (t == Try::busy) {
        ++y;
        continue;
      }
      placed += t == Try::placed;
      list[y] = list.back(), list.pop_back();  // placed or gone: off the list
    }
  }
  return placed;
}

}  // namespace ibroute::schedule
