// The phase solver's readmission: transfers that wait brought back along augmenting paths.
#include <algorithm>

#include "phase_solver.hpp"

namespace ibroute::schedule {

int PhaseSolver::full_links(size_t i, uint32_t k, int32_t& last) const {
  int count = 0;
  auto check = [&](int32_t l, bool shared) {
    if (over_[l] + (shared ? 0 : weight_[l]) > 0) ++count, last = l;
  };
  const bool off = choice_[i] == kNone;
  if (off) check(t_.src_link(i), false);
  const int32_t* ls = links(k);
  for (uint16_t x = 0; x < opt(k).len; ++x) check(ls[x], !off && on_path(choice_[i], ls[x]));
  return count;
}

void PhaseSolver::readmit(Phase& ph, std::vector<Transfer>& deferred, size_t from) {
  if (reach_.size() < over_.size()) reach_.assign(over_.size(), Reach{}), dead_.assign(over_.size(), 0);
  if (++dead_epoch_ == 0) std::fill(dead_.begin(), dead_.end(), 0), dead_epoch_ = 1;
  // The searches' options looked at, per phase at most kSteps per sender: each search is linear
  // in the full links, and dead links keep failures short, but a phase where every search
  // succeeds far away could otherwise take as many full searches as transfers wait.
  constexpr long kSteps = 256;
  readmit_budget_ = kSteps * static_cast<long>(n_);
  size_t kept = from;
  for (size_t x = from; x < deferred.size(); ++x) {
    const Transfer w = deferred[x];
    const auto t = static_cast<uint32_t>(w.src);
    ph.dst[t] = w.dst;  // its options are those gathered for the phase
    if (readmit_budget_ > 0 && augment(t)) continue;
    ph.dst[t] = -1;
    deferred[kept++] = w;
  }
  deferred.resize(kept);
}

bool PhaseSolver::augment(uint32_t t) {
  if (++search_ == 0) {
    for (Reach& r : reach_) r.stamp = 0;
    search_ = 1;
  }
  queue_.clear();
  // The path's end: the transfer (and option) that moves onto a link with room, or t itself.
  auto apply = [&](int32_t l, uint32_t last_mover, uint32_t last_option) {
    // From the end back to t: each mover takes its option, freeing the link the one before needs.
    const size_t mark = log_.size();
    uint32_t u = last_mover, k = last_option;
    for (;;) {
      int32_t block = -1;
      if (full_links(u, k, block) > 0) return rollback(mark), false;
      logged_move(u, k);
      if (l < 0) break;
      u = reach_[l].mover, k = reach_[l].option, l = reach_[l].prev;
    }
    log_.resize(mark);
    return true;
  };
  const auto [a, b] = range_[t];
  for (uint32_t k = a; k < b; ++k) {  // t's own options: placed where one has room
    int32_t block = -1;
    const int n = full_links(t, k, block);
    if (n == 0) return apply(-1, t, k);
    if (n == 1 && dead_[block] != dead_epoch_ && reach_[block].stamp != search_)
      reach_[block] = {search_, t, k, -1}, queue_.push_back(block);
  }
  for (size_t head = 0; head < queue_.size(); ++head) {
    if (readmit_budget_ <= 0) return false;  // cut short: nothing learned about its links
    const int32_t l = queue_[head];
    for (uint32_t u : users_[l]) {
      const auto [ua, ub] = range_[u];
      readmit_budget_ -= ub - ua;
      for (uint32_t k = ua; k < ub; ++k) {
        if (k == choice_[u] || on_path(k, l)) continue;
        int32_t block = -1;
        const int n = full_links(u, k, block);
        if (n == 0 && apply(l, u, k)) return true;
        if (n == 1 && dead_[block] != dead_epoch_ && reach_[block].stamp != search_)
          reach_[block] = {search_, u, k, l}, queue_.push_back(block);
      }
    }
  }
  for (int32_t l : queue_) dead_[l] = dead_epoch_;
  return false;
}

}  // namespace ibroute::schedule
