// Connection set-up of a rank: the local port and buffers, the hello exchange, data and control
// queue pairs connected, receives posted; the per-step state reset.
#include "rank.hpp"

namespace ibroute::runner::detail {

void Rank::setup_local() {
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

void Rank::exchange_and_connect() {
  Hello h;
  h.schedule_rank = me_;
  h.address = port_.address;
  h.recv_addr = reinterpret_cast<uint64_t>(recv_buf_->data);
  h.recv_rkey = recv_mr_->rkey;
  h.port_guid = port_.port_guid;
  h.epoch = cfg_.follow.first_epoch;
  std::vector<uint8_t> mine(sizeof h);
  std::memcpy(mine.data(), &h, sizeof h);
  std::vector<uint8_t> all = mpi_.allgather(mine);
  hello_.resize(static_cast<size_t>(mpi_.size()));
  std::memcpy(hello_.data(), all.data(), all.size());
  for (size_t r = 1; r < hello_.size(); ++r)
    if (hello_[r].epoch != hello_[0].epoch)
      throw RunError("rank 0 starts on epoch " + std::to_string(hello_[0].epoch) + ", rank " + std::to_string(r) + " on epoch " +
                         std::to_string(hello_[r].epoch) + " (a new one was published while they started): start the run again",
                     true);
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

  // A following run connects every path an epoch may choose (epoch_follow.hpp).
  if (!cfg_.follow.on) channels_ = channels_of(s_);
  else if (const FollowChannels all(map_.base_lids, cfg_.follow.lmc); mpi_.rank() == 0) channels_ = all.all();
  else all.own(me_, channels_, channel_ids_);
  if (cfg_.follow.on) {
    epoch_guids_ = map_.port_guids, epoch_ = cfg_.follow.first_epoch;
    if (mpi_.rank() == 0) cur_ = s_;
    else own_raw_ = cfg_.follow.first_own ? *cfg_.follow.first_own : OwnEpoch{map_.port_guids, true, rank_round(s_, me_)};
    dropped_.assign(n_, 0);
    if (mpi_.rank() == 0) dead_.assign(hello_.size(), 0), heard_.assign(hello_.size(), raw_now());
  }
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
      send_qps_.push_back(create_qp(pd_.get(), send_cq_.get(), send_cq_.get(), depth, 1, lim, cfg_.unreliable));
    for (size_t k = 0; k < my_recv_.size(); ++k) {
      recv_qps_.push_back(create_qp(pd_.get(), recv_cq_.get(), recv_cq_.get(), 1, recv_depth, lim, cfg_.unreliable));
      recv_qp_index_[recv_qps_.back()->qp_num] = k;
    }
    for (size_t k = 0; k < ctl_qps; ++k)
      ctl_qps_.push_back(mpi_.rank() == 0 && k == 0 ? Qp() : create_qp(pd_.get(), ctl_cq_.get(), ctl_cq_.get(), 16, kCtlDepth, lim));
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
      // Acknowledgements (RC) go back over the sender's base LID.
      connect_qp(recv_qps_[k].get(), port_, hello_[p].address, map_.base_lids[static_cast<size_t>(c.src)], their_send[p][used_send[p]++], cfg_.sl);
      // Tests: a stalled receiver takes one transfer per source, then none.
      const uint32_t posts = mpi_.rank() == cfg_.test_stall_rank ? 1 : cfg_.skip_after + 1 + recv_slack();
      for (uint32_t d = 0; d < posts; ++d) post_data_recv(k);
    }
    for (size_t k = 0; k < my_send_.size(); ++k) {
      const Channel& c = channels_[my_send_[k]];
      size_t p = static_cast<size_t>(mpi_of_[static_cast<size_t>(c.dst)]);
      connect_qp(send_qps_[k].get(), port_, hello_[p].address, c.dlid, their_recv[p][used_recv[p]++], cfg_.sl);
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

void Rank::check_agreed(const std::string& error) {
  std::vector<std::string> errors = mpi_.agree(error);
  for (size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty()) throw RunError("rank " + std::to_string(r) + ": " + errors[r], true);
}

void Rank::connect_ctl(size_t k, int peer, uint32_t qpn) {
  const Hello& h = hello_[static_cast<size_t>(peer)];
  connect_qp(ctl_qps_[k].get(), port_, h.address, map_.base_lids[static_cast<size_t>(h.schedule_rank)], qpn, cfg_.sl);
  for (uint32_t slot = 0; slot < kCtlDepth; ++slot) post_ctl_recv(k, slot);
}

void Rank::post_ctl_recv(size_t k, uint32_t slot) {
  ibv_sge sge{reinterpret_cast<uint64_t>(ctl_buf_->data + (k * kCtlDepth + slot) * kCtlSlot), kCtlSlot, ctl_mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = k * kCtlDepth + slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (ibv_post_recv(ctl_qps_[k].get(), &wr, &bad)) throw VerbsError("ibv_post_recv (control) failed");
}

void Rank::post_data_recv(size_t k) {
  ibv_recv_wr wr{};
  wr.wr_id = k;
  ibv_recv_wr* bad = nullptr;
  if (ibv_post_recv(recv_qps_[k].get(), &wr, &bad)) throw VerbsError("ibv_post_recv failed");
}

// A step of the run (the run, or one rate of a rate search): its sends and fresh aggregates.
void Rank::init_step() {
  // The first epoch's, when following (another rank than 0: from its own slice).
  plan_ = cfg_.follow.first_own ? SendPlan(cfg_.follow.first_own->round, channels_, me_, slot_ns_) : SendPlan(s_, channels_, me_, slot_ns_);
  init_stats();
  skip_ = std::make_unique<SkipRule>(n_, cfg_.skip_after);
  free_slots_.clear();
  open_ = 0, current_round_ = 0, rounds_run_ = 0;
  printed_ = {}, printed_at_ = 0;
}

// The aggregates' shape: my send channels, receive channels and destinations.
void Rank::init_stats() {
  stats_ = RankStats::shaped(channels_, channel_ids_, me_, planned_ns());
  if (cfg_.follow.on) stats_.epochs.push_back({epoch_, 0, 0, 0, 0, 0, 0, 0, round_ns()});
  skipped_since_.assign(stats_.dests.size(), 0);
  if (mpi_.rank() == 0) progress_.assign(static_cast<size_t>(mpi_.size()), PeerProgress{}), skipped_to_.assign(n_, 0);
}

}  // namespace ibroute::runner::detail
