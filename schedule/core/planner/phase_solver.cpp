// The phase solver's start (the routing's choice, the composition's, the greedy) and its finish.
#include "phase_solver.hpp"

#include <algorithm>
#include <climits>

namespace ibroute::schedule {

using namespace ibroute::fabric;

SolveResult PhaseSolver::solve(Phase& ph, Method method, size_t& unroutable, int target,
                               std::vector<Transfer>* deferred, size_t rotate) {
  choice_.assign(n_, kNone);
  range_.resize(n_);
  std::vector<size_t>& todo = todo_;  // kept from phase to phase: no reallocation as it grows
  todo.clear();
  // The routing's own choice alone, where it has been fitting: after kBaseMisses phases in a row
  // where it did not (a routing that congests every phase), it is no longer tried on its own. The
  // choice is the same either way (the full solve starts from it); only the time differs.
  if (method == Method::free && !deferred && base_misses_ < kBaseMisses) {
    if (base_fits(ph, target, todo, unroutable)) {
      base_misses_ = 0;
      return finish(ph);
    }
    ++base_misses_;
  }
  gather(ph, todo, unroutable);
  if (composed_fits(ph, todo)) return finish(ph);
  if (method == Method::structure) colour_by_spine(ph, todo, target);
  // Greedy for the rest: fewest options first, least-loaded option.
  const std::vector<size_t>& rest = fewest_options_first(todo);
  if (method == Method::free)
    start_from_better_of_base(rest);
  else
    for (size_t i : rest) place(i, best_option(i).first);
  readmit_follows_ = deferred != nullptr && readmit_on_;
  if (repair_on_) repair(todo, target - 1);
  if (deferred) {
    const size_t from = deferred->size();
    defer_over(ph, todo, rotate, *deferred);
    if (readmit_follows_ && users_listed_) readmit(ph, *deferred, from);
  }
  return finish(ph);
}

const std::vector<size_t>& PhaseSolver::fewest_options_first(const std::vector<size_t>& todo) {
  uint32_t most = 0;
  for (size_t i : todo)
    if (choice_[i] == kNone) most = std::max(most, range_[i].second - range_[i].first);
  bucket_.assign(most + 2, 0);
  for (size_t i : todo)
    if (choice_[i] == kNone) ++bucket_[range_[i].second - range_[i].first + 1];
  for (size_t c = 1; c < bucket_.size(); ++c) bucket_[c] += bucket_[c - 1];
  rest_.resize(bucket_.back());
  for (size_t i : todo)
    if (choice_[i] == kNone) rest_[bucket_[range_[i].second - range_[i].first]++] = i;
  return rest_;
}

SolveResult PhaseSolver::finish(Phase& ph) {
  for (size_t i = 0; i < n_; ++i) {
    if (ph.dst[i] < 0) continue;
    if (choice_[i] != kNone)
      ph.dlid[i] = opt(choice_[i]).dlid;
    else
      ph.dlid[i] = base_lid(ph.dst[i]);  // no working route: the base LID, counted as unroutable
  }
  SolveResult r;
  // One pass over the phase's links (tens of thousands at 10 000 hosts): their loads read, then
  // reset; a division only where a link is slower than a host link or not at the host rate.
  for (int32_t l : touched_) {
    const int w = weight_[l], used = over_[l] + cap_[l];
    const int load = w == 1 ? used : used / w;
    if (load > 0) r.time = std::max(r.time, ctx_.load_time(l, load));
    r.overflow = std::max(r.overflow, load - ctx_.capacity[l]);  // against the fabric's bound
    over_[l] = -cap_[l], seen_[l] = 0;
  }
  if (users_listed_)  // the repair listed who is on each link
    for (int32_t l : touched_) users_[l].clear();
  touched_.clear();
  track_users_ = users_listed_ = false;
  return r;
}

void PhaseSolver::gather(const Phase& ph, std::vector<size_t>& todo, size_t& unroutable, bool first_only) {
  opts_.clear(), links_.clear();
  constexpr size_t kRange = 48, kOptions = 24, kLinks = 12;
  auto at = [&](size_t i) {
    auto r = t_.range(i, static_cast<size_t>(ph.dst[i]));
    if (first_only) r.second = std::min(r.second, r.first + 1);
    return r;
  };
  for (size_t i = 0; i < n_; ++i) {
    if (i + kRange < n_ && ph.dst[i + kRange] >= 0)
      t_.prefetch_range(i + kRange, static_cast<size_t>(ph.dst[i + kRange]));
    if (i + kOptions < n_ && ph.dst[i + kOptions] >= 0) t_.prefetch_options(at(i + kOptions).first);
    if (i + kLinks < n_ && ph.dst[i + kLinks] >= 0) {
      auto [a, b] = at(i + kLinks);
      t_.prefetch_links(a, b);
    }
    if (ph.dst[i] < 0) continue;
    auto [a, b] = at(i);
    if (a == b) {
      ++unroutable;
      range_[i] = {0, 0};
      continue;
    }
    // A cell's options and their links lie together in the table: two block copies, the
    // options' offsets then moved to the copy's.
    const auto first = static_cast<uint32_t>(opts_.size());
    const auto [lb, le] = t_.cell_links(a, b);
    const uint32_t base = static_cast<uint32_t>(links_.size()) - lb;  // modulo 2^32: adds back to the copy's offsets
    opts_.insert(opts_.end(), &t_.opt(a), &t_.opt(a) + (b - a));
    for (size_t k = first; k < opts_.size(); ++k) opts_[k].begin += base;
    links_.insert(links_.end(), t_.links(a), t_.links(a) + (le - lb));
    range_[i] = {first, static_cast<uint32_t>(opts_.size())};
    if (!visit_) todo.push_back(i);
  }
  if (visit_)  // copied in rank order (the table's rows in turn), visited in the ring's
    for (int32_t i : *visit_)
      if (ph.dst[static_cast<size_t>(i)] >= 0 &&
          range_[static_cast<size_t>(i)].second > range_[static_cast<size_t>(i)].first)
        todo.push_back(static_cast<size_t>(i));
}

bool PhaseSolver::base_fits(const Phase& ph, int target, std::vector<size_t>& todo, size_t& unroutable) {
  size_t none = 0;
  gather(ph, todo, none, true);
  for (size_t i : todo) place(i, range_[i].first);
  int worst = INT32_MIN;
  for (int32_t l : touched_) worst = std::max(worst, over_[l]);
  if (worst <= 0 && worst <= target - 1) {  // as start_from_better_of_base keeps it and repair leaves it
    unroutable += none;
    return true;
  }
  for (int32_t l : touched_) over_[l] = -cap_[l], seen_[l] = 0;
  touched_.clear();
  for (size_t i : todo) choice_[i] = kNone;
  todo.clear();
  return false;
}

bool PhaseSolver::composed_fits(const Phase& ph, const std::vector<size_t>& todo) {
  if (std::none_of(ph.dlid.begin(), ph.dlid.end(), [](uint16_t d) { return d != 0; })) return false;
  bool all = true;
  for (size_t i : todo) {
    uint32_t k = range_[i].first;
    while (k < range_[i].second && opt(k).dlid != ph.dlid[i]) ++k;
    if (k == range_[i].second) {
      all = false;
      break;
    }
    place(i, k);
  }
  int worst = INT32_MIN;
  for (int32_t l : touched_) worst = std::max(worst, over_[l]);
  if (all && worst <= 0) return true;
  clear(todo);
  return false;
}

std::pair<int, size_t> PhaseSolver::overflow_of(const std::vector<size_t>& ts) const {
  int worst = 0;
  size_t hot = 0;
  for (size_t i : ts) {
    int o = current_overflow(i);
    worst = std::max(worst, o);
    hot += o > 0;
  }
  return {worst, hot};
}

void PhaseSolver::start_from_better_of_base(const std::vector<size_t>& ts) {
  if (greedy_only_) {
    for (size_t i : ts) place(i, best_option(i).first);
    return;
  }
  for (size_t i : ts) place(i, range_[i].first);  // the lowest DLID with a route
  auto base = overflow_of(ts);
  if (base.first <= 0) return;
  ++compared_;
  clear(ts);
  for (size_t i : ts) place(i, best_option(i).first);
  if (overflow_of(ts) < base) {
    ++greedy_won_;
    return;
  }
  clear(ts);
  for (size_t i : ts) place(i, range_[i].first);
}

void PhaseSolver::clear(const std::vector<size_t>& ts) {
  for (int32_t l : touched_) over_[l] = -cap_[l];
  for (size_t i : ts) choice_[i] = kNone;
}

}  // namespace ibroute::schedule
