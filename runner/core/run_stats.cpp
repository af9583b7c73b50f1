#include "ibroute/runner/run_stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "ibroute/fabric/enum_names.hpp"

namespace ibroute::runner {

const char* to_string(Status s) {
  // In Status' order; string literals, so the views are terminated.
  static constexpr std::array<std::string_view, 5> kNames{"ok", "skipped", "timeout", "failed", "lost"};
  static_assert(kNames.size() == static_cast<size_t>(Status::lost) + 1, "a name for every Status");
  return fabric::enum_name(kNames, s).data();
}

void PathCounters::merge(const PathCounters& o) {
  planned += o.planned, ok += o.ok, skipped += o.skipped, timeout += o.timeout, failed += o.failed, lost += o.lost;
  bytes += o.bytes, busy_ns += o.busy_ns, arrived += o.arrived, corrupt += o.corrupt;
}

ThroughputSeries::ThroughputSeries(int64_t planned_ns) {
  constexpr int64_t kSecond = 1'000'000'000;
  const int64_t per = (std::max<int64_t>(planned_ns, 0) / static_cast<int64_t>(kMax - 16)) + 1;
  interval_ns_ = std::max(kSecond, (per + kSecond - 1) / kSecond * kSecond);
}

void ThroughputSeries::add(int64_t since_t0_ns, uint64_t bytes) {
  // Late completions (the drain, a clock step) land in the last interval rather than growing it.
  const auto k =
      static_cast<size_t>(std::clamp<int64_t>(since_t0_ns / interval_ns_, 0, static_cast<int64_t>(kMax - 1)));
  if (bytes_.size() <= k) bytes_.resize(k + 1, 0);
  bytes_[k] += bytes;
}

void ThroughputSeries::merge(const ThroughputSeries& o) {
  if (o.interval_ns_ > interval_ns_) {  // coarsen this one to the other's interval
    std::vector<uint64_t> b;
    for (size_t k = 0; k < bytes_.size(); ++k) {
      const auto j = static_cast<size_t>(static_cast<int64_t>(k) * interval_ns_ / o.interval_ns_);
      if (b.size() <= j) b.resize(j + 1, 0);
      b[j] += bytes_[k];
    }
    bytes_ = std::move(b), interval_ns_ = o.interval_ns_;
  }
  for (size_t k = 0; k < o.bytes_.size(); ++k) add(static_cast<int64_t>(k) * o.interval_ns_, o.bytes_[k]);
}

bool ThroughputSeries::make(int64_t interval_ns, std::vector<uint64_t> bytes, ThroughputSeries& out) {
  if (interval_ns < 1'000'000'000 || interval_ns % 1'000'000'000 || bytes.size() > kMax) return false;
  out.interval_ns_ = interval_ns, out.bytes_ = std::move(bytes);
  return true;
}

void TruthTrack::add(int64_t err) {
  if (!measured || err < min_ns) min_ns = err;
  if (!measured || err > max_ns) max_ns = err;
  measured = true;
  abs_ns.add(err < 0 ? -err : err);
}

void TruthTrack::merge(const TruthTrack& o) {
  if (!o.measured) return;
  if (!measured || o.min_ns < min_ns) min_ns = o.min_ns;
  if (!measured || o.max_ns > max_ns) max_ns = o.max_ns;
  measured = true;
  abs_ns.merge(o.abs_ns);
}

RankStats RankStats::shaped(const std::vector<Channel>& channels, const std::vector<uint32_t>& ids, int32_t rank,
                            int64_t planned_ns) {
  RankStats s;
  s.rank = rank;
  std::vector<int32_t> send_dst;
  for (uint32_t c = 0; c < channels.size(); ++c) {
    const uint32_t id = ids.empty() ? c : ids[c];
    if (channels[c].src == rank) s.send_channels.push_back(id), send_dst.push_back(channels[c].dst);
    if (channels[c].dst == rank) s.recv_channels.push_back(id);
  }
  s.dests = send_dst;
  std::sort(s.dests.begin(), s.dests.end());
  s.dests.erase(std::unique(s.dests.begin(), s.dests.end()), s.dests.end());
  for (int32_t d : send_dst) s.dest_of_send.push_back(static_cast<uint32_t>(s.dest_index(d)));
  s.send.assign(s.send_channels.size(), PathCounters{});
  s.arrived.assign(s.recv_channels.size(), 0);
  s.corrupt.assign(s.recv_channels.size(), 0);
  s.late.assign(s.dests.size(), LogHistogram{});
  s.completion.assign(s.dests.size(), LogHistogram{});
  s.sent = ThroughputSeries(planned_ns);
  return s;
}

size_t RankStats::dest_index(int32_t dst) const {
  auto it = std::lower_bound(dests.begin(), dests.end(), dst);
  return it != dests.end() && *it == dst ? static_cast<size_t>(it - dests.begin()) : SIZE_MAX;
}

void RankStats::completed(size_t s, size_t dest, int64_t busy_ns, uint64_t bytes, int64_t since_t0_ns) {
  PathCounters& p = send[s];
  ++p.ok;
  p.bytes += bytes;
  p.busy_ns += static_cast<uint64_t>(std::max<int64_t>(busy_ns, 0));
  completion[dest].add(busy_ns);
  bytes_sent += bytes;
  sent.add(since_t0_ns, bytes);
}

void RankStats::anomaly(const TransferRecord& t, size_t cap) {
  if (anomalies.size() < cap)
    anomalies.push_back(t);
  else
    ++anomalies_dropped;
}

// ---- byte form -------------------------------------------------------------------------------

namespace {

constexpr uint32_t kMagic = 0x31535249;  // "IRS1"

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof v);
  }
  template <class T>
  void list(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    for (const T& x : v) put(x);
  }
  void hist(const LogHistogram& h) {
    put(h.count()), put(h.negative()), put(h.min()), put(h.max()), put(h.sum());
    put<uint16_t>(h.buckets_used());
    h.for_each_bucket([&](uint16_t b, uint64_t n) { put(b), put(n); });
  }
  std::vector<uint8_t> out;
};

class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& in) : in_(in) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    if (in_.size() - pos_ < sizeof(T)) throw std::runtime_error("truncated result message");
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  // At most `limit` elements, and no more than the bytes left can hold.
  template <class T>
  std::vector<T> list(uint64_t limit, const char* what) {
    const auto n = get<uint64_t>();
    if (n > limit || n > (in_.size() - pos_) / sizeof(T))
      throw std::runtime_error(std::string("result message: too many ") + what);
    std::vector<T> v(n);
    for (T& x : v) x = get<T>();
    return v;
  }
  void hist(LogHistogram& into) {
    LogHistogram::Sparse& s = sparse_;  // reused: a message holds thousands
    s.buckets.clear();
    s.count = get<uint64_t>(), s.negative = get<uint64_t>(), s.min = get<int64_t>(), s.max = get<int64_t>(),
    s.sum = get<int64_t>();
    const auto n = get<uint16_t>();
    if (n > LogHistogram::kBuckets) throw std::runtime_error("result message: a histogram with too many buckets");
    for (uint16_t k = 0; k < n; ++k) {
      auto b = get<uint16_t>();
      s.buckets.emplace_back(b, get<uint64_t>());
    }
    if (!LogHistogram::from_sparse(s, into)) throw std::runtime_error("result message: an inconsistent histogram");
  }
  LogHistogram hist() {
    LogHistogram h;
    hist(h);
    return h;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  LogHistogram::Sparse sparse_;
  const std::vector<uint8_t>& in_;
  size_t pos_ = 0;
};

void put_track(Writer& w, const ClockTrack& c) {
  w.put(c.offset_ns), w.put(c.uncertainty_ns), w.put(c.drift_ppm), w.put(c.resyncs), w.put(c.resync_failures),
      w.put(c.residual_max_ns), w.put(c.residual_rms_ns);
}

ClockTrack get_track(Reader& r) {
  ClockTrack c;
  c.offset_ns = r.get<int64_t>(), c.uncertainty_ns = r.get<int64_t>(), c.drift_ppm = r.get<double>();
  c.resyncs = r.get<uint32_t>(), c.resync_failures = r.get<uint32_t>(), c.residual_max_ns = r.get<int64_t>();
  c.residual_rms_ns = r.get<double>();
  if (!std::isfinite(c.drift_ppm) || !std::isfinite(c.residual_rms_ns) || c.uncertainty_ns < 0 || c.residual_max_ns < 0)
    throw std::runtime_error("result message: an impossible clock track");
  return c;
}

}  // namespace

std::vector<uint8_t> encode(const RankStats& s) {
  Writer w;
  w.out.reserve(4096 + s.send.size() * (sizeof(PathCounters) + 4) + s.dests.size() * 200 +
                s.anomalies.size() * sizeof(TransferRecord));
  w.put(kMagic), w.put(s.rank), w.put(s.rounds_run);
  w.list(s.send_channels), w.list(s.send), w.list(s.recv_channels), w.list(s.arrived), w.list(s.corrupt),
      w.list(s.dests);
  for (size_t k = 0; k < s.dests.size(); ++k) w.hist(s.late[k]), w.hist(s.completion[k]);
  w.put(s.sent.interval_ns()), w.list(s.sent.bytes());
  w.put(s.bytes_sent), w.put(s.first_post_ns), w.put(s.last_completion_ns);
  w.list(s.anomalies), w.put(s.anomalies_dropped);
  put_track(w, s.clock);
  w.put<uint8_t>(s.truth.measured), w.put(s.truth.min_ns), w.put(s.truth.max_ns), w.hist(s.truth.abs_ns);
  w.list(s.epochs);
  return std::move(w.out);
}

RankStats decode(const std::vector<uint8_t>& bytes, const std::vector<Channel>& channels, size_t ranks) {
  Reader r(bytes);
  if (r.get<uint32_t>() != kMagic) throw std::runtime_error("not a result message of this ibroute version");
  RankStats s;
  s.rank = r.get<int32_t>();
  if (s.rank < 0 || static_cast<size_t>(s.rank) >= ranks) throw std::runtime_error("result message: rank out of range");
  s.rounds_run = r.get<uint32_t>();
  auto own = [&](const std::vector<uint32_t>& ids, bool sending) {
    for (size_t k = 0; k < ids.size(); ++k) {
      if (ids[k] >= channels.size() || (k && ids[k] <= ids[k - 1]))
        throw std::runtime_error("result message: channel ids out of range or out of order");
      const Channel& c = channels[ids[k]];
      if ((sending ? c.src : c.dst) != s.rank) throw std::runtime_error("result message: a channel of another rank");
    }
  };
  s.send_channels = r.list<uint32_t>(channels.size(), "send channels");
  own(s.send_channels, true);
  s.send = r.list<PathCounters>(channels.size(), "send counters");
  s.recv_channels = r.list<uint32_t>(channels.size(), "receive channels");
  own(s.recv_channels, false);
  s.arrived = r.list<uint64_t>(channels.size(), "arrivals");
  s.corrupt = r.list<uint64_t>(channels.size(), "arrivals");
  if (s.send.size() != s.send_channels.size() || s.arrived.size() != s.recv_channels.size() ||
      s.corrupt.size() != s.recv_channels.size())
    throw std::runtime_error("result message: counters do not match the channels");
  for (size_t k = 0; k < s.corrupt.size(); ++k)
    if (s.corrupt[k] > s.arrived[k]) throw std::runtime_error("result message: more corrupt transfers than arrived");
  s.dests = r.list<int32_t>(ranks, "destinations");
  for (size_t k = 0; k < s.dests.size(); ++k)
    if (s.dests[k] < 0 || static_cast<size_t>(s.dests[k]) >= ranks || (k && s.dests[k] <= s.dests[k - 1]))
      throw std::runtime_error("result message: destinations out of range or out of order");
  s.late.resize(s.dests.size()), s.completion.resize(s.dests.size());
  for (size_t k = 0; k < s.dests.size(); ++k) r.hist(s.late[k]), r.hist(s.completion[k]);
  const auto interval = r.get<int64_t>();
  if (!ThroughputSeries::make(interval, r.list<uint64_t>(ThroughputSeries::kMax, "throughput intervals"), s.sent))
    throw std::runtime_error("result message: a throughput series of another shape");
  s.bytes_sent = r.get<uint64_t>(), s.first_post_ns = r.get<int64_t>(), s.last_completion_ns = r.get<int64_t>();
  // Times on rank 0's monotonic clock: from boot, never negative, far below 2^62 ns (146 years).
  constexpr int64_t kMaxTime = int64_t{1} << 62;
  if (s.first_post_ns < 0 || s.first_post_ns > kMaxTime || s.last_completion_ns < 0 || s.last_completion_ns > kMaxTime)
    throw std::runtime_error("result message: a first or last transfer time out of range");
  s.anomalies = r.list<TransferRecord>(1u << 20, "anomalies");
  for (const TransferRecord& t : s.anomalies)
    if (t.src < 0 || t.dst < 0 || static_cast<size_t>(t.src) >= ranks || static_cast<size_t>(t.dst) >= ranks ||
        static_cast<uint8_t>(t.status) > static_cast<uint8_t>(Status::lost) || t.verified > 2)
      throw std::runtime_error("result message: an anomaly record out of range");
  s.anomalies_dropped = r.get<uint64_t>();
  s.clock = get_track(r);
  const auto measured = r.get<uint8_t>();
  if (measured > 1) throw std::runtime_error("result message: an impossible truth flag");
  s.truth.measured = measured == 1;
  s.truth.min_ns = r.get<int64_t>(), s.truth.max_ns = r.get<int64_t>();
  s.truth.abs_ns = r.hist();
  s.epochs = r.list<EpochCounts>(1u << 16, "epochs");
  for (size_t k = 0; k < s.epochs.size(); ++k) {
    const EpochCounts& e = s.epochs[k];
    if ((k && (e.from_round < s.epochs[k - 1].from_round || e.epoch < s.epochs[k - 1].epoch)) ||
        e.ok + e.skipped + e.failed > e.planned || e.dropped > ranks || e.round_ns <= 0)
      throw std::runtime_error("result message: an epoch's counts out of order or out of range");
  }
  if (!r.done()) throw std::runtime_error("result message: bytes after its end");
  return s;
}

// ---- rank 0's merge --------------------------------------------------------------------------

RunMerge::RunMerge(const std::vector<Channel>& ch, size_t ranks, int64_t planned_ns, size_t cap)
    : channels(ch), paths(ch.size()), nodes(ranks), throughput(planned_ns), anomaly_cap(cap) {}

void RunMerge::add(const RankStats& s) {
  NodeTotals& me = nodes[static_cast<size_t>(s.rank)];
  me.reported = true;
  me.bytes_sent += s.bytes_sent;
  me.first_post_ns = s.first_post_ns, me.last_completion_ns = s.last_completion_ns;
  me.clock = s.clock, me.rounds_run = s.rounds_run, me.anomalies_dropped = s.anomalies_dropped;
  for (size_t k = 0; k < s.send_channels.size(); ++k) {
    const PathCounters& p = s.send[k];
    PathCounters& into = paths[s.send_channels[k]];
    PathCounters sender = p;
    sender.arrived = sender.corrupt = 0;  // the receiver's to say
    into.merge(sender);
    me.ok += p.ok, me.skipped += p.skipped, me.failed += p.timeout + p.failed + p.lost;
    nodes[static_cast<size_t>(channels[s.send_channels[k]].dst)].bytes_received += p.bytes;
  }
  for (size_t k = 0; k < s.recv_channels.size(); ++k) {
    paths[s.recv_channels[k]].arrived += s.arrived[k];
    paths[s.recv_channels[k]].corrupt += s.corrupt[k];
  }
  for (size_t k = 0; k < s.dests.size(); ++k) {
    me.late.merge(s.late[k]), me.completion.merge(s.completion[k]);
    nodes[static_cast<size_t>(s.dests[k])].completion_in.merge(s.completion[k]);
    late.merge(s.late[k]), completion.merge(s.completion[k]);
  }
  throughput.merge(s.sent);
  truth.merge(s.truth);
  for (const TransferRecord& t : s.anomalies) {
    if (anomalies.size() < anomaly_cap)
      anomalies.push_back(t);
    else
      ++anomalies_dropped;
  }
  anomalies_dropped += s.anomalies_dropped;
  for (size_t k = 0; k < s.epochs.size(); ++k) {
    const EpochCounts& e = s.epochs[k];
    if (k == epochs.size())
      epochs.push_back({e.epoch, e.from_round, 0, 0, 0, 0, 0, e.dropped, e.round_ns}),
          epoch_ranks_agreeing.push_back(0);
    EpochCounts& into = epochs[k];
    into.planned += e.planned, into.ok += e.ok, into.skipped += e.skipped, into.failed += e.failed,
        into.bytes += e.bytes;
    if (e.epoch == into.epoch && e.from_round == into.from_round && e.dropped == into.dropped)
      ++epoch_ranks_agreeing[k];
  }
}

void RunMerge::lost(int32_t rank, const std::vector<uint64_t>& planned, uint64_t message_size) {
  NodeTotals& me = nodes[static_cast<size_t>(rank)];
  for (size_t c = 0; c < channels.size(); ++c) {
    if (channels[c].src != rank) continue;
    PathCounters& p = paths[c];
    p.planned = planned[c];
    // What arrived before it died was delivered; the rest is lost.
    p.ok = std::min(p.arrived, p.planned);
    p.lost = p.planned - p.ok;
    p.bytes = p.ok * message_size;
    me.ok += p.ok, me.failed += p.lost, me.bytes_sent += p.bytes;
    nodes[static_cast<size_t>(channels[c].dst)].bytes_received += p.bytes;
  }
}

void RunMerge::settle_unreliable(uint64_t message_size) {
  for (size_t c = 0; c < channels.size(); ++c) {
    PathCounters& p = paths[c];
    if (p.ok <= p.arrived) continue;
    const uint64_t gone = p.ok - p.arrived;
    const uint64_t bytes = std::min(p.bytes, gone * message_size);
    p.ok -= gone, p.lost += gone, p.bytes -= bytes;
    NodeTotals& src = nodes[static_cast<size_t>(channels[c].src)];
    NodeTotals& dst = nodes[static_cast<size_t>(channels[c].dst)];
    src.ok -= std::min(src.ok, gone), src.failed += gone, src.bytes_sent -= std::min(src.bytes_sent, bytes);
    dst.bytes_received -= std::min(dst.bytes_received, bytes);
  }
}

std::vector<uint64_t> planned_per_channel(const schedule::Schedule& s, const std::vector<Channel>& channels,
                                          uint32_t rounds) {
  std::vector<uint64_t> n(channels.size(), 0);
  for (const schedule::Phase& ph : s.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      Channel want{static_cast<int32_t>(i), ph.dst[i], ph.dlid[i]};
      auto it = std::lower_bound(channels.begin(), channels.end(), want);
      if (it != channels.end() && *it == want) n[static_cast<size_t>(it - channels.begin())] += rounds;
    }
  return n;
}

}  // namespace ibroute::runner
