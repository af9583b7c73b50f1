// The runner's pure core: clock offsets from round trips, per-rank plans, the skip rule, the
// summary of a run's records (per node, per link on the routes).
#include <gtest/gtest.h>

#include <random>

#include "fabrics.hpp"
#include "ibroute/runner/clock_sync.hpp"
#include "ibroute/runner/rate_search.hpp"
#include "ibroute/runner/run_plan.hpp"
#include "ibroute/runner/run_report.hpp"
#include "ibroute/schedule/hosts.hpp"

using namespace ibroute::runner;
using namespace ibroute::test;
namespace sch = ibroute::schedule;

namespace {

// Round trips against a peer whose clock is `offset` ahead, with random one-way delays
// (sometimes long, as when a CPU was busy).
std::vector<ClockSample> samples(int64_t offset, int n, uint32_t seed, int64_t base_delay = 2000) {
  std::mt19937 rng(seed);
  std::exponential_distribution<double> jitter(1.0 / 300);
  std::vector<ClockSample> v;
  int64_t t = 1'000'000'000;
  for (int i = 0; i < n; ++i) {
    int64_t out = base_delay + static_cast<int64_t>(jitter(rng)) + (i % 10 == 0 ? 50'000 : 0);
    int64_t back = base_delay + static_cast<int64_t>(jitter(rng));
    v.push_back({t, t + out + offset, t + out + back});
    t += 100'000;
  }
  return v;
}

}  // namespace

TEST(ClockSync, RecoversOffsetsWithinTheReportedUncertainty) {
  for (int64_t offset : {0L, 1'500'000L, -700'000L, 25'000'000'000L, -3L}) {
    for (uint32_t seed = 1; seed <= 20; ++seed) {
      ClockEstimate e = estimate_offset(samples(offset, 200, seed));
      EXPECT_LE(std::llabs(e.offset_ns - offset), e.uncertainty_ns) << offset << " seed " << seed;
      EXPECT_LE(e.uncertainty_ns, 2000 + 300) << "bounded by about half the fastest round trip";
      EXPECT_EQ(e.samples, 200u);
      EXPECT_EQ(e.kept, 140u);  // the slowest 30 % dropped
      EXPECT_GE(e.min_rtt_ns, 4000);
    }
  }
}

TEST(ClockSync, SymmetricDelaysGiveTheExactOffset) {
  std::vector<ClockSample> v;
  for (int i = 0; i < 10; ++i) v.push_back({i * 1000L, i * 1000L + 500 + 42, i * 1000L + 1000});
  ClockEstimate e = estimate_offset(v);
  EXPECT_EQ(e.offset_ns, 42);
  EXPECT_LE(e.uncertainty_ns, 501);
  EXPECT_EQ(e.min_rtt_ns, 1000);
}

TEST(ClockSync, InconsistentBoundsStillGiveAnHonestUncertainty) {
  // The peer's clock jumps between samples: no offset fits all; the estimate widens its interval.
  std::vector<ClockSample> v{{0, 1000, 2000}, {10'000, 21'000 + 5'000, 12'000}};
  ClockEstimate e = estimate_offset(v, 1.0);
  EXPECT_GE(e.uncertainty_ns, 3000);
}

TEST(ClockSync, DriftIsFittedAndCorrected) {
  // Peer clock runs 20 ppm fast and starts 1 ms ahead.
  auto peer = [](int64_t ref) { return ref + 1'000'000 + ref / 50'000; };
  auto measure = [&](int64_t at) {
    std::vector<ClockSample> v;
    for (int i = 0; i < 50; ++i) {
      int64_t t = at + i * 10'000;
      v.push_back({t, peer(t + 1000), t + 2000});
    }
    return estimate_offset(v);
  };
  ClockEstimate before = measure(0), after = measure(10'000'000'000);
  ClockModel m = fit_clock(before, &after);
  EXPECT_NEAR(m.drift * 1e6, 20.0, 0.01);
  for (int64_t ref : {0L, 5'000'000'000L, 10'000'000'000L, 20'000'000'000L})
    EXPECT_NEAR(static_cast<double>(m.to_reference(peer(ref))), ref, 50.0);
  ClockModel flat = fit_clock(before);
  EXPECT_EQ(flat.drift, 0);
  EXPECT_NEAR(static_cast<double>(flat.to_peer(0)), peer(0), 50.0);
}

TEST(RunPlan, ChannelsAndTimedSendsFollowTheSchedule) {
  sch::Schedule s;
  s.hosts.resize(4);
  s.phases = sch::shift_phases(4);
  for (auto& ph : s.phases)
    for (size_t i = 0; i < 4; ++i) ph.dlid[i] = static_cast<uint16_t>(100 + ph.dst[i] * 4 + (i % 2));
  std::vector<Channel> ch = channels_of(s);
  EXPECT_EQ(ch.size(), 12u);  // every ordered pair once
  EXPECT_TRUE(std::is_sorted(ch.begin(), ch.end()));
  SendPlan plan(s, ch, 1, 1000);
  ASSERT_EQ(plan.count(2), 6u);  // 3 phases x 2 rounds
  std::vector<TimedSend> sends;
  for (uint64_t k = 0; k < plan.count(2); ++k) sends.push_back(plan.at(k));
  for (size_t k = 0; k < sends.size(); ++k) {
    EXPECT_EQ(sends[k].seq, k);
    EXPECT_EQ(sends[k].at_ns, static_cast<int64_t>(k) * 1000);
    EXPECT_EQ(sends[k].dst, static_cast<int32_t>((1 + k % 3 + 1) % 4));
    const Channel& c = ch[sends[k].channel];
    EXPECT_EQ(c.src, 1);
    EXPECT_EQ(c.dst, sends[k].dst);
    EXPECT_EQ(c.dlid, sends[k].dlid);
  }
}

TEST(RunPlan, SkipRuleAdmitsUpToTheLimitPerDestination) {
  SkipRule r(3, 2);
  EXPECT_TRUE(r.admit(1));
  r.posted(1), r.posted(1);
  EXPECT_FALSE(r.admit(1));
  EXPECT_TRUE(r.admit(2));
  r.finished(1);
  EXPECT_TRUE(r.admit(1));
  EXPECT_EQ(r.open(1), 1u);
}

TEST(RunPlan, PhasesWithoutASendAreLeftOutNotCountedAsTime) {
  // Rank 0 sends in phases 0 and 2 only: its sends keep the phases' times and numbers.
  sch::Schedule s;
  s.hosts.resize(2);
  s.phases.resize(3);
  for (auto& ph : s.phases) ph.dst = {-1, -1}, ph.dlid = {0, 0};
  s.phases[0].dst[0] = 1, s.phases[2].dst[0] = 1, s.phases[2].dlid[0] = 7;
  std::vector<Channel> ch = channels_of(s);
  SendPlan plan(s, ch, 0, 100);
  ASSERT_EQ(plan.per_round(), 2u);
  EXPECT_EQ(plan.at(3).seq, 5u);  // round 1, phase 2
  EXPECT_EQ(plan.at(3).at_ns, 500);
  EXPECT_EQ(plan.at(3).dlid, 7);
  EXPECT_EQ(planned_per_channel(s, ch, 4), (std::vector<uint64_t>{4, 4}));
}

// A run of 4 ranks on two leaves as the ranks would aggregate it: 3 rounds of shifts, h1 -> h3
// (through a spine) fails once per round, h4 -> h1 is skipped once per round.
struct FourRanks {
  World w{TwoLeaves().f};
  sch::Schedule s;
  std::vector<Channel> ch;
  std::vector<RankStats> stats;
  FourRanks() {
    s.hosts = sch::all_hosts(w.f);
    s.phases = sch::shift_phases(4);
    for (auto& ph : s.phases)
      for (size_t i = 0; i < 4; ++i) ph.dlid[i] = w.f.nodes[s.hosts[ph.dst[i]].node].ports[1].base_lid;
    ch = channels_of(s);
    for (int32_t r = 0; r < 4; ++r) {
      RankStats st;
      st.rank = r;
      for (uint32_t c = 0; c < ch.size(); ++c) {
        if (ch[c].src == r) st.send_channels.push_back(c), st.send.emplace_back(), st.dests.push_back(ch[c].dst);
        if (ch[c].dst == r) st.recv_channels.push_back(c), st.arrived.push_back(0), st.corrupt.push_back(0);
      }
      st.late.resize(st.dests.size()), st.completion.resize(st.dests.size());
      st.sent = ThroughputSeries(3'000);
      stats.push_back(st);
    }
    for (uint32_t round = 0; round < 3; ++round)
      for (uint32_t k = 0; k < 3; ++k)
        for (int32_t i = 0; i < 4; ++i) {
          const int32_t d = s.phases[k].dst[i];
          RankStats& st = stats[i];
          size_t c = 0;
          while (ch[st.send_channels[c]].dst != d) ++c;
          PathCounters& p = st.send[c];
          ++p.planned;
          const size_t di = st.dest_index(d);
          if (i == 0 && d == 2) {
            ++p.failed;
            TransferRecord t;
            t.seq = round * 3 + k, t.src = i, t.dst = d, t.status = Status::failed;
            st.anomaly(t, 2);  // the cap: the third is counted, not kept
            continue;
          }
          if (i == 3 && d == 0) {
            ++p.skipped;
            continue;
          }
          ++p.ok, p.bytes += 1000, p.busy_ns += 900;
          st.late[di].add(10 + i), st.completion[di].add(900);
          st.bytes_sent += 1000;
          st.first_post_ns = 1'000'000, st.last_completion_ns = 1'000'000 + 8'000 + 900;
          RankStats& rx = stats[d];
          size_t rc = 0;
          while (ch[rx.recv_channels[rc]].src != i) ++rc;
          ++rx.arrived[rc];
        }
  }
};

TEST(RunStats, EncodeDecodeRoundTripsAndRefusesForeignOrBrokenMessages) {
  FourRanks f;
  RankStats& st = f.stats[0];
  st.clock.resyncs = 7, st.clock.drift_ppm = -25.5, st.clock.residual_max_ns = 900;
  st.truth.add(-300), st.truth.add(1200);
  std::vector<uint8_t> bytes = encode(st);
  RankStats back = decode(bytes, f.ch, 4);
  EXPECT_EQ(back.send_channels, st.send_channels);
  EXPECT_EQ(back.send[0].ok + back.send[1].ok + back.send[2].ok, 6u);
  EXPECT_EQ(back.anomalies.size(), 2u);
  EXPECT_EQ(back.anomalies_dropped, 1u);
  EXPECT_EQ(back.clock.resyncs, 7u);
  EXPECT_EQ(back.truth.min_ns, -300);
  EXPECT_EQ(back.truth.abs_ns.max(), 1200);
  EXPECT_EQ(back.late[0].count(), st.late[0].count());
  EXPECT_EQ(encode(back), bytes) << "nothing lost or changed on the way";
  // Another rank's channel, a cut-off message, trailing bytes: refused with a reason.
  RankStats other = st;
  other.rank = 1;
  EXPECT_THROW(decode(encode(other), f.ch, 4), std::runtime_error);
  for (size_t cut : {size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    EXPECT_THROW(decode(part, f.ch, 4), std::runtime_error) << cut;
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_THROW(decode(longer, f.ch, 4), std::runtime_error);
  EXPECT_THROW(decode(bytes, f.ch, 3), std::runtime_error) << "rank 0 of a 3-rank run cannot have 4 destinations";
}

TEST(RunReport, SummaryCountsNodesAndLinksOnTheRoutes) {
  FourRanks f;
  RunMerge m(f.ch, 4, 3'000, 10);
  for (const RankStats& st : f.stats) m.add(decode(encode(st), f.ch, 4));
  RunSummary r = summarise(f.s, m, {}, &f.w.f, &f.w.links);
  EXPECT_EQ(r.planned, 36u);
  EXPECT_EQ(r.ok, 30u);
  EXPECT_EQ(r.failed, 3u);
  EXPECT_EQ(r.skipped, 3u);
  EXPECT_EQ(r.bytes_ok, 30'000u);
  EXPECT_EQ(r.nodes[0].failed, 3u);
  EXPECT_EQ(r.nodes[3].skipped, 3u);
  EXPECT_EQ(r.nodes[0].bytes_received, 6000u);  // from h2 and h3; h4's was skipped
  EXPECT_EQ(r.late_max_ns, 13);
  EXPECT_EQ(r.completion_median_ns, 900);
  EXPECT_EQ(m.anomalies.size(), 2u);
  EXPECT_EQ(m.anomalies_dropped, 1u) << "rank 0 kept 2 of its 3 failures and counted the third";
  uint64_t failed_on_links = 0, transfers_on_h1_up = 0;
  for (const LinkStat& l : r.links) {
    failed_on_links += l.failed;
    if (l.link == f.w.links.id(f.s.hosts[0].node, 1)) transfers_on_h1_up = l.transfers;
  }
  EXPECT_EQ(failed_on_links, 12u);  // 3 per link: h1's link, L1 up, spine down, L2 to h3
  EXPECT_EQ(transfers_on_h1_up, 6u);
  // Every delivered transfer was seen by its receiver.
  for (size_t c = 0; c < f.ch.size(); ++c) EXPECT_EQ(m.paths[c].arrived, m.paths[c].ok) << c;
}

TEST(RunReport, ARankThatNeverReportedLosesWhatDidNotArrive) {
  FourRanks f;
  RunMerge m(f.ch, 4, 3'000, 10);
  // Rank 2 died; what it sent before was counted by its receivers: all but one transfer to h1.
  --f.stats[0].arrived[1];
  ASSERT_EQ(f.ch[f.stats[0].recv_channels[1]].src, 2);
  for (int r : {0, 1, 3}) m.add(f.stats[static_cast<size_t>(r)]);
  m.lost(2, planned_per_channel(f.s, f.ch, 3), 1000);
  RunSummary r = summarise(f.s, m, {2}, nullptr, nullptr);
  EXPECT_EQ(r.nodes[2].ok, 8u) << "arrivals count as delivered";
  EXPECT_EQ(r.lost, 1u);
  EXPECT_EQ(r.nodes[0].bytes_received, 5000u) << "h2's 2 of 3 and h3's 3; h4's were skipped";
  RunMerge early(f.ch, 4, 3'000, 10);
  early.lost(2, planned_per_channel(f.s, f.ch, 3), 1000);
  EXPECT_EQ(summarise(f.s, early, {2}, nullptr, nullptr).lost, 9u) << "nothing arrived: all lost";
  EXPECT_EQ(r.missing_ranks, std::vector<int32_t>{2});
  EXPECT_TRUE(r.links.empty());
}

TEST(RunReport, UnreliableTransportCountsWhatTheReceiverDidNotTakeAsLost) {
  FourRanks f;
  // Over UC rank 2's three writes to h1 all completed at the sender; h1 counted one.
  f.stats[0].arrived[1] -= 2;
  ASSERT_EQ(f.ch[f.stats[0].recv_channels[1]].src, 2);
  RunMerge reliable(f.ch, 4, 3'000, 10), uc(f.ch, 4, 3'000, 10);
  for (const RankStats& st : f.stats) reliable.add(st), uc.add(st);
  const RunSummary before = summarise(f.s, reliable, {}, nullptr, nullptr);
  uc.settle_unreliable(1000);
  const RunSummary r = summarise(f.s, uc, {}, nullptr, nullptr);
  EXPECT_EQ(r.lost, before.lost + 2);
  EXPECT_EQ(r.ok, before.ok - 2);
  EXPECT_EQ(r.bytes_ok, before.bytes_ok - 2000);
  EXPECT_EQ(r.nodes[2].ok, before.nodes[2].ok - 2);
  EXPECT_EQ(r.nodes[2].failed, before.nodes[2].failed + 2);
  EXPECT_EQ(r.nodes[0].bytes_received, before.nodes[0].bytes_received - 2000);
  for (size_t c = 0; c < f.ch.size(); ++c) {
    EXPECT_LE(uc.paths[c].ok, uc.paths[c].arrived) << c;
    EXPECT_EQ(uc.paths[c].planned, uc.paths[c].ok + uc.paths[c].not_ok())
        << "every transfer still accounted once: " << c;
  }
  uc.settle_unreliable(1000);
  EXPECT_EQ(summarise(f.s, uc, {}, nullptr, nullptr).lost, r.lost) << "settling twice changes nothing";
}

TEST(Histogram, QuantilesWithinAnEighthAndMergesAdd) {
  LogHistogram h;
  for (int64_t v = 1; v <= 100'000; ++v) h.add(v * 1000);
  for (double q : {0.01, 0.5, 0.9, 0.99, 1.0}) {
    const double exact = q * 100'000 * 1000;
    EXPECT_GE(static_cast<double>(h.quantile(q)), exact * 0.999) << q;
    EXPECT_LE(static_cast<double>(h.quantile(q)), exact * 1.126) << q;
  }
  EXPECT_EQ(h.max(), 100'000'000);
  EXPECT_EQ(h.min(), 1000);
  LogHistogram a, b, all;
  for (int64_t v : {5, 17, 300, 4000}) a.add(v), all.add(v);
  for (int64_t v : {int64_t{-3}, int64_t{0}, int64_t{1} << 50}) b.add(v), all.add(v);
  a.merge(b);
  EXPECT_EQ(a.sparse().buckets, all.sparse().buckets);
  EXPECT_EQ(a.count(), 7u);
  EXPECT_EQ(a.negative(), 1u);
  EXPECT_EQ(a.max(), LogHistogram::kMaxValue) << "clamped, not wrapped";
  for (int64_t v : {0L, 1L, 15L, 16L, 17L, 1000L, 123456789L}) {
    size_t k = LogHistogram::bucket_of(v);
    EXPECT_LE(LogHistogram::bucket_low(k), v);
    EXPECT_GE(LogHistogram::bucket_high(k), v);
  }
  // A sparse form this class could not have written is refused.
  LogHistogram::Sparse bad = all.sparse();
  bad.count += 1;
  LogHistogram out;
  EXPECT_FALSE(LogHistogram::from_sparse(bad, out));
  bad = all.sparse();
  std::swap(bad.buckets[0], bad.buckets[1]);
  EXPECT_FALSE(LogHistogram::from_sparse(bad, out));
  EXPECT_TRUE(LogHistogram::from_sparse(all.sparse(), out));
  EXPECT_EQ(out.quantile(0.5), all.quantile(0.5));
  // An empty histogram is written with zeros; a non-zero minimum would not encode back the same.
  LogHistogram::Sparse empty = LogHistogram().sparse();
  EXPECT_TRUE(LogHistogram::from_sparse(empty, out));
  EXPECT_EQ(out.count(), 0u);
  empty.min = 5;
  EXPECT_FALSE(LogHistogram::from_sparse(empty, out));
}

TEST(ThroughputSeries, FixedLengthWhateverTheDuration) {
  ThroughputSeries day(int64_t{86400} * 1'000'000'000);  // a day: intervals of several seconds
  EXPECT_EQ(day.interval_ns() % 1'000'000'000, 0);
  EXPECT_LE(int64_t{86400} * 1'000'000'000 / day.interval_ns(), static_cast<int64_t>(ThroughputSeries::kMax));
  for (int64_t t = 0; t < int64_t{90000} * 1'000'000'000; t += 100'000'000) day.add(t, 10);
  EXPECT_LE(day.bytes().size(), ThroughputSeries::kMax);
  ThroughputSeries minute(60'000'000'000);
  EXPECT_EQ(minute.interval_ns(), 1'000'000'000);
  minute.add(2'500'000'000, 7);
  minute.merge(day);  // the coarser interval wins
  EXPECT_EQ(minute.interval_ns(), day.interval_ns());
  EXPECT_EQ(minute.bytes()[0], day.bytes()[0] + 7);
}

TEST(ClockTracker, FollowsADriftingClockWithinItsNoise) {
  // The local clock runs 40 ppm fast and starts 3 ms ahead; each measurement is off by up to
  // +-2 us. Re-measured every second, the prediction one second ahead stays within a few us;
  // without the drift model it would be 40 us off after a second and 2.4 ms after a minute.
  auto offset = [](int64_t ref) { return 3'000'000 + ref / 25'000; };
  std::mt19937 rng(5);
  std::uniform_int_distribution<int64_t> noise(-2000, 2000);
  ClockTracker t;
  int64_t worst = 0;
  for (int64_t s = 0; s <= 120; ++s) {
    const int64_t at = s * 1'000'000'000;
    if (s > 10) worst = std::max<int64_t>(worst, std::llabs(t.offset_at(at) - offset(at)));
    ClockEstimate e;
    e.at_ns = at, e.offset_ns = offset(at) + noise(rng), e.uncertainty_ns = 2000, e.samples = 16;
    t.add(e);
  }
  EXPECT_LT(worst, 6000);
  EXPECT_NEAR(t.drift() * 1e6, 40.0, 2.0);
  EXPECT_EQ(t.measurements(), 121u);
  EXPECT_LT(t.residual_max_ns(), 45'000) << "the first second, before any drift was known, was the worst";
  EXPECT_GT(t.residual_max_ns(), 30'000);
  const int64_t local = t.to_local(200'000'000'000);
  EXPECT_NEAR(static_cast<double>(t.to_reference(local)), 200'000'000'000.0, 2.0);
}

TEST(ClockTracker, AMeasurementFarNoisierThanTheOthersIsRefused) {
  ClockTracker t;
  ClockEstimate e;
  e.uncertainty_ns = 40'000;
  for (int s = 0; s < 4; ++s) e.at_ns = s * 1'000'000'000LL, t.add(e);
  e.uncertainty_ns = 100'000;
  EXPECT_TRUE(t.plausible(e));
  e.uncertainty_ns = 2'000'000;  // every round trip of the burst met a busy CPU
  EXPECT_FALSE(t.plausible(e));
}

TEST(ClockTracker, AResidualCountsOnlyWhatLiesOutsideTheMeasurementsUncertainty) {
  ClockTracker t;
  ClockEstimate e;
  e.offset_ns = 5'000'000, e.uncertainty_ns = 40'000;
  for (int s = 0; s < 4; ++s) e.at_ns = s * 1'000'000'000LL, t.add(e);
  EXPECT_EQ(t.residual_max_ns(), 0);
  // A starved burst: its midpoint 9 ms off, but the offset could lie anywhere within +-10 ms;
  // the model, right all along, is not shown wrong by it.
  e.at_ns = 4'000'000'000LL, e.offset_ns = 5'000'000 + 9'000'000, e.uncertainty_ns = 10'000'000;
  EXPECT_EQ(t.add(e), 9'000'000) << "the raw residual is returned";
  EXPECT_EQ(t.residual_max_ns(), 0);
  // A sharp measurement 300 us away proves the model 260 us wrong.
  e.at_ns = 5'000'000'000LL, e.offset_ns = 5'000'000 + 300'000, e.uncertainty_ns = 40'000;
  const int64_t predicted = t.offset_at(e.at_ns);
  t.add(e);
  EXPECT_EQ(t.residual_max_ns(), 5'000'000 + 300'000 - predicted - 40'000);
  EXPECT_NEAR(static_cast<double>(t.residual_max_ns()), 260'000.0, 1'000.0);
}

TEST(ClockTracker, ANoisierMeasurementBarelyTiltsTheLine) {
  ClockTracker t;
  ClockEstimate e;
  e.offset_ns = 5'000'000, e.uncertainty_ns = 40'000;  // a constant offset, well measured
  for (int s = 0; s < 7; ++s) e.at_ns = s * 1'000'000'000LL, t.add(e);
  e.at_ns = 7'000'000'000LL, e.uncertainty_ns = 120'000,
  e.offset_ns = 5'000'000 + 120'000;  // plausible, but off by its whole uncertainty
  ASSERT_TRUE(t.plausible(e));
  t.add(e);
  // At the newest point (an end of the line: high leverage) an unweighted fit would move by
  // ~50 us (0.42 x 120 us) and read ~10 ppm of drift; weighted by 1/u^2, ~9 us and ~2 ppm.
  EXPECT_NEAR(static_cast<double>(t.offset_at(7'000'000'000LL)), 5'000'000.0, 15'000.0);
  EXPECT_NEAR(t.drift() * 1e6, 0.0, 3.0);  // ppm
}

TEST(ClockTracker, ADriftTheMeasurementsCannotResolveIsNotExtrapolated) {
  // The clock runs 250 ppm slow. A sharp measurement, then one second later a starved burst that
  // is off by its whole (valid) 1 ms uncertainty, then ten seconds of failed re-measurements
  // (a loaded rank 0). Through the two points the line would read +750 ppm and be 11 ms wrong
  // after the gap (a soak run saw 12.4 ms); unresolved, the slope is not used: 2.75 ms.
  auto offset = [](int64_t ref) { return 7'000'000 - ref / 4'000; };
  ClockTracker t;
  ClockEstimate e;
  e.at_ns = 0, e.offset_ns = offset(0), e.uncertainty_ns = 1'500;
  t.add(e);
  e.at_ns = 1'000'000'000, e.offset_ns = offset(e.at_ns) + 1'000'000, e.uncertainty_ns = 1'000'000;
  t.add(e);
  const int64_t at = 11'000'000'000;
  EXPECT_LE(std::llabs(t.offset_at(at) - offset(at)), 2'800'000);
  // Then re-measurements every second, +-50 us: the drift is resolved and used.
  std::mt19937 rng(3);
  std::uniform_int_distribution<int64_t> noise(-50'000, 50'000);
  for (int64_t s = 11; s <= 20; ++s) {
    e.at_ns = s * 1'000'000'000, e.offset_ns = offset(e.at_ns) + noise(rng), e.uncertainty_ns = 50'000;
    t.add(e);
  }
  EXPECT_NEAR(t.drift() * 1e6, -250.0, 20.0);
  EXPECT_LE(std::llabs(t.offset_at(21'000'000'000) - offset(21'000'000'000)), 100'000);
}

TEST(ClockTracker, OneMeasurementIsAConstantOffset) {
  ClockTracker t;
  EXPECT_EQ(t.offset_at(5), 0);
  ClockEstimate e;
  e.at_ns = 1000, e.offset_ns = -777;
  EXPECT_EQ(t.add(e), 0);
  EXPECT_EQ(t.offset_at(1'000'000'000'000), -777);
  EXPECT_EQ(t.drift(), 0);
}

TEST(RateSearch, DoublesThenBisectsToTheLimit) {
  // A fabric that holds up to 3.3 GB/s per node: skips above it.
  RateSearch s(1e9, 0.001, 10, 2'000'000'000, 863);
  auto run = [](double rate) {
    RateStep st;
    st.rate = rate, st.planned = 1000;
    st.skipped = rate <= 3.3e9 ? 0 : 50;
    st.ok = st.planned - st.skipped;
    st.skipped_share = static_cast<double>(st.skipped) / static_cast<double>(st.planned);
    st.gbps_per_node = rate * 8e-9 * (1 - st.skipped_share);
    return st;
  };
  std::vector<double> tried;
  for (double r = s.next(); r > 0; r = s.next()) {
    tried.push_back(r);
    s.record(run(r), nullptr);
  }
  ASSERT_GE(tried.size(), 4u);
  EXPECT_EQ(tried[0], 1e9);
  EXPECT_EQ(tried[1], 2e9);
  EXPECT_EQ(tried[2], 4e9);  // too fast: now bisect between 2 and 4
  EXPECT_EQ(tried[3], 3e9);
  EXPECT_LE(tried.size(), 10u);
  EXPECT_GT(s.answer(), 3.3e9 / 1.05);
  EXPECT_LE(s.answer(), 3.3e9);
  bool held_below = false, failed_above = false;
  for (const RateStep& st : s.steps())
    held_below |= st.held && st.skipped == 0, failed_above |= !st.held && st.skipped > 0;
  EXPECT_TRUE(held_below && failed_above) << "the curve shows both sides of the limit";
  EXPECT_EQ(s.rounds_for(1000), 2'000'000'000u / (1000u * 863u));
  EXPECT_EQ(s.rounds_for(1'000'000'000), 2u) << "at least two rounds";
}

TEST(RateSearch, SlowsDownWhenTheStartIsTooFastAndFailuresNeverHold) {
  RateSearch s(8e9, 0.0, 6, 1'000'000'000, 3);
  RateStep st;
  st.rate = 8e9, st.planned = 10, st.ok = 9, st.failed = 1;  // a timeout: not held, whatever the skips
  st.gbps_per_node = 64;
  EXPECT_FALSE(s.record(st, nullptr));
  EXPECT_EQ(s.next(), 4e9);
  st.rate = 4e9, st.ok = 10, st.failed = 0;
  st.gbps_per_node = 20;  // nothing skipped, but the senders fell behind: 2.5 of 4 GB/s
  EXPECT_FALSE(s.record(st, nullptr));
  EXPECT_EQ(s.next(), 2e9);
  st.rate = 2e9, st.gbps_per_node = 16;
  EXPECT_TRUE(s.record(st, nullptr));
  EXPECT_EQ(s.next(), 3e9);
  EXPECT_EQ(s.answer(), 2e9);
}

// Rank 0's judgement of a rate step, out of the data plane: counts from the merged paths, the
// throughput measured per node from first post to last completion (a node that sent nothing counts
// as zero, so a stalled node pulls the mean down).
TEST(RateSearch, AStepIsMeasuredFromTheMergedAggregates) {
  const std::vector<Channel> ch{{0, 1, 10}, {1, 0, 11}};
  RunMerge m(ch, 2, 1'000'000, 0);
  m.paths[0].planned = 100, m.paths[0].ok = 90, m.paths[0].skipped = 6;
  m.paths[1].planned = 100, m.paths[1].ok = 100;
  m.nodes[0].bytes_sent = 1'000'000, m.nodes[0].first_post_ns = 1'000,
  m.nodes[0].last_completion_ns = 1'001'000;  // 8 Gb/s
  const RateStep st = measure_step(m, 2.5e9, 7, 2);
  EXPECT_EQ(st.rate, 2.5e9);
  EXPECT_EQ(st.rounds, 7u);
  EXPECT_EQ(st.planned, 200u);
  EXPECT_EQ(st.ok, 190u);
  EXPECT_EQ(st.skipped, 6u);
  EXPECT_EQ(st.failed, 4u);
  EXPECT_DOUBLE_EQ(st.skipped_share, 0.03);
  EXPECT_DOUBLE_EQ(st.gbps_per_node, 4.0);                                       // node 1 never posted
  EXPECT_EQ(measure_step(RunMerge({}, 0, 0, 0), 1e9, 1, 0).skipped_share, 1.0);  // nothing planned: nothing held
}

TEST(RunStats, StatusNames) {
  EXPECT_STREQ(to_string(Status::ok), "ok");
  EXPECT_STREQ(to_string(Status::skipped), "skipped");
  EXPECT_STREQ(to_string(Status::timeout), "timeout");
  EXPECT_STREQ(to_string(Status::failed), "failed");
  EXPECT_STREQ(to_string(Status::lost), "lost");
  EXPECT_STREQ(to_string(static_cast<Status>(200)), "?");  // a byte from a damaged message
}
