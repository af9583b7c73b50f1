#include "data_plane.hpp"

#include <arpa/inet.h>
#include <sys/resource.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <csignal>
#include <cstring>
#include <ctime>
#include <deque>
#include <unordered_map>

#include "ibroute/fabric/model.hpp"
#include "ibroute/runner/clock_sync.hpp"
#include "ibroute/runner/rate_search.hpp"
#include "ibroute/runner/run_plan.hpp"
#include "trace_csv.hpp"
#include "verbs.hpp"

namespace ibroute::runner {

using namespace verbs;

const char* wc_status_name(int status) {
  if (status < 0) return "not posted";
  return ibv_wc_status_str(static_cast<ibv_wc_status>(status));
}

namespace {

int64_t raw_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);  // not slewed by NTP: drift stays linear
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Control messages on the control queue pairs (rank 0 <-> every rank): the clock ping-pong (rank 0
// pings everyone before and after the run; during it each rank pings rank 0), the end of the
// sync, progress reports, stop requests and orders, and the end of the run.
// kAlive: rank 0 is still finishing (waiting for a missing rank): a rank that is done waits on.
enum MsgType : uint32_t { kPing = 1, kPong, kSyncEnd, kDone, kFinish, kProgress, kStopAsk, kStop, kAlive };
struct Msg {
  uint32_t type = 0;
  int32_t from = 0;
  int64_t t = 0;  // sender's clock
  int64_t a = 0, b = 0, c = 0, d = 0, e = 0;
};
static_assert(sizeof(Msg) <= 64, "control messages go inline (max_inline_data 64)");
constexpr uint32_t kCtlDepth = 8;
constexpr size_t kCtlSlot = 64;

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// Installs the stop handlers for the run, one shot each (SA_RESETHAND: a second signal kills).
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
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
  struct sigaction old_[3] {};
};

// What every rank tells every other before connecting.
struct Hello {
  int32_t schedule_rank = -1;
  PortAddress address;
  uint64_t recv_addr = 0;
  uint32_t recv_rkey = 0;
  uint64_t port_guid = 0;
};

// Rank 0's order after a step of a rate search.
struct StepOrder {
  int64_t go = 0, slot_ns = 0, t0 = 0;
  uint32_t rounds = 0;
};

// rank 0's first clock measurement of a rank, broadcast to all.
struct Offset {
  int64_t offset_ns = 0, at_ns = 0, uncertainty_ns = 0;
};

uint64_t pattern(int32_t src, size_t word) { return (static_cast<uint64_t>(src) + 1) * 0x9E3779B97F4A7C15ull ^ word; }

class Rank {
 public:
  Rank(Bootstrap& mpi, const schedule::Schedule& s, const RankMapping& map, const RunConfig& cfg)
      : mpi_(mpi), s_(s), map_(map), cfg_(cfg), n_(s.hosts.size()), round_slots_(static_cast<int64_t>(schedule::slot_starts(s).back())) {
    const auto me = static_cast<size_t>(mpi.rank());
    if (!cfg.test_clock_skew_ns.empty()) skew_ = cfg.test_clock_skew_ns[me % cfg.test_clock_skew_ns.size()];
    if (!cfg.test_clock_ppm.empty()) ppm_ = cfg.test_clock_ppm[me % cfg.test_clock_ppm.size()];
    // With injected clock errors the true common clock is known: rank 0's transform inverted.
    truth_ = !cfg.test_clock_skew_ns.empty() || !cfg.test_clock_ppm.empty();
    if (!cfg.test_clock_skew_ns.empty()) skew0_ = cfg.test_clock_skew_ns[0];
    if (!cfg.test_clock_ppm.empty()) ppm0_ = cfg.test_clock_ppm[0];
    late_threshold_ = cfg.late_threshold_ns > 0 ? cfg.late_threshold_ns : std::max<int64_t>(cfg.slot_ns, 1);
    slot_ns_ = cfg.slot_ns, rounds_ = cfg.rounds;
  }

  // A round lasts its slots (one per phase, unless the phases differ in length).
  int64_t round_slots() const { return round_slots_; }
  int64_t planned_ns() const { return static_cast<int64_t>(rounds_) * round_slots() * slot_ns_; }

  RunOutcome run() {
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
    first.offset_ns = mine.offset_ns, first.at_ns = mpi_.rank() == 0 ? t0 : mine.at_ns, first.uncertainty_ns = mine.uncertainty_ns;
    first.samples = 1;
    tracker_.add(first);
    out.t0_ns = t0;
    t0_ = t0;
    RateSearch search(static_cast<double>(cfg_.message_size) / (static_cast<double>(cfg_.slot_ns) * 1e-9), cfg_.max_skipped_share,
                      cfg_.find_rate_steps, cfg_.find_rate_step_ns, static_cast<size_t>(round_slots()));
    for (;;) {
      timed_sends();
      out.rounds_run = rounds_run_;
      out.stop_signal = stop_signal_;
      out.rss_kib = rss_;
      out.slot_ns = slot_ns_;
      if (mpi_.rank() == 0) finish_root(out, before);
      else finish_peer();
      if (!cfg_.find_rate) break;
      // Rank 0 judges the step and picks the next rate; every rank takes its order.
      StepOrder order;
      if (mpi_.rank() == 0) {
        const RateStep st = measure_step(*out.merged, static_cast<double>(cfg_.message_size) / (static_cast<double>(slot_ns_) * 1e-9),
                                         rounds_run_, n_);
        const bool usable = out.missing.empty() && !stop_signal_ && open_ == 0;
        std::fprintf(stderr, "run: rate %.4g B/s per node: skipped %.4f %%, %.3f Gb/s per node\n", st.rate, 100 * st.skipped_share,
                     st.gbps_per_node);
        const bool held = search.record(st, std::move(out.merged));
        if (held) out.best_step = search.steps().size() - 1;
        double next = usable ? search.next() : 0;
        if (next > 0) {
          order.go = 1;
          order.slot_ns = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(cfg_.message_size) / next * 1e9));
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
        out.slot_ns = static_cast<int64_t>(static_cast<double>(cfg_.message_size) / b.rate * 1e9);
        out.rounds_run = b.rounds;
      }
    }
    return out;
  }

 private:
  Bootstrap& mpi_;
  const schedule::Schedule& s_;
  const RankMapping& map_;
  const RunConfig& cfg_;
  size_t n_;
  int64_t round_slots_ = 0;  // slots per round: one per phase unless the phases differ in length
  int64_t skew_ = 0, skew0_ = 0;
  double ppm_ = 0, ppm0_ = 0;
  bool truth_ = false;
  int64_t late_threshold_ = 0;
  int64_t slot_ns_ = 0;  // this step's
  uint32_t rounds_ = 0;
  int32_t me_ = -1;  // my schedule rank
  std::vector<int32_t> sched_of_, mpi_of_;
  std::vector<Channel> channels_;
  std::vector<uint32_t> my_send_, my_recv_;  // channel indices
  SendPlan plan_;
  std::vector<Hello> hello_;  // per MPI rank

  // Verbs objects in creation order (destroyed in reverse).
  OpenPort port_;
  Pd pd_;
  std::unique_ptr<Buffer> send_buf_, recv_buf_, ctl_buf_;
  Mr send_mr_, recv_mr_, ctl_mr_;
  Cq send_cq_, recv_cq_, ctl_cq_;
  std::vector<Qp> send_qps_, recv_qps_, ctl_qps_;  // ctl_qps_: per MPI rank at rank 0, one elsewhere

  std::unordered_map<uint32_t, size_t> recv_qp_index_;  // QP number -> index into recv_qps_
  std::deque<std::pair<size_t, Msg>> inbox_;  // control messages not yet asked for (qp index, msg)
  std::unique_ptr<SkipRule> skip_;
  static constexpr int64_t kHotNs = 5'000'000;
  int64_t hot_until_ = 0;  // control traffic seen lately: spin, do not sleep
  int64_t last_from_root_ = 0;  // raw time of the last control message from rank 0

  // The run's state: transfers in flight (a fixed pool; wr_id = slot), aggregates, the clock.
  struct InFlight {
    uint64_t seq = 0;
    uint32_t send = 0;  // index into my_send_
    int64_t planned = 0, posted = 0;  // local clock
    bool late = false;
  };
  std::vector<InFlight> flight_;
  std::vector<uint32_t> free_slots_;
  size_t open_ = 0;
  RankStats stats_;
  std::unique_ptr<TraceCsv> trace_;
  ClockTracker tracker_;  // local - reference
  int64_t t0_ = 0;        // reference clock
  int64_t local_t0_ = 0;
  uint32_t rounds_run_ = 0;
  uint64_t stop_round_ = UINT64_MAX;  // no send of this round or later
  int stop_signal_ = 0;
  bool stop_asked_ = false;
  // Re-synchronisation (ranks other than 0): one ping in flight at a time, a burst of
  // resync_samples, then the estimate joins the tracker.
  std::vector<ClockSample> burst_;
  bool burst_on_ = false;
  int64_t burst_ping_ = 0, burst_deadline_ = 0, next_resync_ = INT64_MAX;
  // Progress: ranks report to rank 0, which prints.
  int64_t next_progress_ = INT64_MAX;
  std::vector<uint64_t> skipped_since_;  // per destination index, since my last report
  struct PeerProgress {
    int64_t bytes = 0, skipped = 0, failed = 0, done = 0;
  };
  std::vector<PeerProgress> progress_;      // rank 0: per MPI rank, the latest report
  std::vector<uint64_t> skipped_to_;        // rank 0: per schedule rank, skipped towards it
  PeerProgress printed_;                    // rank 0: the totals at the last progress line
  int64_t printed_at_ = 0;
  std::vector<std::pair<double, int64_t>> rss_;  // rank 0: (seconds, resident KiB) at each line
  uint64_t current_round_ = 0;

  // The clock every time in this rank is on: CLOCK_MONOTONIC_RAW (not slewed by NTP), plus the
  // tests' injected offset and rate error.
  int64_t local_of_raw(int64_t raw) const {
    return raw + skew_ + (ppm_ != 0 ? static_cast<int64_t>(static_cast<double>(raw) * ppm_ * 1e-6) : 0);
  }
  int64_t now() const { return local_of_raw(raw_now()); }
  int64_t to_ref(int64_t local) const { return tracker_.to_reference(local); }

  void setup_local() {
    std::string error;
    try {
      if (static_cast<size_t>(mpi_.size()) != n_)
        throw RunError("the schedule has " + std::to_string(n_) + " hosts but " + std::to_string(mpi_.size()) +
                       " ranks were started: start one rank per host");
      port_ = open_port(cfg_.device, cfg_.port, cfg_.gid_index);
      if (!map_.placement.empty()) {
        me_ = map_.placement[static_cast<size_t>(mpi_.rank())];
      } else {
        for (size_t i = 0; i < n_; ++i)
          if (map_.port_guids[i] == port_.port_guid) me_ = static_cast<int32_t>(i);
        if (me_ < 0)
          throw RunError("port GUID " + fabric::guid_hex(port_.port_guid) + " of " + port_.device_name + " port " + std::to_string(port_.port_num) +
                         " is not a host of the schedule (a schedule for another fabric? else map ranks with --placement)");
      }
      const uint64_t recv_bytes = cfg_.message_size * n_;
      rlimit rl{};
      getrlimit(RLIMIT_MEMLOCK, &rl);
      const uint64_t need = recv_bytes + cfg_.message_size + (1u << 20);
      if (geteuid() != 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
        throw RunError("RLIMIT_MEMLOCK is " + std::to_string(rl.rlim_cur >> 10) + " KiB, the run registers " + std::to_string(need >> 10) +
                       " KiB: raise it (ulimit -l unlimited, or memlock in /etc/security/limits.conf)");
      pd_.reset(ibv_alloc_pd(port_.ctx.get()));
      if (!pd_) throw VerbsError("ibv_alloc_pd failed");
      send_buf_ = std::make_unique<Buffer>(cfg_.message_size);
      recv_buf_ = std::make_unique<Buffer>(recv_bytes);
      const size_t ctl_qps = mpi_.rank() == 0 ? static_cast<size_t>(mpi_.size()) : 1;
      ctl_buf_ = std::make_unique<Buffer>(ctl_qps * kCtlDepth * kCtlSlot);
      auto* words = reinterpret_cast<uint64_t*>(send_buf_->data);
      for (size_t w = 0; w < cfg_.message_size / 8; ++w) words[w] = pattern(me_, w);
      send_mr_.reset(ibv_reg_mr(pd_.get(), send_buf_->data, send_buf_->size, 0));
      recv_mr_.reset(ibv_reg_mr(pd_.get(), recv_buf_->data, recv_buf_->size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
      ctl_mr_.reset(ibv_reg_mr(pd_.get(), ctl_buf_->data, ctl_buf_->size, IBV_ACCESS_LOCAL_WRITE));
      if (!send_mr_ || !recv_mr_ || !ctl_mr_)
        throw VerbsError("ibv_reg_mr of " + std::to_string(recv_bytes + cfg_.message_size) + " bytes failed: " + std::strerror(errno));
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::vector<std::string> errors = mpi_.agree(error);
    std::string all;
    for (size_t r = 0; r < errors.size(); ++r)
      if (!errors[r].empty()) all += (all.empty() ? "" : "; ") + ("rank " + std::to_string(r) + ": " + errors[r]);
    if (!all.empty()) throw RunError(all, true);
  }

  void exchange_and_connect() {
    Hello h;
    h.schedule_rank = me_;
    h.address = port_.address;
    h.recv_addr = reinterpret_cast<uint64_t>(recv_buf_->data);
    h.recv_rkey = recv_mr_->rkey;
    h.port_guid = port_.port_guid;
    std::vector<uint8_t> mine(sizeof h);
    std::memcpy(mine.data(), &h, sizeof h);
    std::vector<uint8_t> all = mpi_.allgather(mine);
    hello_.resize(static_cast<size_t>(mpi_.size()));
    std::memcpy(hello_.data(), all.data(), all.size());
    sched_of_.resize(hello_.size());
    mpi_of_.assign(n_, -1);
    for (size_t r = 0; r < hello_.size(); ++r) {
      int32_t sr = hello_[r].schedule_rank;
      sched_of_[r] = sr;
      if (sr < 0 || static_cast<size_t>(sr) >= n_) throw RunError("rank " + std::to_string(r) + " maps to no host of the schedule", true);
      if (mpi_of_[static_cast<size_t>(sr)] >= 0)
        throw RunError("ranks " + std::to_string(mpi_of_[static_cast<size_t>(sr)]) + " and " + std::to_string(r) + " are both " +
                       s_.hosts[static_cast<size_t>(sr)].name + " (one rank per host; check --placement)",
                       true);
      mpi_of_[static_cast<size_t>(sr)] = static_cast<int32_t>(r);
    }

    channels_ = channels_of(s_);
    for (uint32_t c = 0; c < channels_.size(); ++c) {
      if (channels_[c].src == me_) my_send_.push_back(c);
      if (channels_[c].dst == me_) my_recv_.push_back(c);
    }
    init_step();

    std::string error;
    std::vector<std::vector<uint8_t>> to(static_cast<size_t>(mpi_.size()));
    try {
      const uint32_t depth = cfg_.skip_after + 1;
      // Receive requests: one per transfer a source may have open, plus slack (up to one per
      // round) so that a receiver that is slow to repost does not stall its senders.
      const uint32_t recv_depth = depth + recv_slack();
      const ibv_device_attr& lim = port_.device;
      send_cq_ = create_cq(port_.ctx.get(), static_cast<int>(my_send_.size() * depth), lim, "send");
      recv_cq_ = create_cq(port_.ctx.get(), static_cast<int>(my_recv_.size() * recv_depth), lim, "receive");
      const size_t ctl_qps = mpi_.rank() == 0 ? static_cast<size_t>(mpi_.size()) : 1;
      ctl_cq_ = create_cq(port_.ctx.get(), static_cast<int>(ctl_qps * (kCtlDepth + 16)), lim, "control");
      for (size_t k = 0; k < my_send_.size(); ++k)
        send_qps_.push_back(create_rc_qp(pd_.get(), send_cq_.get(), send_cq_.get(), depth, 1, lim));
      for (size_t k = 0; k < my_recv_.size(); ++k) {
        recv_qps_.push_back(create_rc_qp(pd_.get(), recv_cq_.get(), recv_cq_.get(), 1, recv_depth, lim));
        recv_qp_index_[recv_qps_.back()->qp_num] = k;
      }
      for (size_t k = 0; k < ctl_qps; ++k)
        ctl_qps_.push_back(mpi_.rank() == 0 && k == 0 ? Qp() : create_rc_qp(pd_.get(), ctl_cq_.get(), ctl_cq_.get(), 16, kCtlDepth, lim));
      // Per MPI peer: QP numbers of my send channels to it, my receive channels from it, and
      // the control QP; both ends list channels in the same (sorted) order.
      auto put = [&](int peer, uint32_t v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        to[static_cast<size_t>(peer)].insert(to[static_cast<size_t>(peer)].end(), p, p + 4);
      };
      for (size_t k = 0; k < my_send_.size(); ++k) put(mpi_of_[static_cast<size_t>(channels_[my_send_[k]].dst)], send_qps_[k]->qp_num);
      for (size_t k = 0; k < my_recv_.size(); ++k) put(mpi_of_[static_cast<size_t>(channels_[my_recv_[k]].src)], recv_qps_[k]->qp_num);
      if (mpi_.rank() == 0)
        for (int r = 1; r < mpi_.size(); ++r) put(r, ctl_qps_[static_cast<size_t>(r)]->qp_num);
      else
        put(0, ctl_qps_[0]->qp_num);
    } catch (const std::exception& e) {
      error = e.what();
    }
    check_agreed(error);
    std::vector<std::vector<uint8_t>> from = mpi_.alltoallv(to);
    try {
      // What peer p sent: its send channels to me (my receive channels from p, same order), its
      // receive channels from me (my send channels to p), its control QP.
      std::vector<size_t> pos(from.size(), 0);
      auto get = [&](int peer) {
        auto& v = from[static_cast<size_t>(peer)];
        size_t& p = pos[static_cast<size_t>(peer)];
        if (p + 4 > v.size()) throw RunError("rank " + std::to_string(peer) + " sent fewer queue pairs than the schedule needs");
        uint32_t x;
        std::memcpy(&x, v.data() + p, 4);
        p += 4;
        return x;
      };
      std::vector<std::vector<uint32_t>> their_send(from.size()), their_recv(from.size());
      // The peer wrote its send QPs first (in channel order), then its receive QPs.
      std::vector<size_t> recv_from(from.size(), 0), send_to(from.size(), 0);
      for (uint32_t c : my_recv_) ++recv_from[static_cast<size_t>(mpi_of_[static_cast<size_t>(channels_[c].src)])];
      for (uint32_t c : my_send_) ++send_to[static_cast<size_t>(mpi_of_[static_cast<size_t>(channels_[c].dst)])];
      for (size_t p = 0; p < from.size(); ++p) {
        for (size_t k = 0; k < recv_from[p]; ++k) their_send[p].push_back(get(static_cast<int>(p)));
        for (size_t k = 0; k < send_to[p]; ++k) their_recv[p].push_back(get(static_cast<int>(p)));
      }
      std::vector<size_t> used_send(from.size(), 0), used_recv(from.size(), 0);
      for (size_t k = 0; k < my_recv_.size(); ++k) {
        const Channel& c = channels_[my_recv_[k]];
        size_t p = static_cast<size_t>(mpi_of_[static_cast<size_t>(c.src)]);
        // Acknowledgements go back over the sender's base LID.
        connect_rc(recv_qps_[k].get(), port_, hello_[p].address, map_.base_lids[static_cast<size_t>(c.src)], their_send[p][used_send[p]++]);
        // Tests: a stalled receiver takes one transfer per source, then none.
        const uint32_t posts = mpi_.rank() == cfg_.test_stall_rank ? 1 : cfg_.skip_after + 1 + recv_slack();
        for (uint32_t d = 0; d < posts; ++d) post_data_recv(k);
      }
      for (size_t k = 0; k < my_send_.size(); ++k) {
        const Channel& c = channels_[my_send_[k]];
        size_t p = static_cast<size_t>(mpi_of_[static_cast<size_t>(c.dst)]);
        connect_rc(send_qps_[k].get(), port_, hello_[p].address, c.dlid, their_recv[p][used_recv[p]++]);
      }
      if (mpi_.rank() == 0) {
        for (int r = 1; r < mpi_.size(); ++r) connect_ctl(static_cast<size_t>(r), r, get(r));
      } else {
        connect_ctl(0, 0, get(0));
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    check_agreed(error);  // also: every QP is ready before anyone sends
  }

  void check_agreed(const std::string& error) {
    std::vector<std::string> errors = mpi_.agree(error);
    for (size_t r = 0; r < errors.size(); ++r)
      if (!errors[r].empty()) throw RunError("rank " + std::to_string(r) + ": " + errors[r], true);
  }

  void connect_ctl(size_t k, int peer, uint32_t qpn) {
    const Hello& h = hello_[static_cast<size_t>(peer)];
    connect_rc(ctl_qps_[k].get(), port_, h.address, map_.base_lids[static_cast<size_t>(h.schedule_rank)], qpn);
    for (uint32_t slot = 0; slot < kCtlDepth; ++slot) post_ctl_recv(k, slot);
  }

  void post_ctl_recv(size_t k, uint32_t slot) {
    ibv_sge sge{reinterpret_cast<uint64_t>(ctl_buf_->data + (k * kCtlDepth + slot) * kCtlSlot), kCtlSlot, ctl_mr_->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = k * kCtlDepth + slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_recv(ctl_qps_[k].get(), &wr, &bad)) throw VerbsError("ibv_post_recv (control) failed");
  }

  void post_data_recv(size_t k) {
    ibv_recv_wr wr{};
    wr.wr_id = k;
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_recv(recv_qps_[k].get(), &wr, &bad)) throw VerbsError("ibv_post_recv failed");
  }

  void send_ctl(size_t k, Msg m) {
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

  // Receive requests beyond the skip limit, so that a receiver slow to repost does not stall
  // its senders: up to one per round (a rate search's steps may run many rounds).
  uint32_t recv_slack() const { return cfg_.find_rate ? 62 : std::min<uint32_t>(cfg_.rounds, 62); }

  // A step of the run (the run, or one rate of a rate search): its sends and fresh aggregates.
  void init_step() {
    plan_ = SendPlan(s_, channels_, me_, slot_ns_);
    init_stats();
    skip_ = std::make_unique<SkipRule>(n_, cfg_.skip_after);
    free_slots_.clear();
    open_ = 0, current_round_ = 0, rounds_run_ = 0;
    printed_ = {}, printed_at_ = 0;
  }

  // The aggregates' shape: my send channels, receive channels and destinations.
  void init_stats() {
    stats_ = RankStats::shaped(channels_, me_, planned_ns());
    skipped_since_.assign(stats_.dests.size(), 0);
    if (mpi_.rank() == 0) progress_.assign(static_cast<size_t>(mpi_.size()), PeerProgress{}), skipped_to_.assign(n_, 0);
  }

  // Polls the control CQ once. Pings are answered at once, pongs of a re-synchronisation,
  // progress reports and stop messages are taken; the rest waits in the inbox for wait_ctl.
  void poll_ctl() {
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
            if (m.e >= 0 && static_cast<size_t>(m.e) < n_ && m.t > 0) skipped_to_[static_cast<size_t>(m.e)] += static_cast<uint64_t>(m.t);
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
        default:
          inbox_.emplace_back(k, m);
      }
    }
  }

  // Waits for a control message of `type` from QP k (any QP if k == SIZE_MAX) until `deadline`,
  // taking data meanwhile. Other messages stay queued.
  bool wait_ctl(uint32_t type, size_t k, int64_t deadline, Msg& out, size_t* from = nullptr) {
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
      if (raw_now() < hot_until_) sched_yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  // Waits for a message of `type` from rank 0 for as long as rank 0 shows signs of life: gives up
  // after `quiet` without any message from it (its pings and kAlive count), from now at the
  // earliest. A loaded rank 0 may take long to get there; only a dead one stays silent.
  bool wait_root(uint32_t type, int64_t quiet, Msg& out) {
    const int64_t start = raw_now();
    for (;;) {
      if (wait_ctl(type, 0, std::max(start, last_from_root_) + quiet, out)) return true;
      if (raw_now() >= std::max(start, last_from_root_) + quiet) return false;
    }
  }

  // Rank 0 measures every rank's offset; the others answer until told it is over.
  std::vector<ClockEstimate> clock_sync(bool first, const std::vector<char>* alive = nullptr) {
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

  // ---- during the run: re-synchronisation, progress, stop ------------------------------------

  // Ranks other than 0 measure themselves against rank 0 every resync interval: a burst of
  // ping-pongs, one at a time. In these samples this rank is the one that stamps send and
  // receive, so the estimate is rank 0 - me; the tracker takes me - rank 0 at rank 0's time.
  void resync_step(int64_t t) {
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

  void send_ping() {
    Msg ping;
    ping.type = kPing;
    burst_ping_ = now();
    ping.t = burst_ping_;
    send_ctl(0, ping);
  }

  void resync_pong(const Msg& m, int64_t t) {
    if (!burst_on_ || m.a != burst_ping_) return;  // a pong of an abandoned burst
    burst_.push_back({burst_ping_, m.t, t});
    if (burst_.size() < static_cast<size_t>(std::max(1, cfg_.resync_samples))) return send_ping();
    burst_on_ = false;
    ClockEstimate e = estimate_offset(burst_);
    ClockEstimate mine = e;
    mine.offset_ns = -e.offset_ns;      // me - rank 0
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
  void order_stop(int sig) {
    if (stop_round_ != UINT64_MAX) return;
    const int64_t round_ns = std::max<int64_t>(1, slot_ns_ * round_slots());
    const uint64_t margin = static_cast<uint64_t>(200'000'000 / round_ns) + 1;
    const int64_t elapsed = now() - local_t0_;
    const uint64_t by_clock = elapsed > 0 ? static_cast<uint64_t>(elapsed / round_ns) : 0;
    stop_round_ = std::max<uint64_t>(current_round_, by_clock) + margin;
    stop_signal_ = sig;
    Msg m;
    m.type = kStop;
    m.a = static_cast<int64_t>(stop_round_);
    m.b = sig;
    for (int r = 1; r < mpi_.size(); ++r) send_ctl(static_cast<size_t>(r), m);
    std::fprintf(stderr, "run: %s: ending after round %llu (another signal kills)\n", strsignal(sig),
                 static_cast<unsigned long long>(stop_round_));
  }

  void stop_step() {
    const int sig = g_stop_signal;
    if (!sig || stop_asked_) return;
    stop_asked_ = true;
    if (mpi_.rank() == 0) return order_stop(sig);
    Msg m;
    m.type = kStopAsk;
    m.a = sig;
    send_ctl(0, m);
  }

  void progress_step(int64_t t) {
    if (cfg_.progress_interval_ns <= 0 || t < next_progress_) return;
    next_progress_ = t + cfg_.progress_interval_ns;
    int64_t bytes = 0, skipped = 0, failed = 0, done = 0;
    for (const PathCounters& p : stats_.send)
      bytes += static_cast<int64_t>(p.bytes), skipped += static_cast<int64_t>(p.skipped), failed += static_cast<int64_t>(p.timeout + p.failed),
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
  void sample_rss(double secs) {
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
  void print_progress(int64_t t) {
    int64_t bytes = 0, skipped = 0, failed = 0, done = 0;
    for (const PeerProgress& p : progress_) bytes += p.bytes, skipped += p.skipped, failed += p.failed, done += p.done;
    const double secs = static_cast<double>(t - local_t0_) * 1e-9;
    if (secs <= 0) return;
    sample_rss(secs);
    // Rate and skipped share over the last interval: what the fabric does now.
    const double dt = static_cast<double>(t - (printed_at_ ? printed_at_ : local_t0_)) * 1e-9;
    const double rate = dt > 0 ? static_cast<double>(bytes - printed_.bytes) * 8 / dt * 1e-9 / static_cast<double>(std::max<size_t>(1, n_)) : 0;
    const int64_t done_now = done - printed_.done, skipped_now = skipped - printed_.skipped;
    printed_ = {bytes, skipped, failed, done}, printed_at_ = t;
    std::vector<std::pair<uint64_t, size_t>> worst;
    for (size_t r = 0; r < skipped_to_.size(); ++r)
      if (skipped_to_[r]) worst.emplace_back(skipped_to_[r], r);
    std::sort(worst.rbegin(), worst.rend());
    std::string w;
    for (size_t i = 0; i < worst.size() && i < 3; ++i)
      w += (i ? ", " : "; most skipped towards ") + s_.hosts[worst[i].second].name + " (" + std::to_string(worst[i].first) + ")";
    std::fprintf(stderr, "run: %.0f s, round %llu of %u, %.3f Gb/s per node, skipped %.3f %% (%.3f %% in all), failed %lld%s\n", secs,
                 static_cast<unsigned long long>(current_round_ + 1), rounds_, rate,
                 done_now > 0 ? 100.0 * static_cast<double>(skipped_now) / static_cast<double>(done_now) : 0.0,
                 done ? 100.0 * static_cast<double>(skipped) / static_cast<double>(done) : 0.0, static_cast<long long>(failed), w.c_str());
  }

  // Everything a rank does while it waits: completions, control messages, its clock, progress.
  void service() {
    poll_data();
    poll_ctl();
    const int64_t t = now();
    resync_step(t);
    progress_step(t);
    stop_step();
  }

  // ---- the data plane ------------------------------------------------------------------------

  void poll_data() {
    ibv_wc wc[32];
    int got = ibv_poll_cq(send_cq_.get(), 32, wc);
    int64_t t = got > 0 ? now() : 0;
    for (int x = 0; x < got; ++x) {
      const auto slot = static_cast<uint32_t>(wc[x].wr_id);
      const InFlight& f = flight_[slot];
      finish_send(f, wc[x].status == IBV_WC_SUCCESS ? Status::ok : Status::failed, wc[x].status, t);
      free_slots_.push_back(slot);
      skip_->finished(channels_[my_send_[f.send]].dst);
      --open_;
    }
    if (mpi_.rank() == cfg_.test_stall_rank) return;  // tests: a receiver that stopped taking data
    got = ibv_poll_cq(recv_cq_.get(), 32, wc);
    t = got > 0 ? now() : 0;
    for (int x = 0; x < got; ++x) {
      if (wc[x].status != IBV_WC_SUCCESS) continue;
      auto it = recv_qp_index_.find(wc[x].qp_num);
      if (it == recv_qp_index_.end()) continue;
      const Channel& ch = channels_[my_recv_[it->second]];
      uint8_t verified = 0;
      if (cfg_.verify) {
        auto* words = reinterpret_cast<uint64_t*>(recv_buf_->data + static_cast<size_t>(ch.src) * cfg_.message_size);
        bool good = true;
        for (size_t w = 0; w < cfg_.message_size / 8 && good; ++w) good = words[w] == pattern(ch.src, w);
        // Not cleared afterwards: the next write from src may already be landing in the region.
        verified = good ? 1 : 2;
      }
      ++stats_.arrived[it->second];
      const uint32_t seq_low = ntohl(wc[x].imm_data);
      if (verified == 2) {
        ++stats_.corrupt[it->second];
        TransferRecord a;
        a.seq = seq_low, a.src = ch.src, a.dst = ch.dst, a.dlid = ch.dlid, a.status = Status::ok, a.verified = 2;
        a.bytes = cfg_.message_size, a.arrived_ns = to_ref(t);
        stats_.anomaly(a, cfg_.anomaly_cap);
      }
      if (trace_) trace_->receive(seq_low, ch.src, ch.dst, ch.dlid, verified, to_ref(t) - t0_);
      post_data_recv(it->second);
    }
  }

  // A send's end: counted on its path and destination, kept whole if it is an anomaly, traced.
  void finish_send(const InFlight& f, Status st, int wc_status, int64_t completed) {
    PathCounters& p = stats_.send[f.send];
    const uint32_t d = stats_.dest_of_send[f.send];
    const Channel& ch = channels_[my_send_[f.send]];
    switch (st) {
      case Status::ok: {
        stats_.completed(f.send, d, completed - f.posted, cfg_.message_size, completed - local_t0_);
        const int64_t ref = to_ref(completed);
        if (stats_.first_post_ns == 0) stats_.first_post_ns = to_ref(f.posted);
        stats_.last_completion_ns = std::max(stats_.last_completion_ns, ref);
        break;
      }
      case Status::skipped: ++p.skipped, ++skipped_since_[d]; break;
      case Status::timeout: ++p.timeout; break;
      case Status::failed: ++p.failed; break;
      case Status::lost: ++p.lost; break;
    }
    const bool anomalous = st != Status::ok || f.late;
    if (!anomalous && !trace_) return;
    TransferRecord r;
    r.seq = f.seq, r.src = me_, r.dst = ch.dst, r.dlid = ch.dlid, r.status = st, r.bytes = cfg_.message_size;
    r.wc_status = st == Status::failed ? wc_status : -1;
    r.planned_ns = to_ref(f.planned);
    r.posted_ns = f.posted ? to_ref(f.posted) : 0;
    r.completed_ns = completed ? to_ref(completed) : 0;
    if (anomalous) stats_.anomaly(r, cfg_.anomaly_cap);
    if (trace_) trace_->send(r, r.planned_ns - t0_, f.posted ? r.posted_ns - t0_ : -1, completed ? r.completed_ns - t0_ : -1);
  }

  void timed_sends() {
    const uint32_t depth = cfg_.skip_after + 1;
    flight_.assign(std::max<size_t>(1, my_send_.size() * depth), InFlight{});
    for (size_t k = flight_.size(); k-- > 0;) free_slots_.push_back(static_cast<uint32_t>(k));
    if (!cfg_.trace_dir.empty()) {
      std::string error;
      try {
        trace_ = std::make_unique<TraceCsv>(cfg_.trace_dir, me_, s_.hosts[static_cast<size_t>(me_)].name, cfg_.schedule_name,
                                            static_cast<uint32_t>(s_.phases.size()));
      } catch (const std::exception& e) {
        error = e.what();
      }
      check_agreed(error);
    }
    local_t0_ = tracker_.to_local(t0_);
    const int64_t start = now();
    // The first re-measurement right away, in the start delay: with rank 0's measurement before
    // it, it gives the drift before the first post. The ranks spread over the delay's first half.
    if (cfg_.resync_interval_ns > 0)
      next_resync_ = start + cfg_.start_delay_ns / 2 * static_cast<int64_t>(mpi_.rank()) / std::max(1, mpi_.size());
    // Rank 0 a little after the others: their reports of the same tick are in by then.
    if (cfg_.progress_interval_ns > 0)
      next_progress_ = local_t0_ + cfg_.progress_interval_ns + (mpi_.rank() == 0 ? std::min<int64_t>(cfg_.progress_interval_ns / 4, 200'000'000) : 0);
    std::vector<size_t> qp_of(channels_.size(), SIZE_MAX);
    for (size_t x = 0; x < my_send_.size(); ++x) qp_of[my_send_[x]] = x;
    const uint64_t total = plan_.count(rounds_);
    const auto phases = static_cast<uint64_t>(std::max<size_t>(1, s_.phases.size()));
    uint64_t k = 0;
    while (k < total) {
      const TimedSend ts = plan_.at(k);
      current_round_ = ts.seq / phases;
      if (current_round_ >= stop_round_) break;
      // A rate search's step that falls far behind its plan has shown the rate cannot be held.
      if (cfg_.find_rate && now() - local_t0_ > 2 * planned_ns() + 1'000'000'000) break;
      // The planned start on this rank's clock, by its current model of the clock.
      const int64_t planned = tracker_.to_local(t0_ + ts.at_ns);
      service();  // every step: completions must not wait for a rank that is behind its plan
      if (current_round_ >= stop_round_) break;  // a stop order taken just now
      if (int64_t wait = planned - now(); wait > 0) {
        // Far from the next start: sleep until 200 us before it (in steps, to keep taking
        // completions); then spin. Ranks sharing cores leave them to those with work.
        if (raw_now() < hot_until_ || wait <= 20'000) continue;
        if (wait > 300'000) std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(wait - 200'000, 1'000'000)));
        else sched_yield();
        continue;
      }
      if (mpi_.rank() == cfg_.test_die_rank && k == cfg_.test_die_at) raise(SIGKILL);
      const auto send = static_cast<uint32_t>(qp_of[ts.channel]);
      InFlight f{ts.seq, send, planned, 0, false};
      if (!skip_->admit(ts.dst) || free_slots_.empty()) {
        ++stats_.send[send].planned;
        finish_send(f, Status::skipped, -1, 0);
        ++k;
        continue;
      }
      const Hello& peer = hello_[static_cast<size_t>(mpi_of_[static_cast<size_t>(ts.dst)])];
      const uint32_t slot = free_slots_.back();
      ibv_sge sge{reinterpret_cast<uint64_t>(send_buf_->data), static_cast<uint32_t>(cfg_.message_size), send_mr_->lkey};
      ibv_send_wr wr{};
      wr.wr_id = slot;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.imm_data = htonl(static_cast<uint32_t>(ts.seq));
      wr.wr.rdma.remote_addr = peer.recv_addr + static_cast<uint64_t>(me_) * cfg_.message_size;
      wr.wr.rdma.rkey = peer.recv_rkey ^ (mpi_.rank() == cfg_.test_bad_rkey_rank ? 0x1u : 0u);
      ibv_send_wr* bad = nullptr;
      const int64_t raw = raw_now();
      f.posted = local_of_raw(raw);
      const int64_t late = f.posted - planned;
      f.late = late > late_threshold_;
      stats_.posted(send, stats_.dest_of_send[send], late);
      if (truth_) {
        // The planned start on the true clock (rank 0's transform inverted) against the post.
        const double ref = static_cast<double>(t0_ + ts.at_ns);
        const auto true_planned = static_cast<int64_t>((ref - static_cast<double>(skew0_)) / (1.0 + ppm0_ * 1e-6));
        stats_.truth.add(raw - true_planned);
      }
      if (ibv_post_send(send_qps_[send].get(), &wr, &bad)) {
        finish_send(f, Status::failed, -2, 0);
      } else {
        free_slots_.pop_back();
        flight_[slot] = f;
        skip_->posted(ts.dst);
        ++open_;
      }
      ++k;
    }
    // The rounds that ran: all, or up to the stop.
    rounds_run_ = static_cast<uint32_t>(std::min<uint64_t>(rounds_, stop_round_));
    stats_.rounds_run = rounds_run_;
    const int64_t deadline = raw_now() + cfg_.drain_ns;
    while (open_ > 0 && raw_now() < deadline) {
      poll_data();
      poll_ctl();  // rank 0 answers the others' pings while they still send
      if (raw_now() >= hot_until_) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    // What never completed timed out.
    std::vector<char> is_free(flight_.size(), 0);
    for (uint32_t slot : free_slots_) is_free[slot] = 1;
    for (size_t slot = 0; slot < flight_.size(); ++slot)
      if (!is_free[slot]) finish_send(flight_[slot], Status::timeout, -1, 0);
    ClockTrack& c = stats_.clock;
    c.offset_ns = tracker_.offset_at(to_ref(now()));
    c.uncertainty_ns = tracker_.last_uncertainty_ns();
    c.drift_ppm = tracker_.drift() * 1e6;
    c.residual_max_ns = tracker_.residual_max_ns();
    c.residual_rms_ns = tracker_.residual_rms_ns();
  }

  // After FINISH every sender is done: what arrived is in the receive queue; take it all, then
  // close the trace.
  void close_trace() {
    for (int empty = 0; empty < 3;) {
      const uint64_t before = arrived_total();
      poll_data();
      empty = arrived_total() == before ? empty + 1 : 0;
    }
    if (!trace_) return;
    try {
      trace_->close();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ibroute: rank %d: %s\n", mpi_.rank(), e.what());
    }
    trace_.reset();
  }

  uint64_t arrived_total() const {
    uint64_t n = 0;
    for (uint64_t a : stats_.arrived) n += a;
    return n;
  }

  // ---- the end -------------------------------------------------------------------------------

  void finish_peer() {
    Msg done;
    done.type = kDone;
    done.a = static_cast<int64_t>(open_);
    send_ctl(0, done);
    Msg fin;
    if (!wait_root(kFinish, 2 * cfg_.finish_timeout_ns, fin)) throw RunError("rank 0 did not finish the run (did it die?)");
    close_trace();
    mpi_.send(0, encode(stats_));
    if (fin.a > 0) mpi_.abandon();  // a rank died: MPI_Finalize would wait for it
  }

  void finish_root(RunOutcome& out, const std::vector<ClockEstimate>& before) {
    const auto size = static_cast<size_t>(mpi_.size());
    std::vector<char> alive(size, 0);
    alive[0] = 1;
    size_t waiting = size - 1;
    const int64_t deadline = raw_now() + cfg_.finish_timeout_ns;
    // Ranks that are done hear from rank 0 every so often while it waits for the others, so that
    // they wait on (wait_root) however long it takes to name the missing.
    const int64_t beat = std::max<int64_t>(cfg_.finish_timeout_ns / 4, 1);
    int64_t next_beat = raw_now() + beat;
    while (waiting > 0) {
      Msg m;
      size_t from = 0;
      if (wait_ctl(kDone, SIZE_MAX, std::min(deadline, next_beat), m, &from)) {
        if (!alive[from]) alive[from] = 1, --waiting;
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
    fin.a = static_cast<int64_t>(waiting);
    for (size_t r = 1; r < size; ++r)
      if (alive[r]) send_ctl(r, fin);
    close_trace();
    out.clocks.clear();  // a rate search's steps: the last measurement of each rank
    for (size_t r = 1; r < size; ++r) {
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
      const std::vector<uint64_t> planned = planned_per_channel(s_, channels_, rounds_run_);
      for (int32_t d : dead) out.merged->lost(d, planned, cfg_.message_size);
    }
    std::sort(dead.begin(), dead.end());
    out.missing = dead;
    if (waiting > 0) {
      std::vector<int> peers;
      for (size_t r = 1; r < size; ++r)
        if (alive[r]) peers.push_back(static_cast<int>(r));
      mpi_.abandon(peers);
    }
  }
};

}  // namespace

RunOutcome run_schedule(Bootstrap& mpi, const schedule::Schedule& s, const RankMapping& map, const RunConfig& cfg) {
  StopSignals signals;
  Rank r(mpi, s, map, cfg);
  return r.run();
}

}  // namespace ibroute::runner
