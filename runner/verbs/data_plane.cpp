// ibroute run's data plane: run_schedule starts a rank (rank.hpp) under the stop handlers; the run
// itself — clock sync, timed sends, the rate search's steps — and its end are here.
#include "data_plane.hpp"

#include <csignal>

#include "rank.hpp"

namespace ibroute::runner {

using namespace verbs;

const char* wc_status_name(int status) {
  if (status < 0) return "not posted";
  return ibv_wc_status_str(static_cast<ibv_wc_status>(status));
}

namespace detail {

RunOutcome Rank::run() {
  setup_local();  // errors agreed on inside
  exchange_and_connect();
  RunOutcome out;
  out.root = mpi_.rank() == 0;
  out.schedule_rank = sched_of_;
  out.device = port_.device_name;
  out.ethernet = port_.address.ethernet;
  std::vector<ClockEstimate> before = clock_sync(true);
  // t0 on rank 0's clock, and rank 0's measurement of every rank: each starts its clock model
  // from it and keeps it current during the run.
  std::vector<Offset> offsets(static_cast<size_t>(mpi_.size()));
  int64_t t0 = 0;
  if (mpi_.rank() == 0) {
    for (int r = 1; r < mpi_.size(); ++r) {
      const ClockEstimate& e = before[static_cast<size_t>(r)];
      offsets[static_cast<size_t>(r)] = {e.offset_ns, e.at_ns, e.uncertainty_ns};
    }
    t0 = now() + cfg_.start_delay_ns;
  }
  mpi_.broadcast(offsets.data(), offsets.size() * sizeof(Offset));
  mpi_.broadcast(&t0, sizeof t0);
  const Offset& mine = offsets[static_cast<size_t>(mpi_.rank())];
  ClockEstimate first;
  first.offset_ns = mine.offset_ns, first.at_ns = mpi_.rank() == 0 ? t0 : mine.at_ns,
  first.uncertainty_ns = mine.uncertainty_ns;
  first.samples = 1;
  tracker_.add(first);
  out.t0_ns = t0;
  t0_ = t0;
  RateSearch search(cfg_.rate_at(cfg_.slot_ns), cfg_.max_skipped_share, cfg_.find_rate_steps, cfg_.find_rate_step_ns,
                    static_cast<size_t>(round_slots()));
  for (;;) {
    timed_sends();
    out.rounds_run = rounds_run_;
    out.stop_signal = stop_signal_;
    out.rss_kib = rss_;
    out.slot_ns = slot_ns_;
    if (mpi_.rank() == 0)
      finish_root(out, before);
    else
      finish_peer();
    if (!cfg_.find_rate) break;
    // Rank 0 judges the step and picks the next rate; every rank takes its order.
    StepOrder order;
    if (mpi_.rank() == 0) {
      const RateStep st = measure_step(*out.merged, cfg_.rate_at(slot_ns_), rounds_run_, n_);
      const bool usable = out.missing.empty() && !stop_signal_ && open_ == 0;
      std::fprintf(stderr, "run: rate %.4g B/s per node: skipped %.4f %%, %.3f Gb/s per node\n", st.rate,
                   100 * st.skipped_share, st.gbps_per_node);
      const bool held = search.record(st, std::move(out.merged));
      if (held) out.best_step = search.steps().size() - 1;
      double next = usable ? search.next() : 0;
      if (next > 0) {
        order.go = 1;
        order.slot_ns = cfg_.slot_at(next);
        order.rounds = search.rounds_for(order.slot_ns);
        order.t0 = now() + cfg_.start_delay_ns;
      }
    }
    mpi_.broadcast(&order, sizeof order);
    if (!order.go) break;
    if (open_ != 0) throw RunError("transfers of the last step never completed: cannot start the next", true);
    slot_ns_ = order.slot_ns, rounds_ = order.rounds, t0_ = order.t0;
    init_step();
  }
  if (cfg_.find_rate && mpi_.rank() == 0) {
    out.steps = search.steps();
    out.merged = search.take_best();
    if (out.merged) {
      const RateStep& b = out.steps[out.best_step];
      out.slot_ns = cfg_.slot_at(b.rate);
      out.rounds_run = b.rounds;
    }
  }
  return out;
}

uint64_t Rank::arrived_total() const {
  uint64_t n = 0;
  for (uint64_t a : stats_.arrived) n += a;
  return n;
}

void Rank::finish_peer() {
  Msg done;
  done.type = kDone;
  done.a = static_cast<int64_t>(open_);
  send_ctl(0, done);
  Msg fin;
  if (!wait_root(kFinish, 2 * cfg_.finish_timeout_ns, fin))
    throw RunError("rank 0 did not finish the run (did it die?)");
  close_trace();
  mpi_.send(0, encode(stats_));
  if (fin.a > 0) mpi_.abandon();  // a rank died: MPI_Finalize would wait for it
}

// Each rank's clock as measured before and (if it answered) after the run, with its drift; a rate
// search's steps keep the last measurement of each rank.
void Rank::record_clocks(RunOutcome& out, const std::vector<ClockEstimate>& before,
                         const std::vector<ClockEstimate>& after, const std::vector<char>& alive) const {
  out.clocks.clear();
  for (size_t r = 1; r < alive.size(); ++r) {
    if (before[r].samples == 0) continue;
    ClockModel model = fit_clock(before[r], alive[r] && after[r].samples ? &after[r] : nullptr);
    RankClock rc;
    rc.rank = sched_of_[r];
    rc.before = before[r];
    rc.after = after[r];
    rc.measured_after = alive[r] && after[r].samples > 0;
    rc.drift_ppm = model.drift * 1e6;
    out.clocks.push_back(rc);
  }
}

void Rank::finish_root(RunOutcome& out, const std::vector<ClockEstimate>& before) {
  const auto size = static_cast<size_t>(mpi_.size());
  std::vector<char> alive(size, 0), waited(size, 0);
  alive[0] = 1;
  size_t waiting = 0;
  // A following run does not wait for the ranks it dropped as dead (one that does report is taken).
  for (size_t r = 1; r < size; ++r)
    if (dead_.empty() || !dead_[r]) waited[r] = 1, ++waiting;
  const int64_t deadline = raw_now() + cfg_.finish_timeout_ns;
  // Ranks that are done hear from rank 0 every so often while it waits for the others, so that
  // they wait on (wait_root) however long it takes to name the missing.
  const int64_t beat = std::max<int64_t>(cfg_.finish_timeout_ns / 4, 1);
  int64_t next_beat = raw_now() + beat;
  while (waiting > 0) {
    Msg m;
    size_t from = 0;
    if (wait_ctl(kDone, SIZE_MAX, std::min(deadline, next_beat), m, &from)) {
      if (!alive[from]) alive[from] = 1, waiting -= waited[from];
      continue;
    }
    if (raw_now() > deadline) break;
    next_beat = raw_now() + beat;
    for (size_t r = 1; r < size; ++r)
      if (alive[r]) send_ctl(r, Msg{kAlive});
  }
  std::vector<ClockEstimate> after = clock_sync(false, &alive);
  Msg fin;
  fin.type = kFinish;
  size_t silent = 0;
  for (size_t r = 1; r < size; ++r) silent += !alive[r];
  fin.a = static_cast<int64_t>(silent);
  for (size_t r = 1; r < size; ++r)
    if (alive[r]) send_ctl(r, fin);
  close_trace();
  record_clocks(out, before, after, alive);
  // The ranks' aggregates, one at a time: rank 0 never holds more than one rank's message.
  out.channels = channels_;
  out.merged = std::make_unique<RunMerge>(out.channels, n_, planned_ns(), cfg_.anomaly_cap);
  out.merged->add(stats_);
  std::vector<int32_t> dead;
  for (size_t r = 1; r < size; ++r) {
    if (!alive[r]) {
      dead.push_back(sched_of_[r]);
      continue;
    }
    RankStats st;
    try {
      st = decode(mpi_.receive(static_cast<int>(r)), channels_, n_);
    } catch (const std::exception& e) {
      throw RunError("rank " + std::to_string(r) + ": " + e.what());
    }
    if (st.rank != sched_of_[r]) throw RunError("rank " + std::to_string(r) + " reported as another host");
    out.merged->add(st);
  }
  if (!dead.empty()) {
    // What the dead planned to send: every stretch's transfers (a following run left them out of
    // the stretches after their drop).
    std::vector<uint64_t> planned = planned_per_channel(
        sched(), channels_, rounds_run_ - static_cast<uint32_t>(std::min<uint64_t>(rounds_run_, seg_round_)));
    for (size_t c = 0; c < planned_acc_.size() && c < planned.size(); ++c) planned[c] += planned_acc_[c];
    for (int32_t d : dead) out.merged->lost(d, planned, cfg_.message_size);
  }
  out.dropped = dropped_at_;
  if (cfg_.unreliable) out.merged->settle_unreliable(cfg_.message_size);
  std::sort(dead.begin(), dead.end());
  out.missing = dead;
  if (silent > 0) {
    std::vector<int> peers;
    for (size_t r = 1; r < size; ++r)
      if (alive[r]) peers.push_back(static_cast<int>(r));
    mpi_.abandon(peers);
  }
}

}  // namespace detail

namespace {

extern "C" void on_stop_signal(int sig) { detail::g_stop_signal = sig; }

// Installs the stop handlers for the run, one shot each (SA_RESETHAND: a second signal kills).
class StopSignals {
 public:
  StopSignals() {
    detail::g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~StopSignals() {
    for (size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGUSR1};
  struct sigaction old_[3]{};
};

}  // namespace

RunOutcome run_schedule(Bootstrap& mpi, const schedule::Schedule& s, const RankMapping& map, const RunConfig& cfg) {
  StopSignals signals;
  detail::Rank r(mpi, s, map, cfg);
  return r.run();
}

}  // namespace ibroute::runner
