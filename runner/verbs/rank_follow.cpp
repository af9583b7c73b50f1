// --follow (epoch_follow.hpp): rank 0 watches the epochs directory and its ranks' signs of life,
// and orders each switch for a round every rank reaches after the order; every rank switches its
// send plan at that round. Receivers need no plan: every connection of the run stays up.
#include "rank.hpp"

namespace ibroute::runner::detail {

void Rank::follow_step(int64_t raw) {
  if (mpi_.rank() != 0) {
    // A heartbeat: rank 0 takes a rank that stays silent for dead.
    if (raw >= next_beat_) send_ctl(0, Msg{kAlive}), next_beat_ = raw + cfg_.follow.poll_ns;
    return;
  }
  // The ranks' silences, once per heartbeat period (next_beat_ is free on rank 0): not on every
  // call of the send loop, which would cost a pass over all ranks per posted transfer.
  if (raw >= next_beat_) next_beat_ = raw + cfg_.follow.poll_ns, drop_silent(raw);
  if (pending_round_ != UINT64_MAX) return;  // one switch at a time
  uint64_t want = epoch_;
  if (raw >= next_poll_) {
    next_poll_ = raw + cfg_.follow.poll_ns;
    const uint64_t k = cfg_.follow.newest ? cfg_.follow.newest() : 0;
    if (k > epoch_ && k != refused_) want = k;
  }
  if (want == epoch_ && !new_drops_) return;
  if (want == epoch_) return follow_order(want, {}, {});  // a drop: the current epoch again, not copied
  schedule::Schedule e;
  std::vector<uint64_t> guids;
  std::string why;
  if (!cfg_.follow.load(want, e, guids, why)) {
    refused_ = want;
    std::fprintf(stderr, "run: epoch %llu not followed: %s\n", static_cast<unsigned long long>(want), why.c_str());
    return;
  }
  follow_order(want, std::move(e), std::move(guids));
}

// Rank 0: a rank silent for --dead-after is dead; its host leaves the next stretch.
void Rank::drop_silent(int64_t raw) {
  for (size_t r = 1; r < heard_.size(); ++r) {
    if (dead_[r] || raw - heard_[r] <= cfg_.follow.dead_after_ns) continue;
    dead_[r] = 1;
    const auto sr = static_cast<size_t>(sched_of_[r]);
    if (!dropped_[sr]) dropped_[sr] = 1, ++dropped_count_, new_drops_ = true;
    std::fprintf(stderr, "run: rank %zu (%s) silent for %.1f s: dropped from the next stretch\n", r,
                 s_.hosts[sr].name.c_str(), static_cast<double>(raw - heard_[r]) * 1e-9);
  }
}

// Rank 0: checks that the epoch fits the run's connections, then names the dropped ranks and the
// switch round to every rank still alive. The round leaves each rank time to read the epoch.
// `raw` empty: the current epoch again (a drop), as read.
void Rank::follow_order(uint64_t epoch, schedule::Schedule raw, std::vector<uint64_t> guids) {
  const int64_t t = raw_now();
  const bool fresh = !raw.hosts.empty();
  EpochOnRun on;
  std::string why;
  if (!epoch_on_run(fresh ? raw : epoch_read(), fresh ? guids : epoch_guids_, s_, map_.port_guids, dropped_, channels_,
                    on, why)) {
    refused_ = epoch;
    new_drops_ = false;
    std::fprintf(stderr, "run: epoch %llu not followed: %s\n", static_cast<unsigned long long>(epoch), why.c_str());
    return;
  }
  const int64_t read_ns = raw_now() - t;
  const uint64_t margin = static_cast<uint64_t>((200'000'000 + 4 * read_ns) / round_ns()) + 1;
  const uint64_t round = std::max<uint64_t>(current_round_, round_by_clock()) + margin;
  const uint64_t slots = schedule::slot_starts(on.schedule).back();  // the ranks check their slices against it
  if (round >= rounds_ || round >= stop_round_) {                    // the run ends first
    new_drops_ = false;
    if (epoch != epoch_) refused_ = epoch;
    return;
  }
  for (int r = 1; r < mpi_.size(); ++r) {
    if (dead_[static_cast<size_t>(r)]) continue;
    if (new_drops_)
      for (size_t d = 0; d < n_; ++d)
        if (dropped_[d]) send_ctl(static_cast<size_t>(r), Msg{kDrop, 0, 0, static_cast<int64_t>(d)});
    Msg m;
    m.type = kEpoch;
    m.a = static_cast<int64_t>(epoch), m.b = static_cast<int64_t>(round), m.c = static_cast<int64_t>(slots);
    send_ctl(static_cast<size_t>(r), m);
  }
  new_drops_ = false;
  ordered_drops_.clear();
  for (size_t d = 0; d < n_; ++d)
    if (dropped_[d] && std::none_of(dropped_at_.begin(), dropped_at_.end(),
                                    [&](const auto& x) { return x.second == static_cast<int32_t>(d); }))
      ordered_drops_.push_back(static_cast<int32_t>(d));
  if (fresh) epoch_raw_ = std::move(raw), epoch_guids_ = std::move(guids);
  pending_ = std::move(on.schedule), pending_epoch_ = epoch, pending_round_ = round, pending_ready_ = true;
  std::fprintf(stderr, "run: epoch %llu from round %llu (%zu transfers a round left out: hosts gone or dropped)\n",
               static_cast<unsigned long long>(epoch), static_cast<unsigned long long>(round), on.outside);
}

// Ranks other than 0: reads its own part of the epoch ordered (once: the host table and its
// slice, not the whole epoch), translated onto the run's ranks.
void Rank::follow_ready() {
  if (pending_round_ == UINT64_MAX || pending_ready_) return;
  std::string why;
  const auto fail = [&] {
    std::fprintf(stderr, "ibroute: rank %d: cannot follow epoch %llu: %s\n", mpi_.rank(),
                 static_cast<unsigned long long>(pending_epoch_), why.c_str());
    pending_round_ = UINT64_MAX;
  };
  if (pending_epoch_ != epoch_) {
    OwnEpoch e;
    if (!cfg_.follow.load_own(pending_epoch_, map_.port_guids[static_cast<size_t>(me_)], e, why)) return fail();
    own_raw_ = std::move(e);
  }
  if (!own_on_run(own_raw_, map_.port_guids, dropped_, channels_, me_, pending_slots_, pending_own_, why))
    return fail();
  pending_ready_ = true;
}

// At the ordered round: the next stretch's plan, timed from where the last one ends.
void Rank::switch_stretch() {
  if (mpi_.rank() == 0) {
    const std::vector<uint64_t> p =
        planned_per_channel(cur_, channels_, static_cast<uint32_t>(pending_round_ - seg_round_));
    if (planned_acc_.empty()) planned_acc_.assign(channels_.size(), 0);
    for (size_t c = 0; c < p.size(); ++c) planned_acc_[c] += p[c];
  }
  seg_ns_ += static_cast<int64_t>(pending_round_ - seg_round_) * round_ns();
  seg_round_ = pending_round_;
  epoch_ = pending_epoch_;
  if (mpi_.rank() == 0)
    cur_ = std::move(pending_), plan_ = SendPlan(cur_, channels_, me_, slot_ns_);
  else
    plan_ = SendPlan(pending_own_, channels_, me_, slot_ns_), pending_own_ = {};
  round_slots_ = static_cast<int64_t>(plan_.slots());
  // Rank 0 may know of a death the order did not carry yet: it counts the ordered drops only.
  for (int32_t d : ordered_drops_) dropped_at_.emplace_back(static_cast<uint32_t>(stats_.epochs.size()), d);
  ordered_drops_.clear();
  stats_.epochs.push_back(
      {epoch_, seg_round_, 0, 0, 0, 0, 0, mpi_.rank() == 0 ? dropped_at_.size() : dropped_count_, round_ns()});
  pending_round_ = UINT64_MAX, pending_ready_ = false;
}

}  // namespace ibroute::runner::detail
