// The send loop of a rank: transfers posted at their planned times (the skip rule), completions
// polled and counted, the trace written.
#include "rank.hpp"

namespace ibroute::runner::detail {

void Rank::poll_data() {
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
  if (fault_stall_) return;  // tests: a receiver that stopped taking data
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
void Rank::finish_send(const InFlight& f, Status st, int wc_status, int64_t completed) {
  PathCounters& p = stats_.send[f.send];
  const uint32_t d = stats_.dest_of_send[f.send];
  const Channel& ch = channels_[my_send_[f.send]];
  if (f.seg < stats_.epochs.size()) {
    EpochCounts& e = stats_.epochs[f.seg];
    if (st == Status::ok) ++e.ok, e.bytes += cfg_.message_size;
    else if (st == Status::skipped) ++e.skipped;
    else ++e.failed;
  }
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

void Rank::timed_sends() {
  const uint32_t depth = cfg_.skip_after + 1;
  flight_.assign(std::max<size_t>(1, my_send_.size() * depth), InFlight{});
  for (size_t k = flight_.size(); k-- > 0;) free_slots_.push_back(static_cast<uint32_t>(k));
  if (!cfg_.trace_dir.empty()) {
    std::string error;
    try {
      trace_ = std::make_unique<TraceCsv>(cfg_.trace_dir, me_, s_.hosts[static_cast<size_t>(me_)].name, cfg_.schedule_name,
                                          plan_.phases());
    } catch (const std::exception& e) {
      error = e.what();
    }
    check_agreed(error);
  }
  local_t0_ = tracker_.to_local(t0_);
  const int64_t start = now();
  if (!heard_.empty()) std::fill(heard_.begin(), heard_.end(), raw_now());  // silence counts from here
  // The first re-measurement right away, in the start delay: with rank 0's measurement before
  // it, it gives the drift before the first post. The ranks spread over the delay's first half.
  if (cfg_.resync_interval_ns > 0)
    next_resync_ = start + cfg_.start_delay_ns / 2 * static_cast<int64_t>(mpi_.rank()) / std::max(1, mpi_.size());
  // Rank 0 a little after the others: their reports of the same tick are in by then.
  if (cfg_.progress_interval_ns > 0)
    next_progress_ = local_t0_ + cfg_.progress_interval_ns + (mpi_.rank() == 0 ? std::min<int64_t>(cfg_.progress_interval_ns / 4, 200'000'000) : 0);
  std::vector<size_t> qp_of(channels_.size(), SIZE_MAX);
  for (size_t x = 0; x < my_send_.size(); ++x) qp_of[my_send_[x]] = x;
  uint64_t total = plan_.count(rounds_);
  auto phases = static_cast<uint64_t>(std::max<uint32_t>(1, plan_.phases()));
  uint64_t k = 0, sends = 0;  // k: this stretch's; sends: the run's (the tests' fault counts these)
  for (;;) {
    if (cfg_.follow.on) {
      // Following: the next stretch begins where its round comes; with nothing left to send in
      // this one, the rank waits for the run's end by the clock, taking orders meanwhile.
      follow_ready();
      const uint64_t next_round = k < total ? seg_round_ + plan_.at(k).seq / phases : rounds_;
      if (pending_ready_ && pending_round_ <= next_round && pending_round_ < rounds_ && pending_round_ < stop_round_) {
        switch_stretch();
        total = plan_.count(rounds_ - static_cast<uint32_t>(seg_round_)), k = 0;
        phases = static_cast<uint64_t>(std::max<uint32_t>(1, plan_.phases()));
        continue;
      }
      if (k >= total) {
        current_round_ = std::min<uint64_t>(round_by_clock(), rounds_);
        if (current_round_ >= stop_round_ || now() >= tracker_.to_local(t0_ + planned_ns())) break;
        service();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
    } else if (k >= total) {
      break;
    }
    const TimedSend ts = plan_.at(k);
    current_round_ = seg_round_ + ts.seq / phases;
    if (current_round_ >= stop_round_) break;
    // A rate search's step that falls far behind its plan has shown the rate cannot be held.
    if (cfg_.find_rate && now() - local_t0_ > 2 * planned_ns() + 1'000'000'000) break;
    // The planned start on this rank's clock, by its current model of the clock.
    const int64_t at_ns = seg_ns_ + ts.at_ns;
    const int64_t planned = tracker_.to_local(t0_ + at_ns);
    service();  // every step: completions must not wait for a rank that is behind its plan
    if (current_round_ >= stop_round_) break;  // a stop order taken just now
    if (pending_ready_ && pending_round_ <= current_round_) continue;  // a switch ordered just now
    if (int64_t wait = planned - now(); wait > 0) {
      // Far from the next start: sleep until 200 us before it (in steps, to keep taking
      // completions); then spin. Ranks sharing cores leave them to those with work.
      if (raw_now() < hot_until_ || wait <= 20'000) continue;
      if (wait > 300'000) std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(wait - 200'000, 1'000'000)));
      else sched_yield();
      continue;
    }
    if (sends == fault_die_at_) raise(SIGKILL);  // tests
    const auto send = static_cast<uint32_t>(qp_of[ts.channel]);
    const auto seg = static_cast<uint32_t>(stats_.epochs.empty() ? 0 : stats_.epochs.size() - 1);
    InFlight f{ts.seq + seg_round_ * phases, send, planned, 0, false, seg};
    if (!stats_.epochs.empty()) ++stats_.epochs[seg].planned;
    if (!skip_->admit(ts.dst) || free_slots_.empty()) {
      ++stats_.send[send].planned;
      finish_send(f, Status::skipped, -1, 0);
      ++k, ++sends;
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
    wr.imm_data = htonl(static_cast<uint32_t>(f.seq));
    wr.wr.rdma.remote_addr = peer.recv_addr + static_cast<uint64_t>(me_) * cfg_.message_size;
    wr.wr.rdma.rkey = peer.recv_rkey ^ fault_rkey_flip_;
    ibv_send_wr* bad = nullptr;
    const int64_t raw = raw_now();
    f.posted = local_of_raw(raw);
    const int64_t late = f.posted - planned;
    f.late = late > late_threshold_;
    stats_.posted(send, stats_.dest_of_send[send], late);
    if (truth_) {
      // The planned start on the true clock (rank 0's transform inverted) against the post.
      const double ref = static_cast<double>(t0_ + at_ns);
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
    ++k, ++sends;
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
void Rank::close_trace() {
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

}  // namespace ibroute::runner::detail
