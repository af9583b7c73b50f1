// The run report's writer (run_report_write) and reader (run_report_read) are two sides of one
// schema: what rank 0 writes, accept reads back with the same values.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "counter_window.hpp"
#include "diagnosis_report.hpp"
#include "fabric_store.hpp"
#include "fabrics.hpp"
#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/link_measures.hpp"
#include "ibroute/runner/run_outcome.hpp"
#include "ibroute/runner/run_plan.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "run_report_read.hpp"
#include "run_report_write.hpp"

namespace {

using namespace ibroute;
using namespace ibroute::runner;
using namespace ibroute::test;

constexpr uint64_t kMessage = 1 << 16;
constexpr int64_t kSlot = 100'000;
constexpr uint32_t kRounds = 3;

// Every rank's transfers of `rounds` rounds, rank r's taking (r + 1) x 10 us each: the nodes'
// rates differ, so that a reader mixing them up is caught.
std::unique_ptr<RunMerge> merged_run(const schedule::Schedule& s, const std::vector<Channel>& channels) {
  const int64_t planned_ns = static_cast<int64_t>(kRounds * s.phases.size()) * kSlot;
  auto merged = std::make_unique<RunMerge>(channels, s.hosts.size(), planned_ns, 100);
  for (size_t r = 0; r < s.hosts.size(); ++r) {
    RankStats st = RankStats::shaped(channels, static_cast<int32_t>(r), planned_ns);
    SendPlan plan(s, channels, static_cast<int32_t>(r), kSlot);
    for (uint64_t k = 0; k < plan.count(kRounds); ++k) {
      const uint32_t ch = plan.at(k % plan.per_round()).channel;
      const auto send = static_cast<size_t>(std::lower_bound(st.send_channels.begin(), st.send_channels.end(), ch) - st.send_channels.begin());
      const size_t dest = st.dest_of_send[send];
      st.posted(send, dest, 1000);
      st.completed(send, dest, static_cast<int64_t>(r + 1) * 10'000, kMessage, static_cast<int64_t>(k) * kSlot);
    }
    for (auto& a : st.arrived) a = kRounds;
    merged->add(decode(encode(st), channels, s.hosts.size()));
  }
  return merged;
}

// The all-to-all of TwoLeaves' four hosts and its run as rank 0 ends it (merged_run).
struct FourRanks {
  World w{TwoLeaves().f};
  schedule::Schedule s;
  RunOutcome out;
  FourRanks() {
    s.name = "round-trip";
    s.hosts = schedule::all_hosts(w.f);
    s.phases = schedule::shift_phases(s.hosts.size());
    schedule::apply_lid_policy(w.f, s.hosts, s.phases, schedule::LidPolicy::base);
    out.root = true;
    out.channels = channels_of(s);
    out.merged = merged_run(s, out.channels);
    out.rounds_run = kRounds;
    out.slot_ns = kSlot;
  }
};

TEST(RunReportSchema, WhatTheWriterWritesTheReaderReadsBack) {
  FourRanks run;
  const World& w = run.w;
  const schedule::Schedule& s = run.s;
  RunOutcome& out = run.out;
  for (int32_t r = 1; r < 4; ++r) {
    RankClock c;
    c.rank = r, c.before.samples = 50, c.before.offset_ns = 1000 * r, c.before.uncertainty_ns = 200 + r;
    out.clocks.push_back(c);
  }
  const RunSummary sum = summarise(s, *out.merged, {}, &w.f, &w.links);
  const workflow::RunJsonContext jc{s, kMessage, kSlot, kRounds, 2, 0, out, sum, nullptr, 0, 0, false, 1, nullptr};
  nlohmann::json report = workflow::run_report_json(jc);

  // The counters around the run, as rank 0 adds them: L1's first up-link waited and saw errors.
  fabric::PortDelta d;
  d.node = TwoLeaves().l1, d.port = 3;
  d.delta[static_cast<size_t>(fabric::Counter::xmit_data)] = 3 * 2 * kMessage / 4;
  d.delta[static_cast<size_t>(fabric::Counter::xmit_wait)] = 5000;
  d.delta[static_cast<size_t>(fabric::Counter::symbol_errors)] = 7;
  const workflow::CounterWindow window{"around the run (rank 0)", {d}};
  std::vector<uint64_t> sent(w.links.size(), 0);
  for (const LinkStat& l : sum.links) sent[static_cast<size_t>(l.link)] = l.bytes;
  constexpr double kSeconds = 0.01;  // the counters' window
  const fabric::LinkMeasures m = fabric::measure_links(window.deltas, w.links, sent, kSeconds, 10);
  report["links_measured"] = workflow::links_measured_json(w.f, w.links, &window, &m, "", kRounds, kSeconds, 10);

  const workflow::RunReportInput in = workflow::parse_run_report(report.dump(), "run.json", s.hosts.size());
  EXPECT_EQ(in.schedule, "round-trip");
  EXPECT_EQ(in.ranks, 4u);
  EXPECT_EQ(in.message_size, kMessage);
  EXPECT_EQ(in.rounds_run, kRounds);
  EXPECT_NEAR(in.seconds, sum.seconds, 1e-9);
  EXPECT_EQ(in.skipped_share, 0.0);
  ASSERT_EQ(in.node_rates.size(), 4u);
  double slowest = INFINITY;
  for (const NodeStat& n : sum.nodes) {
    EXPECT_NEAR(in.node_rates[static_cast<size_t>(n.rank)] * 8 / 1e9, n.send_gbps, 1e-6 * n.send_gbps) << n.rank;
    slowest = std::min(slowest, n.send_gbps);
  }
  EXPECT_NEAR(in.node_rate * 8 / 1e9, slowest, 1e-6 * slowest);
  EXPECT_EQ(in.clock.size(), out.clocks.size());
  ASSERT_EQ(in.pair_gbps.size(), 16u);  // the matrix: every pair but the diagonal moved bytes
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 4; ++j) EXPECT_EQ(in.pair_gbps[i * 4 + j] > 0, i != j) << i << " " << j;
  EXPECT_TRUE(in.not_ok.empty());

  ASSERT_TRUE(in.measured());
  EXPECT_EQ(in.links_measured["between"], "around the run (rank 0)");
  EXPECT_EQ(in.links_measured["planned_links"], report["links_measured"]["planned_links"]);
  ASSERT_EQ(in.error_links.size(), 1u);
  EXPECT_EQ(in.error_links[0].errors, 7u);
  EXPECT_NE(in.error_links[0].what.find("SymbolErrorCounter +7"), std::string::npos) << in.error_links[0].what;
  EXPECT_NE(in.error_links[0].link.find("L1"), std::string::npos) << in.error_links[0].link;
  ASSERT_EQ(in.waiting.size(), 1u);
  EXPECT_NEAR(in.waiting[0].second, 5000 * 10e-9 / kSeconds, 1e-9);
}

TEST(RunReportSchema, AMeasurementThatFailedIsReadAsNotMeasured) {
  nlohmann::json lm = workflow::links_measured_json(TwoLeaves().f, LinkIndex(TwoLeaves().f), nullptr, nullptr, "no MAD port", 1, 1, 0);
  EXPECT_EQ(lm["measured"], false);
  EXPECT_EQ(lm["why"], "no MAD port");
}

}  // namespace

// Above 2048 ranks the report has no pair matrix: the run's own diagnosis of its pairs travels in
// `diagnosis.evidence.run`, links by name, and accept reads it back to the same suspects.
TEST(RunReportSchema, TheRunsDiagnosisTravelsWithoutThePairMatrix) {
  FourRanks run;
  const World& w = run.w;
  const schedule::Schedule& s = run.s;
  RunOutcome& out = run.out;
  const RunSummary sum = summarise(s, *out.merged, {}, &w.f, &w.links);
  nlohmann::json report = workflow::run_report_json({s, kMessage, kSlot, kRounds, 2, 0, out, sum, nullptr, 0, 0, false, 1, nullptr});
  report.erase("pair_mbps");

  const std::string path = (std::filesystem::temp_directory_path() / ("ibroute-rundiag-" + std::to_string(::getpid()) + ".db")).string();
  std::filesystem::remove(path);
  {
    store::FabricStore st(path, ibroute::store::Access::create);
    st.save_scan({.source = "offline", .origin = "unit"}, w.f, fabric::resolve_routes(w.f));
    const workflow::FabricContext c(st, std::nullopt);
    // The run as measured: rank 2's sends at a fifth of the others' (pair_gbps_of, at any size).
    workflow::DiagnosisInput direct;
    direct.plan = &s, direct.pair_gbps = workflow::pair_gbps_of(out, s.hosts.size());
    for (size_t k = 0; k < s.hosts.size(); ++k) direct.pair_gbps[2 * s.hosts.size() + k] /= 5;
    report["diagnosis"] = workflow::diagnosis_json(c, std::move(direct));
    const nlohmann::json& found = report["diagnosis"]["evidence"]["run"]["suspects"];
    ASSERT_FALSE(found.empty()) << report["diagnosis"];
    EXPECT_EQ(found[0]["rank"], 2) << found;

    const workflow::RunReportInput in = workflow::parse_run_report(report.dump(), "run.json", s.hosts.size());
    ASSERT_TRUE(in.pair_gbps.empty());
    ASSERT_TRUE(in.run_diagnosis);
    workflow::DiagnosisInput again;
    again.plan = &s, again.run = workflow::run_diagnosis_of(c, *in.run_diagnosis, "run.json");
    const nlohmann::json d = workflow::diagnosis_json(c, std::move(again));
    EXPECT_EQ(d["suspects"], report["diagnosis"]["suspects"]);

    nlohmann::json bad = report;
    bad["diagnosis"]["evidence"]["run"]["suspects"][0]["link"] = "L9[1] -> S9[1]";
    const workflow::RunReportInput renamed = workflow::parse_run_report(bad.dump(), "run.json", s.hosts.size());
    expect_input_error([&] { (void)workflow::run_diagnosis_of(c, *renamed.run_diagnosis, "run.json"); },
                       "run.json: /diagnosis/evidence/run/suspects/0/link: \"L9[1] -> S9[1]\" is no link of scan 1");
    bad = report, bad["diagnosis"]["evidence"]["run"]["suspects"][0]["rank"] = 4;
    expect_input_error([&] { (void)workflow::parse_run_report(bad.dump(), "run.json", s.hosts.size()); }, "/diagnosis/evidence/run/suspects/0/rank");
    bad = report, bad["diagnosis"]["evidence"]["run"]["suspects"][0]["factor"] = 1.5;
    expect_input_error([&] { (void)workflow::parse_run_report(bad.dump(), "run.json", s.hosts.size()); }, "/diagnosis/evidence/run/suspects/0/factor");
  }
  std::filesystem::remove(path);
}
