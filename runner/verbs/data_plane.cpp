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

#include "ibroute/runner/clock_sync.hpp"
#include "ibroute/runner/run_plan.hpp"
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

// Control messages on the clock-sync queue pairs (rank 0 <-> every rank).
enum MsgType : uint32_t { kPing = 1, kPong, kSyncEnd, kDone, kFinish };
struct Msg {
  uint32_t type = 0;
  int32_t from = 0;
  int64_t t = 0;  // sender's clock
  int64_t a = 0, b = 0;
};
constexpr uint32_t kCtlDepth = 8;
constexpr size_t kCtlSlot = 64;

// What every rank tells every other before connecting.
struct Hello {
  int32_t schedule_rank = -1;
  PortAddress address;
  uint64_t recv_addr = 0;
  uint32_t recv_rkey = 0;
  uint64_t port_guid = 0;
};

struct Arrival {
  int32_t src = 0;
  uint32_t seq = 0;
  int64_t t = 0;
  uint8_t verified = 0;
};

uint64_t pattern(int32_t src, size_t word) { return (static_cast<uint64_t>(src) + 1) * 0x9E3779B97F4A7C15ull ^ word; }

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%016llx", static_cast<unsigned long long>(v));
  return b;
}

template <class T>
void append(std::vector<uint8_t>& out, const std::vector<T>& v) {
  uint64_t n = v.size();
  const auto* p = reinterpret_cast<const uint8_t*>(&n);
  out.insert(out.end(), p, p + sizeof n);
  const auto* d = reinterpret_cast<const uint8_t*>(v.data());
  out.insert(out.end(), d, d + n * sizeof(T));
}
template <class T>
std::vector<T> take(const std::vector<uint8_t>& in, size_t& pos) {
  uint64_t n = 0;
  if (pos + sizeof n > in.size()) throw RunError("truncated result message");
  std::memcpy(&n, in.data() + pos, sizeof n);
  pos += sizeof n;
  if (pos + n * sizeof(T) > in.size()) throw RunError("truncated result message");
  std::vector<T> v(n);
  std::memcpy(v.data(), in.data() + pos, n * sizeof(T));
  pos += n * sizeof(T);
  return v;
}

class Rank {
 public:
  Rank(Bootstrap& mpi, const schedule::Schedule& s, const RankMapping& map, const RunConfig& cfg)
      : mpi_(mpi), s_(s), map_(map), cfg_(cfg), n_(s.hosts.size()) {
    if (!cfg.test_clock_skew_ns.empty()) skew_ = cfg.test_clock_skew_ns[static_cast<size_t>(mpi.rank()) % cfg.test_clock_skew_ns.size()];
  }

  RunOutcome run() {
    setup_local();  // errors agreed on inside
    exchange_and_connect();
    RunOutcome out;
    out.root = mpi_.rank() == 0;
    out.schedule_rank = sched_of_;
    out.device = port_.device_name;
    out.ethernet = port_.address.ethernet;
    std::vector<ClockEstimate> before = clock_sync(true);
    // t0 on rank 0's clock; each rank converts it with its offset.
    std::vector<int64_t> offsets(static_cast<size_t>(mpi_.size()), 0);
    int64_t t0 = 0;
    if (mpi_.rank() == 0) {
      for (int r = 1; r < mpi_.size(); ++r) offsets[static_cast<size_t>(r)] = before[static_cast<size_t>(r)].offset_ns;
      t0 = now() + cfg_.start_delay_ns;
    }
    mpi_.broadcast(offsets.data(), offsets.size() * sizeof(int64_t));
    mpi_.broadcast(&t0, sizeof t0);
    out.t0_ns = t0;
    timed_sends(t0 + offsets[static_cast<size_t>(mpi_.rank())]);
    if (mpi_.rank() == 0) finish_root(out, before, t0);
    else finish_peer();
    return out;
  }

 private:
  Bootstrap& mpi_;
  const schedule::Schedule& s_;
  const RankMapping& map_;
  const RunConfig& cfg_;
  size_t n_;
  int64_t skew_ = 0;
  int32_t me_ = -1;  // my schedule rank
  std::vector<int32_t> sched_of_, mpi_of_;
  std::vector<Channel> channels_;
  std::vector<uint32_t> my_send_, my_recv_;  // channel indices
  std::vector<TimedSend> sends_;
  std::vector<Hello> hello_;  // per MPI rank

  // Verbs objects in creation order (destroyed in reverse).
  OpenPort port_;
  Pd pd_;
  std::unique_ptr<Buffer> send_buf_, recv_buf_, ctl_buf_;
  Mr send_mr_, recv_mr_, ctl_mr_;
  Cq send_cq_, recv_cq_, ctl_cq_;
  std::vector<Qp> send_qps_, recv_qps_, ctl_qps_;  // ctl_qps_: per MPI rank at rank 0, one elsewhere

  std::unordered_map<uint32_t, size_t> recv_qp_index_;  // QP number -> index into recv_qps_
  std::vector<TransferRecord> records_;                 // my sends, local clock
  std::vector<Arrival> arrivals_;
  std::deque<std::pair<size_t, Msg>> inbox_;  // control messages not yet asked for (qp index, msg)
  std::unique_ptr<SkipRule> skip_;
  size_t open_ = 0;
  static constexpr int64_t kHotNs = 5'000'000;
  int64_t hot_until_ = 0;  // control traffic seen lately: spin, do not sleep

  int64_t now() const { return raw_now() + skew_; }

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
          throw RunError("port GUID " + hex(port_.port_guid) + " of " + port_.device_name + " port " + std::to_string(port_.port_num) +
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
    sends_ = sends_of(s_, channels_, me_, cfg_.rounds, cfg_.slot_ns);
    skip_ = std::make_unique<SkipRule>(n_, cfg_.skip_after);

    std::string error;
    std::vector<std::vector<uint8_t>> to(static_cast<size_t>(mpi_.size()));
    try {
      const uint32_t depth = cfg_.skip_after + 1;
      // Receive requests: one per transfer a source may have open, plus slack (up to one per
      // round) so that a receiver that is slow to repost does not stall its senders.
      const uint32_t recv_depth = depth + std::min<uint32_t>(cfg_.rounds, 62);
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
        const uint32_t posts = mpi_.rank() == cfg_.test_stall_rank ? 1 : cfg_.skip_after + 1 + std::min<uint32_t>(cfg_.rounds, 62);
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

  // Polls the control CQ once; queues received messages.
  void poll_ctl() {
    ibv_wc wc[8];
    int got = ibv_poll_cq(ctl_cq_.get(), 8, wc);
    for (int x = 0; x < got; ++x) {
      if (wc[x].status != IBV_WC_SUCCESS || wc[x].opcode != IBV_WC_RECV) continue;
      size_t k = wc[x].wr_id / kCtlDepth;
      auto slot = static_cast<uint32_t>(wc[x].wr_id % kCtlDepth);
      Msg m;
      std::memcpy(&m, ctl_buf_->data + wc[x].wr_id * kCtlSlot, sizeof m);
      post_ctl_recv(k, slot);
      inbox_.emplace_back(k, m);
      hot_until_ = raw_now() + kHotNs;
    }
  }

  // Waits for a control message of `type` from QP k (any QP if k == SIZE_MAX) until `deadline`,
  // answering pings and taking data meanwhile. Other messages stay queued.
  bool wait_ctl(uint32_t type, size_t k, int64_t deadline, Msg& out, size_t* from = nullptr) {
    for (;;) {
      for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
        if (it->second.type == kPing) {
          Msg pong;
          pong.type = kPong;
          pong.t = now();
          size_t q = it->first;
          inbox_.erase(it);
          send_ctl(q, pong);
          break;
        }
        if (it->second.type == type && (k == SIZE_MAX || it->first == k)) {
          out = it->second;
          if (from) *from = it->first;
          inbox_.erase(it);
          return true;
        }
      }
      poll_ctl();
      poll_data();
      if (raw_now() > deadline) return false;
      // Spin while control traffic flows (a clock ping-pong's delay is its error); else sleep,
      // so that ranks sharing cores (tests, VMs) leave them to those with work.
      if (inbox_.empty()) {
        if (raw_now() < hot_until_) sched_yield();
        else std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  // Rank 0 measures every rank's offset; the others answer until told it is over.
  std::vector<ClockEstimate> clock_sync(bool first, const std::vector<char>* alive = nullptr) {
    std::vector<ClockEstimate> est(static_cast<size_t>(mpi_.size()));
    const int64_t timeout = cfg_.finish_timeout_ns;
    if (mpi_.rank() != 0) {
      if (first) {
        Msg m;
        if (!wait_ctl(kSyncEnd, 0, raw_now() + timeout, m)) throw RunError("rank 0 never finished the clock sync");
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

  void poll_data() {
    ibv_wc wc[32];
    int got = ibv_poll_cq(send_cq_.get(), 32, wc);
    int64_t t = got > 0 ? now() : 0;
    for (int x = 0; x < got; ++x) {
      TransferRecord& rec = records_[wc[x].wr_id];
      rec.completed_ns = t;
      if (wc[x].status == IBV_WC_SUCCESS) rec.status = Status::ok;
      else rec.status = Status::failed, rec.wc_status = wc[x].status;
      skip_->finished(rec.dst);
      --open_;
    }
    if (mpi_.rank() == cfg_.test_stall_rank) return;  // tests: a receiver that stopped taking data
    got = ibv_poll_cq(recv_cq_.get(), 32, wc);
    t = got > 0 ? now() : 0;
    for (int x = 0; x < got; ++x) {
      if (wc[x].status != IBV_WC_SUCCESS) continue;
      auto it = recv_qp_index_.find(wc[x].qp_num);
      if (it == recv_qp_index_.end()) continue;
      const int32_t src = channels_[my_recv_[it->second]].src;
      Arrival a{src, ntohl(wc[x].imm_data), t, 0};
      if (cfg_.verify) {
        auto* words = reinterpret_cast<uint64_t*>(recv_buf_->data + static_cast<size_t>(src) * cfg_.message_size);
        bool good = true;
        for (size_t w = 0; w < cfg_.message_size / 8 && good; ++w) good = words[w] == pattern(src, w);
        // Not cleared afterwards: the next write from src may already be landing in the region.
        a.verified = good ? 1 : 2;
      }
      arrivals_.push_back(a);
      post_data_recv(it->second);
    }
  }

  void timed_sends(int64_t local_t0) {
    records_.resize(sends_.size());
    for (size_t i = 0; i < sends_.size(); ++i) {
      TransferRecord& r = records_[i];
      r.seq = sends_[i].seq;
      r.src = me_;
      r.dst = sends_[i].dst;
      r.dlid = sends_[i].dlid;
      r.bytes = cfg_.message_size;
      r.planned_ns = local_t0 + sends_[i].at_ns;
    }
    size_t k = 0;
    std::vector<size_t> qp_of(channels_.size(), SIZE_MAX);
    for (size_t x = 0; x < my_send_.size(); ++x) qp_of[my_send_[x]] = x;
    while (k < sends_.size()) {
      if (int64_t wait = records_[k].planned_ns - now(); wait > 0) {
        poll_data();
        // Far from the next start: sleep until 200 us before it (in steps, to keep taking
        // completions); then spin. Ranks sharing cores leave them to those with work.
        if (wait > 300'000) std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(wait - 200'000, 1'000'000)));
        else if (wait > 20'000) sched_yield();
        continue;
      }
      if (mpi_.rank() == cfg_.test_die_rank && k == cfg_.test_die_at) raise(SIGKILL);
      TransferRecord& rec = records_[k];
      const TimedSend& ts = sends_[k];
      if (!skip_->admit(ts.dst)) {
        rec.status = Status::skipped;
        ++k;
        continue;
      }
      const Hello& peer = hello_[static_cast<size_t>(mpi_of_[static_cast<size_t>(ts.dst)])];
      ibv_sge sge{reinterpret_cast<uint64_t>(send_buf_->data), static_cast<uint32_t>(cfg_.message_size), send_mr_->lkey};
      ibv_send_wr wr{};
      wr.wr_id = k;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.imm_data = htonl(ts.seq);
      wr.wr.rdma.remote_addr = peer.recv_addr + static_cast<uint64_t>(me_) * cfg_.message_size;
      wr.wr.rdma.rkey = peer.recv_rkey ^ (mpi_.rank() == cfg_.test_bad_rkey_rank ? 0x1u : 0u);
      ibv_send_wr* bad = nullptr;
      rec.posted_ns = now();
      if (ibv_post_send(send_qps_[qp_of[ts.channel]].get(), &wr, &bad)) {
        rec.status = Status::failed;
        rec.wc_status = -2;
      } else {
        rec.status = Status::timeout;  // until its completion arrives
        skip_->posted(ts.dst);
        ++open_;
      }
      ++k;
    }
    const int64_t deadline = raw_now() + cfg_.drain_ns;
    while (open_ > 0 && raw_now() < deadline) poll_data();
  }

  void finish_peer() {
    Msg done;
    done.type = kDone;
    done.a = static_cast<int64_t>(open_);
    send_ctl(0, done);
    Msg fin;
    if (!wait_ctl(kFinish, 0, raw_now() + 2 * cfg_.finish_timeout_ns, fin)) throw RunError("rank 0 did not finish the run (did it die?)");
    std::vector<uint8_t> blob;
    append(blob, records_);
    append(blob, arrivals_);
    mpi_.send(0, blob);
    if (fin.a > 0) mpi_.abandon();  // a rank died: MPI_Finalize would wait for it
  }

  void finish_root(RunOutcome& out, const std::vector<ClockEstimate>& before, int64_t t0) {
    const auto size = static_cast<size_t>(mpi_.size());
    std::vector<char> alive(size, 0);
    alive[0] = 1;
    size_t waiting = size - 1;
    const int64_t deadline = raw_now() + cfg_.finish_timeout_ns;
    while (waiting > 0) {
      Msg m;
      size_t from = 0;
      if (!wait_ctl(kDone, SIZE_MAX, deadline, m, &from)) break;
      if (!alive[from]) alive[from] = 1, --waiting;
    }
    std::vector<ClockEstimate> after = clock_sync(false, &alive);
    Msg fin;
    fin.type = kFinish;
    fin.a = static_cast<int64_t>(waiting);
    for (size_t r = 1; r < size; ++r)
      if (alive[r]) send_ctl(r, fin);
    // Local times to rank 0's clock, with the drift seen between the two measurements.
    std::vector<ClockModel> model(size);
    for (size_t r = 1; r < size; ++r) {
      if (before[r].samples == 0) continue;
      model[r] = fit_clock(before[r], alive[r] && after[r].samples ? &after[r] : nullptr);
      RankClock rc;
      rc.rank = sched_of_[r];
      rc.before = before[r];
      rc.after = after[r];
      rc.measured_after = alive[r] && after[r].samples > 0;
      rc.drift_ppm = model[r].drift * 1e6;
      out.clocks.push_back(rc);
    }
    std::unordered_map<uint64_t, size_t> index;
    auto key = [](int32_t src, uint32_t seq) { return static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32 | seq; };
    std::vector<std::vector<Arrival>> arrivals(size);
    for (size_t r = 0; r < size; ++r) {
      std::vector<TransferRecord> recs;
      if (r == 0) {
        recs = records_, arrivals[0] = arrivals_;
      } else if (alive[r]) {
        std::vector<uint8_t> blob = mpi_.receive(static_cast<int>(r));
        size_t pos = 0;
        recs = take<TransferRecord>(blob, pos);
        arrivals[r] = take<Arrival>(blob, pos);
      } else {
        out.missing.push_back(sched_of_[r]);
        for (const TimedSend& ts : sends_of(s_, channels_, sched_of_[r], cfg_.rounds, cfg_.slot_ns)) {
          TransferRecord t;
          t.seq = ts.seq, t.src = sched_of_[r], t.dst = ts.dst, t.dlid = ts.dlid, t.bytes = cfg_.message_size;
          t.status = Status::lost;
          t.planned_ns = t0 + ts.at_ns;
          recs.push_back(t);
        }
      }
      auto conv = [&](int64_t t) { return t ? model[r].to_reference(t) : 0; };
      for (TransferRecord& t : recs) {
        if (alive[r]) t.planned_ns = conv(t.planned_ns), t.posted_ns = conv(t.posted_ns), t.completed_ns = conv(t.completed_ns);
        index[key(t.src, t.seq)] = out.records.size();
        out.records.push_back(t);
      }
    }
    for (size_t r = 0; r < size; ++r)
      for (const Arrival& a : arrivals[r]) {
        auto it = index.find(key(a.src, a.seq));
        if (it == index.end()) continue;
        TransferRecord& t = out.records[it->second];
        t.arrived_ns = model[r].to_reference(a.t);
        t.verified = a.verified;
        if (t.status == Status::lost) t.status = Status::ok, t.completed_ns = t.arrived_ns;  // arrived before its sender died
      }
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
  Rank r(mpi, s, map, cfg);
  return r.run();
}

}  // namespace ibroute::runner
