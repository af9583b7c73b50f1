// The phase solver's repair: overloaded links lowered level by level (ejection chains, the walk).
#include <algorithm>
#include <climits>

#include "phase_solver.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

int PhaseSolver::repair(const std::vector<size_t>& todo, int floor_level) {
  int worst = INT32_MIN;
  for (int32_t l : touched_) worst = std::max(worst, over_[l]);
  if (worst <= floor_level) return worst;
  track_users_ = users_listed_ = true;  // the ejection chains and the hot sets need to know who is on a link
  for (size_t i : todo)
    if (choice_[i] != kNone) {
      users_[t_.src_link(i)].push_back(static_cast<uint32_t>(i));
      const int32_t* ls = links(choice_[i]);
      for (uint16_t x = 0; x < opt(choice_[i]).len; ++x) users_[ls[x]].push_back(static_cast<uint32_t>(i));
    }
  if (stamp_.size() < n_) stamp_.assign(n_, 0);
  ++repairs_tried_;
  int reached = floor_level;
  for (int level = worst - 1; level >= floor_level; --level) {
    // Where readmit follows, the last level by moves alone: the augmenting paths then do what the
    // ejection chains and the walk would there, for less (a 3 456-host minhop tree in phases of 7
    // slots: 24 469 slots in 4.4 s, with them 24 458 in 8.3 s).
    const bool by_readmit = readmit_follows_ && level == floor_level;
    chains_on_ = !by_readmit;
    if (!lower_to(level) && (!walk_on_ || by_readmit || !walk(level))) {
      reached = level + 1;
      break;
    }
  }
  chains_on_ = true;
  repairs_lowered_ += reached < worst;
  return reached;
}

void PhaseSolver::defer_over(Phase& ph, const std::vector<size_t>& ts, size_t rotate, std::vector<Transfer>& deferred) {
  track_users_ = users_listed_ && readmit_on_;  // readmit, which follows, moves transfers along who is on a link
  auto defer = [&](size_t i) {
    if (choice_[i] == kNone || current_overflow(i) <= 0) return;
    move(i, kNone);
    deferred.push_back({static_cast<int32_t>(i), ph.dst[i]});
    ph.dst[i] = -1;
  };
  if (!sent_waits_) {
    for (size_t x = 0; x < ts.size(); ++x) defer(ts[(x + rotate) % ts.size()]);
    return;
  }
  over_order_.clear();
  for (size_t x = 0; x < ts.size(); ++x) {
    const size_t i = ts[(x + rotate) % ts.size()];
    if (choice_[i] == kNone || current_overflow(i) <= 0) continue;
    const auto d = static_cast<size_t>(ph.dst[i]);
    const uint64_t waited = std::max(((*sent_waits_)[i] + 1) * pace(i), ((*received_waits_)[d] + 1) * pace(d));
    over_order_.emplace_back(waited << 32 | x, i);
  }
  std::sort(over_order_.begin(), over_order_.end());
  const size_t from = deferred.size();
  for (const auto& [key, i] : over_order_) defer(i);
  std::reverse(deferred.begin() + static_cast<std::ptrdiff_t>(from), deferred.end());  // readmit: who waited most first
}

void PhaseSolver::hot_above(int level, std::vector<size_t>& hot) {
  hot.clear();
  if (++epoch_ == 0) std::fill(stamp_.begin(), stamp_.end(), 0), epoch_ = 1;
  for (int32_t l : touched_)
    if (over_[l] > level)
      for (uint32_t u : users_[l])
        if (stamp_[u] != epoch_) stamp_[u] = epoch_, hot.push_back(u);
  std::sort(hot.begin(), hot.end());  // rank order: the result does not depend on link numbering
}

bool PhaseSolver::lower_to(int level) {
  level_ = level;
  std::vector<size_t> hot;
  hot_above(level, hot);
  // Ejection chains cost search: a budget in proportion to the transfers to be moved, enough
  // for the two-level trees (where chains are short) and bounded where the level is out of reach.
  phase_budget_ = 8 * static_cast<long>(hot.size()) + 4000;
  size_t best_hot = SIZE_MAX;
  int stale = 0;
  for (int round = 0; round < rounds_; ++round) {
    if (round > 0) hot_above(level, hot);
    if (hot.empty()) return true;
    // Stop when three rounds in a row take fewer than 1 % off the transfers above the level
    // (at least one): the level is out of reach, and creeping towards it costs whole rounds.
    if (hot.size() + std::max<size_t>(1, best_hot / 100) <= best_hot || best_hot == SIZE_MAX)
      best_hot = hot.size(), stale = 0;
    else if (++stale >= 3)
      return false;
    bool improved = false;
    for (size_t i : hot) {
      int cur = current_overflow(i);
      if (cur <= level) continue;
      auto [a, b] = range_[i];
      uint32_t best = kNone;
      int best_over = cur;
      for (uint32_t k = a; k < b; ++k) {
        if (k == choice_[i]) continue;
        int over = overflow_if(i, k);
        if (over < best_over) best = k, best_over = over;
      }
      if (best != kNone && best_over <= level) {
        move(i, best);
        improved = true;
        continue;
      }
      if (chains_on_ && eject_for(i)) {
        improved = true;
        continue;
      }
      if (best != kNone) {  // not below the level, but better than where it is
        move(i, best);
        improved = true;
      }
    }
    if (!improved) return false;
  }
  hot_above(level, hot);
  return hot.empty();
}

bool PhaseSolver::relocate(uint32_t u, int32_t avoid, int depth) {
  if (--budget_ < 0) return false;
  const size_t start = log_.size();
  logged_move(u, kNone);  // off the fabric while it looks: its own slots count as free
  auto [a, b] = range_[u];
  for (uint32_t k = a; k < b; ++k) {
    if (avoid >= 0 && on_path(k, avoid)) continue;
    int nblock = 0;
    int32_t block = -1;
    int over = overflow_if(u, k, &nblock, &block);
    if (over <= level_) {
      logged_move(u, k);
      return true;
    }
    if (depth == 0 || over != level_ + 1 || nblock != 1) continue;
    in_chain_.push_back(u);
    std::vector<uint32_t> on = users_[block];
    bool done = false;
    for (uint32_t w : on) {
      if (std::find(in_chain_.begin(), in_chain_.end(), w) != in_chain_.end() || choice_[w] == kNone) continue;
      size_t mark = log_.size();
      if (relocate(w, block, depth - 1) && overflow_if(u, k) <= level_) {
        logged_move(u, k);
        done = true;
        break;
      }
      rollback(mark);
    }
    in_chain_.pop_back();
    if (done) return true;
  }
  rollback(start);  // back where it was
  return false;
}

int PhaseSolver::excess_change(size_t i, uint32_t k) const {
  const uint32_t c = choice_[i];
  int delta = 0;
  const int32_t* ls = links(c);
  for (uint16_t x = 0; x < opt(c).len; ++x)
    if (!on_path(k, ls[x]))
      delta += std::max(0, over_[ls[x]] - weight_[ls[x]] - level_) - std::max(0, over_[ls[x]] - level_);
  ls = links(k);
  for (uint16_t x = 0; x < opt(k).len; ++x)
    if (!on_path(c, ls[x]))
      delta += std::max(0, over_[ls[x]] + weight_[ls[x]] - level_) - std::max(0, over_[ls[x]] - level_);
  return delta;
}

bool PhaseSolver::walk(int level) {
  level_ = level;
  // The links above the level: listed once each (listed_), those no longer above dropped when drawn.
  std::vector<int32_t>& over = over_list_;
  over.clear();
  if (listed_.size() < over_.size()) listed_.assign(over_.size(), 0);
  long excess = 0;
  for (int32_t l : touched_)
    if (over_[l] > level) over.push_back(l), listed_[l] = 1, excess += over_[l] - level;
  uint64_t rng = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(level + 1) * 0xbf58476d1ce4e5b9ull;
  auto draw = [&](size_t bound) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return static_cast<size_t>(rng % bound);
  };
  // At most 40 steps per link above the level, and 8 per such link (at least 100) since the
  // excess last fell: a level out of reach (hundreds of links above it) is given up soon.
  const long steps = 40 * static_cast<long>(over.size()) + 200, patience = 8 * static_cast<long>(over.size()) + 100;
  long lowest = excess, since = 0;
  for (long step = 0; step < steps && since < patience && !over.empty(); ++step, ++since) {
    const size_t at = draw(over.size());
    const int32_t l = over[at];
    if (over_[l] <= level) {
      listed_[l] = 0, over[at] = over.back(), over.pop_back();
      continue;
    }
    const std::vector<uint32_t>& on = users_[l];
    const size_t i = on[draw(on.size())];
    auto [a, b] = range_[i];
    uint32_t best = kNone;
    int best_delta = 1;
    for (uint32_t k = a; k < b; ++k) {
      if (k == choice_[i] || overflow_if(i, k) > level + 1) continue;
      const int d = excess_change(i, k);
      if (d < best_delta) best = k, best_delta = d;
    }
    if (best == kNone) continue;
    move(i, best);
    const int32_t* ls = links(best);
    for (uint16_t x = 0; x < opt(best).len; ++x)
      if (over_[ls[x]] > level && !listed_[ls[x]]) listed_[ls[x]] = 1, over.push_back(ls[x]);
    if ((excess += best_delta) < lowest) lowest = excess, since = 0;
  }
  bool reached = true;
  for (int32_t l : over) reached &= over_[l] <= level, listed_[l] = 0;
  return reached;
}

bool PhaseSolver::eject_for(size_t i) {
  // Leave the most overloaded link of i's route.
  int32_t hot = -1;
  int worst = INT32_MIN;
  const int32_t* ls = links(choice_[i]);
  for (uint16_t x = 0; x < opt(choice_[i]).len; ++x)
    if (over_[ls[x]] > worst) worst = over_[ls[x]], hot = ls[x];
  log_.clear();
  in_chain_.clear();
  if (phase_budget_ <= 0) return false;
  budget_ = std::min<long>(2000, phase_budget_);
  long before = budget_;
  bool ok = relocate(static_cast<uint32_t>(i), hot, 8);
  phase_budget_ -= before - std::max<long>(budget_, 0);
  return ok;
}

void PhaseSolver::logged_move(uint32_t u, uint32_t k) {
  log_.push_back({u, choice_[u]});
  move(u, k);
}

void PhaseSolver::rollback(size_t mark) {
  while (log_.size() > mark) {
    auto [u, old] = log_.back();
    log_.pop_back();
    move(u, old);
  }
}

}  // namespace ibroute::schedule
