// The control channel of a rank (rank 0 <-> every rank): messages, clock sync before and after,
// re-sync during the run, progress reports and lines, stop requests and orders.
#include "rank.hpp"

namespace ibroute::runner::detail {

void Rank::send_ctl(size_t k, Msg m) {
  m.from = mpi_.rank();
  hot_until_ = raw_now() + kHotNs;
  ibv_sge sge{reinterpret_cast<uint64_t>(&m), sizeof m, 0};
  ibv_send_wr wr{};
  wr.wr_id = UINT64_MAX;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(ctl_qps_[k].get(), &wr, &bad)) throw VerbsError("ibv_post_send (control) failed");
}

// Polls the control CQ once. Pings are answered at once, pongs of a re-synchronisation,
// progress reports and stop messages are taken; the rest waits in the inbox for wait_ctl.
void Rank::poll_ctl() {
  ibv_wc wc[8];
  int got = ibv_poll_cq(ctl_cq_.get(), 8, wc);
  for (int x = 0; x < got; ++x) {
    if (wc[x].status != IBV_WC_SUCCESS || wc[x].opcode != IBV_WC_RECV) continue;
    const int64_t t = now();
    size_t k = wc[x].wr_id / kCtlDepth;
    auto slot = static_cast<uint32_t>(wc[x].wr_id % kCtlDepth);
    Msg m;
    std::memcpy(&m, ctl_buf_->data + wc[x].wr_id * kCtlSlot, sizeof m);
    post_ctl_recv(k, slot);
    hot_until_ = raw_now() + kHotNs;
    if (k == 0) last_from_root_ = raw_now();
    if (k < heard_.size()) heard_[k] = raw_now();
    switch (m.type) {
      case kPing: {
        Msg pong;
        pong.type = kPong;
        pong.t = now();
        pong.a = m.t;
        send_ctl(k, pong);
        break;
      }
      case kPong:
        if (mpi_.rank() != 0) {
          resync_pong(m, t);
          break;
        }
        inbox_.emplace_back(k, m);
        break;
      case kProgress:
        if (mpi_.rank() == 0 && k < progress_.size()) {
          progress_[k] = {m.a, m.b, m.c, m.d};
          if (m.e >= 0 && static_cast<size_t>(m.e) < n_ && m.t > 0)
            skipped_to_[static_cast<size_t>(m.e)] += static_cast<uint64_t>(m.t);
        }
        break;
      case kStopAsk:
        if (mpi_.rank() == 0) order_stop(static_cast<int>(m.a));
        break;
      case kStop:
        if (m.a >= 0) stop_round_ = std::min(stop_round_, static_cast<uint64_t>(m.a));
        if (!stop_signal_) stop_signal_ = static_cast<int>(m.b);
        break;
      case kAlive:
        break;
      case kDrop:
        if (mpi_.rank() != 0 && m.a >= 0 && static_cast<size_t>(m.a) < dropped_.size() &&
            !dropped_[static_cast<size_t>(m.a)])
          dropped_[static_cast<size_t>(m.a)] = 1, ++dropped_count_;
        break;
      case kEpoch:
        if (mpi_.rank() != 0 && cfg_.follow.on && m.a > 0 && m.b >= 0 && m.c > 0)
          pending_epoch_ = static_cast<uint64_t>(m.a), pending_round_ = static_cast<uint64_t>(m.b),
          pending_slots_ = static_cast<uint64_t>(m.c), pending_ready_ = false;
        break;
      default:
        inbox_.emplace_back(k, m);
    }
  }
}

// Waits for a control message of `type` from QP k (any QP if k == SIZE_MAX) until `deadline`,
// taking data meanwhile. Other messages stay queued.
bool Rank::wait_ctl(uint32_t type, size_t k, int64_t deadline, Msg& out, size_t* from) {
  for (;;) {
    for (auto it = inbox_.begin(); it != inbox_.end(); ++it)
      if (it->second.type == type && (k == SIZE_MAX || it->first == k)) {
        out = it->second;
        if (from) *from = it->first;
        inbox_.erase(it);
        return true;
      }
    poll_ctl();
    poll_data();
    if (raw_now() > deadline) return false;
    // Spin while control traffic flows (a clock ping-pong's delay is its error); else sleep,
    // so that ranks sharing cores (tests, VMs) leave them to those with work.
    if (raw_now() < hot_until_)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Waits for a message of `type` from rank 0 for as long as rank 0 shows signs of life: gives up
// after `quiet` without any message from it (its pings and kAlive count), from now at the
// earliest. A loaded rank 0 may take long to get there; only a dead one stays silent.
bool Rank::wait_root(uint32_t type, int64_t quiet, Msg& out) {
  const int64_t start = raw_now();
  for (;;) {
    if (wait_ctl(type, 0, std::max(start, last_from_root_) + quiet, out)) return true;
    if (raw_now() >= std::max(start, last_from_root_) + quiet) return false;
  }
}

// Rank 0 measures every rank's offset; the others answer until told it is over.
std::vector<ClockEstimate> Rank::clock_sync(bool first, const std::vector<char>* alive) {
  std::vector<ClockEstimate> est(static_cast<size_t>(mpi_.size()));
  const int64_t timeout = cfg_.finish_timeout_ns;
  if (mpi_.rank() != 0) {
    if (first) {
      Msg m;
      if (!wait_root(kSyncEnd, timeout, m)) throw RunError("rank 0 never finished the clock sync");
    }
    return est;
  }
  for (int r = 1; r < mpi_.size(); ++r) {
    if (alive && !(*alive)[static_cast<size_t>(r)]) continue;
    std::vector<ClockSample> samples;
    for (int x = 0; x < cfg_.sync_samples; ++x) {
      Msg ping;
      ping.type = kPing;
      ClockSample cs;
      cs.sent = now();
      ping.t = cs.sent;
      send_ctl(static_cast<size_t>(r), ping);
      Msg pong;
      if (!wait_ctl(kPong, static_cast<size_t>(r), raw_now() + timeout / 10, pong)) break;
      cs.received = now();
      cs.remote = pong.t;
      samples.push_back(cs);
    }
    est[static_cast<size_t>(r)] = estimate_offset(samples);
    if (first) send_ctl(static_cast<size_t>(r), Msg{kSyncEnd});
  }
  return est;
}

// Ranks other than 0 measure themselves against rank 0 every resync interval: a burst of
// ping-pongs, one at a time. In these samples this rank is the one that stamps send and
// receive, so the estimate is rank 0 - me; the tracker takes me - rank 0 at rank 0's time.
void Rank::resync_step(int64_t t) {
  if (mpi_.rank() == 0 || cfg_.resync_interval_ns <= 0) return;
  if (burst_on_ && t > burst_deadline_) {  // rank 0 too busy to answer in time: try later
    burst_on_ = false, ++stats_.clock.resync_failures;
    next_resync_ = t + cfg_.resync_interval_ns;
  }
  if (burst_on_ || t < next_resync_) return;
  burst_.clear();
  burst_on_ = true;
  burst_deadline_ = t + std::max<int64_t>(cfg_.resync_interval_ns / 2, 50'000'000);
  send_ping();
}

void Rank::send_ping() {
  Msg ping;
  ping.type = kPing;
  burst_ping_ = now();
  ping.t = burst_ping_;
  send_ctl(0, ping);
}

void Rank::resync_pong(const Msg& m, int64_t t) {
  if (!burst_on_ || m.a != burst_ping_) return;  // a pong of an abandoned burst
  burst_.push_back({burst_ping_, m.t, t});
  if (burst_.size() < static_cast<size_t>(std::max(1, cfg_.resync_samples))) return send_ping();
  burst_on_ = false;
  ClockEstimate e = estimate_offset(burst_);
  ClockEstimate mine = e;
  mine.offset_ns = -e.offset_ns;          // me - rank 0
  mine.at_ns = e.at_ns - mine.offset_ns;  // on rank 0's clock
  if (tracker_.plausible(mine)) {
    tracker_.add(mine, t >= local_t0_);
    ++stats_.clock.resyncs;
  } else {
    ++stats_.clock.resync_failures;
  }
  next_resync_ = t + cfg_.resync_interval_ns;
}

// Rank 0: the run ends after round `now + margin` everywhere; the margin lets the order reach
// every rank before that round starts. "Now" is the later of rank 0's own position and the
// round the schedule has reached by the clock: rank 0 may lag its plan on a busy machine while
// the others keep time (no rank ever posts early, so none is past the clock's round).
uint64_t Rank::round_by_clock() const {
  const int64_t elapsed = now() - local_t0_ - seg_ns_;
  return seg_round_ + (elapsed > 0 ? static_cast<uint64_t>(elapsed / round_ns()) : 0);
}

void Rank::order_stop(int sig) {
  if (stop_round_ != UINT64_MAX) return;
  const uint64_t margin = static_cast<uint64_t>(200'000'000 / round_ns()) + 1;
  stop_round_ = std::max<uint64_t>(current_round_, round_by_clock()) + margin;
  stop_signal_ = sig;
  Msg m;
  m.type = kStop;
  m.a = static_cast<int64_t>(stop_round_);
  m.b = sig;
  for (int r = 1; r < mpi_.size(); ++r)
    if (dead_.empty() || !dead_[static_cast<size_t>(r)]) send_ctl(static_cast<size_t>(r), m);
  std::fprintf(stderr, "run: %s: ending after round %llu (another signal kills)\n", strsignal(sig),
               static_cast<unsigned long long>(stop_round_));
}

void Rank::stop_step() {
  const int sig = g_stop_signal;
  if (!sig || stop_asked_) return;
  stop_asked_ = true;
  if (mpi_.rank() == 0) return order_stop(sig);
  Msg m;
  m.type = kStopAsk;
  m.a = sig;
  send_ctl(0, m);
}

void Rank::progress_step(int64_t t) {
  if (cfg_.progress_interval_ns <= 0 || t < next_progress_) return;
  next_progress_ = t + cfg_.progress_interval_ns;
  int64_t bytes = 0, skipped = 0, failed = 0, done = 0;
  for (const PathCounters& p : stats_.send)
    bytes += static_cast<int64_t>(p.bytes), skipped += static_cast<int64_t>(p.skipped),
        failed += static_cast<int64_t>(p.timeout + p.failed),
        done += static_cast<int64_t>(p.ok + p.skipped + p.timeout + p.failed);
  size_t worst = 0;
  for (size_t d = 0; d < skipped_since_.size(); ++d)
    if (skipped_since_[d] > skipped_since_[worst]) worst = d;
  const int64_t worst_n = skipped_since_.empty() ? 0 : static_cast<int64_t>(skipped_since_[worst]);
  const int64_t worst_dst = skipped_since_.empty() ? -1 : stats_.dests[worst];
  std::fill(skipped_since_.begin(), skipped_since_.end(), 0);
  if (mpi_.rank() != 0) {
    Msg m;
    m.type = kProgress;
    m.t = worst_n, m.a = bytes, m.b = skipped, m.c = failed, m.d = done, m.e = worst_dst;
    send_ctl(0, m);
    return;
  }
  progress_[0] = {bytes, skipped, failed, done};
  if (worst_dst >= 0) skipped_to_[static_cast<size_t>(worst_dst)] += static_cast<uint64_t>(worst_n);
  print_progress(t);
}

// Rank 0's resident memory, sampled with each progress line: the report shows that it stays
// flat however long the run (at most ThroughputSeries::kMax samples, thinned as they come).
void Rank::sample_rss(double secs) {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  if (rss_.size() >= ThroughputSeries::kMax) {
    for (size_t k = 0; k < rss_.size() / 2; ++k) rss_[k] = rss_[2 * k + 1];
    rss_.resize(rss_.size() / 2);
  }
  rss_.emplace_back(secs, resident * (sysconf(_SC_PAGESIZE) / 1024));
}

// Rank 0 prints a moment after the ranks have reported (they report at the same ticks).
void Rank::print_progress(int64_t t) {
  int64_t bytes = 0, skipped = 0, failed = 0, done = 0;
  for (const PeerProgress& p : progress_) bytes += p.bytes, skipped += p.skipped, failed += p.failed, done += p.done;
  const double secs = static_cast<double>(t - local_t0_) * 1e-9;
  if (secs <= 0) return;
  sample_rss(secs);
  // Rate and skipped share over the last interval: what the fabric does now.
  const double dt = static_cast<double>(t - (printed_at_ ? printed_at_ : local_t0_)) * 1e-9;
  const double rate = dt > 0 ? static_cast<double>(bytes - printed_.bytes) * 8 / dt * 1e-9 /
                                   static_cast<double>(std::max<size_t>(1, n_))
                             : 0;
  const int64_t done_now = done - printed_.done, skipped_now = skipped - printed_.skipped;
  printed_ = {bytes, skipped, failed, done}, printed_at_ = t;
  std::vector<std::pair<uint64_t, size_t>> worst;
  for (size_t r = 0; r < skipped_to_.size(); ++r)
    if (skipped_to_[r]) worst.emplace_back(skipped_to_[r], r);
  std::sort(worst.rbegin(), worst.rend());
  std::string w;
  for (size_t i = 0; i < worst.size() && i < 3; ++i)
    w += (i ? ", " : "; most skipped towards ") + s_.hosts[worst[i].second].name + " (" +
         std::to_string(worst[i].first) + ")";
  std::fprintf(stderr,
               "run: %.0f s, round %llu of %u, %.3f Gb/s per node, skipped %.3f %% (%.3f %% in all), failed %lld%s\n",
               secs, static_cast<unsigned long long>(current_round_ + 1), rounds_, rate,
               done_now > 0 ? 100.0 * static_cast<double>(skipped_now) / static_cast<double>(done_now) : 0.0,
               done ? 100.0 * static_cast<double>(skipped) / static_cast<double>(done) : 0.0,
               static_cast<long long>(failed), w.c_str());
}

// Everything a rank does while it waits: completions, control messages, its clock, progress.
void Rank::service() {
  poll_data();
  poll_ctl();
  const int64_t t = now();
  resync_step(t);
  progress_step(t);
  stop_step();
  if (cfg_.follow.on) follow_step(raw_now());
}

}  // namespace ibroute::runner::detail
