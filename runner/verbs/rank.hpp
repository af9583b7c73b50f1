// The rank of a run as one object whose work is split by room: connection set-up (rank_setup.cpp),
// the control channel — clock sync, re-sync, progress, stop (rank_control.cpp), the send loop
// (rank_send.cpp), and the run with its end (data_plane.cpp). Internal to runner/verbs.
#pragma once

#include <arpa/inet.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <deque>
#include <thread>
#include <unordered_map>

#include "data_plane.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/runner/clock_sync.hpp"
#include "ibroute/runner/epoch_follow.hpp"
#include "ibroute/runner/rate_search.hpp"
#include "ibroute/runner/run_plan.hpp"
#include "trace_csv.hpp"
#include "verbs.hpp"

namespace ibroute::runner::detail {

using namespace verbs;

inline int64_t raw_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);  // not slewed by NTP: drift stays linear
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Control messages on the control queue pairs (rank 0 <-> every rank): the clock ping-pong (rank 0
// pings everyone before and after the run; during it each rank pings rank 0), the end of the
// sync, progress reports, stop requests and orders, and the end of the run.
// kAlive: rank 0 is still finishing (waiting for a missing rank): a rank that is done waits on.
// kDrop, kEpoch (--follow): rank 0 names a dead rank left out from the next stretch, and orders the
// switch to epoch a at round b.
enum MsgType : uint32_t {
  kPing = 1,
  kPong,
  kSyncEnd,
  kDone,
  kFinish,
  kProgress,
  kStopAsk,
  kStop,
  kAlive,
  kDrop,
  kEpoch
};
struct Msg {
  uint32_t type = 0;
  int32_t from = 0;
  int64_t t = 0;  // sender's clock
  int64_t a = 0, b = 0, c = 0, d = 0, e = 0;
};
static_assert(sizeof(Msg) <= 64, "control messages go inline (max_inline_data 64)");
inline constexpr uint32_t kCtlDepth = 8;
inline constexpr size_t kCtlSlot = 64;

inline volatile std::sig_atomic_t g_stop_signal = 0;  // set by the stop handlers (data_plane.cpp)

// What every rank tells every other before connecting.
struct Hello {
  int32_t schedule_rank = -1;
  PortAddress address;
  uint64_t recv_addr = 0;
  uint32_t recv_rkey = 0;
  uint64_t port_guid = 0;
  uint64_t epoch = 0;  // a following run's first epoch: every rank must start on the same one
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

inline uint64_t pattern(int32_t src, size_t word) {
  return (static_cast<uint64_t>(src) + 1) * 0x9E3779B97F4A7C15ull ^ word;
}

class Rank {
 public:
  Rank(Bootstrap& mpi, const schedule::Schedule& s, const RankMapping& map, const RunConfig& cfg)
      : mpi_(mpi),
        s_(s),
        map_(map),
        cfg_(cfg),
        n_(s.hosts.size()),
        round_slots_(static_cast<int64_t>(cfg.follow.first_own ? cfg.follow.first_own->round.starts.back()
                                                               : schedule::slot_starts(s).back())) {
    const auto me = static_cast<size_t>(mpi.rank());
    if (!cfg.test_clock_skew_ns.empty()) skew_ = cfg.test_clock_skew_ns[me % cfg.test_clock_skew_ns.size()];
    if (!cfg.test_clock_ppm.empty()) ppm_ = cfg.test_clock_ppm[me % cfg.test_clock_ppm.size()];
    // With injected clock errors the true common clock is known: rank 0's transform inverted.
    truth_ = !cfg.test_clock_skew_ns.empty() || !cfg.test_clock_ppm.empty();
    if (!cfg.test_clock_skew_ns.empty()) skew0_ = cfg.test_clock_skew_ns[0];
    if (!cfg.test_clock_ppm.empty()) ppm0_ = cfg.test_clock_ppm[0];
    late_threshold_ = cfg.late_threshold_ns > 0 ? cfg.late_threshold_ns : std::max<int64_t>(cfg.slot_ns, 1);
    slot_ns_ = cfg.slot_ns, rounds_ = cfg.rounds;
    // The tests' faults, decided once for this rank: the send loop reads a flag, not the config.
    const int rank = mpi.rank();
    fault_stall_ = rank == cfg.test_stall_rank;
    fault_die_at_ = rank == cfg.test_die_rank ? cfg.test_die_at : UINT64_MAX;
    fault_rkey_flip_ = rank == cfg.test_bad_rkey_rank ? 0x1u : 0u;
  }

  // A round lasts its slots (one per phase, unless the phases differ in length).
  int64_t round_slots() const { return round_slots_; }
  int64_t round_ns() const { return std::max<int64_t>(1, slot_ns_ * round_slots_); }
  // The run's length: the stretches so far, then the current one to the last round.
  int64_t planned_ns() const {
    return seg_ns_ + static_cast<int64_t>(rounds_ - std::min<uint64_t>(rounds_, seg_round_)) * slot_ns_ * round_slots_;
  }

  RunOutcome run();

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
  bool fault_stall_ = false;            // tests: a receiver that stopped taking data
  uint64_t fault_die_at_ = UINT64_MAX;  // tests: this rank dies at that send
  uint32_t fault_rkey_flip_ = 0;        // tests: writes with a wrong remote key
  int64_t late_threshold_ = 0;
  int64_t slot_ns_ = 0;  // this step's
  uint32_t rounds_ = 0;
  int32_t me_ = -1;  // my schedule rank
  std::vector<int32_t> sched_of_, mpi_of_;
  // Not following, or rank 0: every channel, its index its id. A following rank other than 0:
  // only its own (epoch_follow.hpp, FollowChannels), their ids in channel_ids_.
  std::vector<Channel> channels_;
  std::vector<uint32_t> channel_ids_;
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
  std::deque<std::pair<size_t, Msg>> inbox_;            // control messages not yet asked for (qp index, msg)
  std::unique_ptr<SkipRule> skip_;
  static constexpr int64_t kHotNs = 5'000'000;
  int64_t hot_until_ = 0;       // control traffic seen lately: spin, do not sleep
  int64_t last_from_root_ = 0;  // raw time of the last control message from rank 0

  // The run's state: transfers in flight (a fixed pool; wr_id = slot), aggregates, the clock.
  struct InFlight {
    uint64_t seq = 0;
    uint32_t send = 0;                // index into my_send_
    int64_t planned = 0, posted = 0;  // local clock
    bool late = false;
    uint32_t seg = 0;  // the stretch it was planned in (stats_.epochs)
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
  std::vector<PeerProgress> progress_;  // rank 0: per MPI rank, the latest report
  std::vector<uint64_t> skipped_to_;    // rank 0: per schedule rank, skipped towards it
  PeerProgress printed_;                // rank 0: the totals at the last progress line
  int64_t printed_at_ = 0;
  std::vector<std::pair<double, int64_t>> rss_;  // rank 0: (seconds, resident KiB) at each line
  uint64_t current_round_ = 0;

  // --follow (epoch_follow.hpp). Rank 0: the schedule of the current stretch on the run's ranks
  // (s_ itself when not following), the epoch it came from as read (translated again when a rank
  // is dropped; empty while the first epoch is current: that one is s_, not copied again). The
  // other ranks hold their own part only: own_raw_, the slice as read, and pending_own_.
  schedule::Schedule cur_;
  OwnEpoch own_raw_;
  RankRound pending_own_;
  uint64_t pending_slots_ = 0;  // the ordered epoch's round, in slots (rank 0's order)
  uint64_t epoch_ = 0, refused_ = 0;
  schedule::Schedule epoch_raw_;
  const schedule::Schedule& epoch_read() const { return epoch_raw_.hosts.empty() ? s_ : epoch_raw_; }
  std::vector<uint64_t> epoch_guids_;
  std::vector<char> dropped_;  // per schedule rank
  size_t dropped_count_ = 0;
  std::vector<char> dead_;      // rank 0: per MPI rank, declared dead
  bool new_drops_ = false;      // rank 0: dropped since the last order
  std::vector<int64_t> heard_;  // rank 0: raw time of the last control message per MPI rank
  int64_t next_poll_ = 0, next_beat_ = 0;
  uint64_t pending_epoch_ = 0, pending_round_ = UINT64_MAX;  // a switch ordered
  bool pending_ready_ = false;
  schedule::Schedule pending_;
  uint64_t seg_round_ = 0;                                // the current stretch starts at this round,
  int64_t seg_ns_ = 0;                                    // this long after t0
  std::vector<int32_t> ordered_drops_;                    // rank 0: dropped by the switch ordered
  std::vector<std::pair<uint32_t, int32_t>> dropped_at_;  // rank 0: (stretch, schedule rank)
  std::vector<uint64_t> planned_acc_;                     // rank 0: per channel, the transfers of the stretches before
  const schedule::Schedule& sched() const { return cfg_.follow.on ? cur_ : s_; }
  uint64_t round_by_clock() const;

  // The clock every time in this rank is on: CLOCK_MONOTONIC_RAW (not slewed by NTP), plus the
  // tests' injected offset and rate error.
  int64_t local_of_raw(int64_t raw) const {
    return raw + skew_ + (ppm_ != 0 ? static_cast<int64_t>(static_cast<double>(raw) * ppm_ * 1e-6) : 0);
  }
  int64_t now() const { return local_of_raw(raw_now()); }
  int64_t to_ref(int64_t local) const { return tracker_.to_reference(local); }

  void setup_local();

  void exchange_and_connect();

  void check_agreed(const std::string& error);

  void connect_ctl(size_t k, int peer, uint32_t qpn);

  void post_ctl_recv(size_t k, uint32_t slot);

  void post_data_recv(size_t k);

  void send_ctl(size_t k, Msg m);

  // Receive requests beyond the skip limit, so that a receiver slow to repost does not stall
  // its senders: up to one per round (a rate search's steps may run many rounds).
  uint32_t recv_slack() const { return cfg_.find_rate ? 62 : std::min<uint32_t>(cfg_.rounds, 62); }

  void init_step();

  void init_stats();

  void poll_ctl();

  bool wait_ctl(uint32_t type, size_t k, int64_t deadline, Msg& out, size_t* from = nullptr);

  bool wait_root(uint32_t type, int64_t quiet, Msg& out);

  std::vector<ClockEstimate> clock_sync(bool first, const std::vector<char>* alive = nullptr);

  // ---- during the run: re-synchronisation, progress, stop ------------------------------------

  void resync_step(int64_t t);

  void send_ping();

  void resync_pong(const Msg& m, int64_t t);

  void order_stop(int sig);

  void stop_step();

  void progress_step(int64_t t);

  void sample_rss(double secs);

  void print_progress(int64_t t);

  void service();

  // ---- --follow: epochs and dead ranks -----------------------------------------------------

  void follow_step(int64_t raw);
  void follow_order(uint64_t epoch, schedule::Schedule raw, std::vector<uint64_t> guids);
  void drop_silent(int64_t raw);
  void follow_ready();
  void switch_stretch();

  // ---- the data plane ------------------------------------------------------------------------

  void poll_data();

  void finish_send(const InFlight& f, Status st, int wc_status, int64_t completed);

  void timed_sends();

  void close_trace();

  uint64_t arrived_total() const;

  // ---- the end -------------------------------------------------------------------------------

  void finish_peer();

  void finish_root(RunOutcome& out, const std::vector<ClockEstimate>& before);
  void record_clocks(RunOutcome& out, const std::vector<ClockEstimate>& before, const std::vector<ClockEstimate>& after,
                     const std::vector<char>& alive) const;
};

}  // namespace ibroute::runner::detail
