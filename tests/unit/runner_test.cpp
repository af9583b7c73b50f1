// The runner's pure core: clock offsets from round trips, per-rank plans, the skip rule, the
// summary of a run's records (per node, per link on the routes).
#include <gtest/gtest.h>

#include <random>

#include "fabrics.hpp"
#include "ibroute/runner/clock_sync.hpp"
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
  for (int64_t ref : {0L, 5'000'000'000L, 10'000'000'000L, 20'000'000'000L}) EXPECT_NEAR(static_cast<double>(m.to_reference(peer(ref))), ref, 50.0);
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
  std::vector<TimedSend> sends = sends_of(s, ch, 1, 2, 1000);
  ASSERT_EQ(sends.size(), 6u);  // 3 phases x 2 rounds
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

TEST(RunReport, SummaryCountsNodesAndLinksOnTheRoutes) {
  World w{TwoLeaves().f};
  sch::Schedule s;
  s.hosts = sch::all_hosts(w.f);
  s.phases = sch::shift_phases(4);
  for (auto& ph : s.phases)
    for (size_t i = 0; i < 4; ++i) ph.dlid[i] = w.f.nodes[s.hosts[ph.dst[i]].node].ports[1].base_lid;
  std::vector<TransferRecord> recs;
  for (uint32_t k = 0; k < 3; ++k)
    for (int32_t i = 0; i < 4; ++i) {
      TransferRecord t;
      t.seq = k, t.src = i, t.dst = s.phases[k].dst[i], t.dlid = s.phases[k].dlid[i], t.bytes = 1000;
      t.planned_ns = k * 1000, t.posted_ns = k * 1000 + 10 + i, t.completed_ns = k * 1000 + 900, t.status = Status::ok;
      // h1 -> h3 (through a spine) fails, h4 -> h1 is skipped
      if (t.src == 0 && t.dst == 2) t.status = Status::failed;
      if (t.src == 3 && t.dst == 0) t.status = Status::skipped, t.posted_ns = 0;
      recs.push_back(t);
    }
  RunSummary r = summarise(s, recs, {}, &w.f, &w.links);
  EXPECT_EQ(r.planned, 12u);
  EXPECT_EQ(r.ok, 10u);
  EXPECT_EQ(r.failed, 1u);
  EXPECT_EQ(r.skipped, 1u);
  EXPECT_EQ(r.bytes_ok, 10'000u);
  EXPECT_EQ(r.nodes[0].failed, 1u);
  EXPECT_EQ(r.nodes[3].skipped, 1u);
  EXPECT_EQ(r.nodes[0].bytes_received, 2000u);  // from h2 and h3; h4's was skipped
  EXPECT_EQ(r.late_max_ns, 13);
  uint32_t failed_on_links = 0, transfers_on_h1_up = 0;
  for (const LinkStat& l : r.links) {
    failed_on_links += l.failed;
    if (l.link == w.links.id(s.hosts[0].node, 1)) transfers_on_h1_up = l.transfers;
  }
  EXPECT_EQ(failed_on_links, 4u);  // h1's link, L1 up, spine down, L2 to h3
  EXPECT_EQ(transfers_on_h1_up, 2u);
}
