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
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/validate.hpp"
#include "run_job.hpp"
#include "run_report_read.hpp"
#include "run_report_write.hpp"
#include "text_input.hpp"
#include "whole_file.hpp"

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
      const auto send = static_cast<size_t>(std::lower_bound(st.send_channels.begin(), st.send_channels.end(), ch) -
                                            st.send_channels.begin());
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
  nlohmann::json lm =
      workflow::links_measured_json(TwoLeaves().f, LinkIndex(TwoLeaves().f), nullptr, nullptr, "no MAD port", 1, 1, 0);
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
  nlohmann::json report =
      workflow::run_report_json({s, kMessage, kSlot, kRounds, 2, 0, out, sum, nullptr, 0, 0, false, 1, nullptr});
  report.erase("pair_mbps");

  const std::string path =
      (std::filesystem::temp_directory_path() / ("ibroute-rundiag-" + std::to_string(::getpid()) + ".db")).string();
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
    expect_input_error([&] { (void)workflow::parse_run_report(bad.dump(), "run.json", s.hosts.size()); },
                       "/diagnosis/evidence/run/suspects/0/rank");
    bad = report, bad["diagnosis"]["evidence"]["run"]["suspects"][0]["factor"] = 1.5;
    expect_input_error([&] { (void)workflow::parse_run_report(bad.dump(), "run.json", s.hosts.size()); },
                       "/diagnosis/evidence/run/suspects/0/factor");
  }
  std::filesystem::remove(path);
}

namespace {

// A scratch database (removed with it) holding TwoLeaves' scan and FourRanks' schedule.
struct StoredFourRanks {
  FourRanks run;
  std::string dir =
      (std::filesystem::temp_directory_path() / ("ibroute-runjob-" + std::to_string(::getpid()))).string();
  std::string db = dir + "/f.db";
  StoredFourRanks() {
    std::filesystem::create_directories(dir);
    store::FabricStore st(db, store::Access::create);
    st.save_scan({.source = "offline", .origin = "unit"}, run.w.f, fabric::resolve_routes(run.w.f));
    st.save_schedule(1, run.s, 2, 0, 0.1, false);
  }
  ~StoredFourRanks() { std::filesystem::remove_all(dir); }
  workflow::RunRequest request() const {
    workflow::RunRequest r;
    r.db = db, r.schedule = "round-trip", r.counters = "off", r.rate = "1G", r.message_size = "64KiB",
    r.rounds = kRounds;
    return r;
  }
};

// The verbs adapter is never asked here: with a placement or counters off the run needs no port.
workflow::RunHooks no_port() {
  workflow::RunHooks h;
  h.local_port = []() -> workflow::LocalPort {
    ADD_FAILURE() << "the local port was asked for";
    return {};
  };
  return h;
}

}  // namespace

// The run without MPI or verbs: a rank's inputs and settings from a request, and rank 0's ending
// from the outcome the runner hands back — stored, written, and judged.
TEST(RunJob, ReadsItsInputsAndStoresItsReport) {
  StoredFourRanks f;
  const workflow::RunJob job(f.request(), 4, 0, no_port());
  EXPECT_EQ(job.schedule().hosts, f.run.s.hosts);
  EXPECT_EQ(job.schedule().phases, f.run.s.phases);
  const RankMapping map = job.mapping();
  EXPECT_EQ(map.port_guids, (std::vector<uint64_t>{0x101, 0x201, 0x301, 0x401}));
  EXPECT_EQ(map.base_lids, (std::vector<uint16_t>{8, 10, 12, 14}));
  EXPECT_TRUE(map.placement.empty());
  // 64 KiB at 1 GB/s: 65 536 ns a slot (the schedule has no timing of its own: one slot a message).
  EXPECT_EQ(job.config().message_size, 65536u);
  EXPECT_EQ(job.config().slot_ns, 65536);
  EXPECT_EQ(job.config().rounds, kRounds);

  workflow::RunRequest written = f.request();
  written.output = f.dir + "/run.json";
  workflow::RunJob writer(written, 4, 0, no_port());
  const workflow::RunEnding end = writer.finish(f.run.out);
  EXPECT_TRUE(end.clean);
  EXPECT_EQ(end.summary.planned, end.summary.ok);
  EXPECT_EQ(end.summary.planned, kRounds * 12);
  ASSERT_TRUE(end.report.contains("run_id"));
  EXPECT_NE(end.text.find("round-trip"), std::string::npos) << end.text;
  const workflow::RunReportInput back = workflow::parse_run_report(workflow::read_file(written.output), "run.json", 4);
  EXPECT_EQ(back.rounds_run, kRounds);
  store::FabricStore st(f.db, store::Access::read_only);
  const std::optional<store::RunRow> row = st.run(end.report["run_id"].get<int64_t>());
  ASSERT_TRUE(row);
  EXPECT_EQ(row->ok, row->planned);
  EXPECT_EQ(row->missing, 0);

  // A rank that never answered: the same outcome is no longer clean.
  FourRanks lost;
  lost.out.missing = {2};
  workflow::RunJob again(f.request(), 4, 0, no_port());
  const workflow::RunEnding partial = again.finish(lost.out);
  EXPECT_FALSE(partial.clean);
  EXPECT_EQ(partial.summary.missing_ranks, (std::vector<int32_t>{2}));
}

TEST(RunJob, PlacesRanksByNameAndRefusesBadRequests) {
  StoredFourRanks f;
  workflow::RunRequest r = f.request();
  r.placement = f.dir + "/ranks";
  workflow::write_whole_file(r.placement, "h4\nh3\nh2\nh1\n");
  EXPECT_EQ(workflow::RunJob(r, 4, 1, no_port()).mapping().placement, (std::vector<int32_t>{3, 2, 1, 0}));
  expect_input_error([&] { workflow::RunJob(r, 3, 0, no_port()); }, "places 4 ranks but 3 were started");
  workflow::write_whole_file(r.placement, "h4\nh3\nh4\nh1\n");
  expect_input_error([&] { workflow::RunJob(r, 4, 0, no_port()); }, "'h4' given for ranks 0 and 2");

  workflow::RunRequest both = f.request();
  both.schedule_file = f.dir + "/s.json";
  expect_input_error([&] { workflow::RunJob(both, 4, 0, no_port()); },
                     "give one of --schedule (with --db), --schedule-file or --follow DIR");
  workflow::RunRequest svg = f.request();
  svg.db.clear(), svg.schedule.clear(), svg.schedule_file = f.dir + "/s.json", svg.svg = f.dir + "/run.svg";
  expect_input_error([&] { workflow::RunJob(svg, 4, 0, no_port()); }, "s.json: cannot read");
  schedule::ScheduleDoc doc;
  doc.schedule = f.run.s, doc.identities = schedule::identify_hosts(f.run.w.f, f.run.s.hosts);
  workflow::write_whole_file(svg.schedule_file, schedule::to_json(doc));
  expect_input_error([&] { workflow::RunJob(svg, 4, 0, no_port()); }, "--svg needs --db");
  svg.svg.clear();
  EXPECT_EQ(workflow::RunJob(svg, 4, 0, no_port()).schedule().phases, f.run.s.phases);  // a file alone runs
  workflow::RunRequest late = f.request();
  late.late_threshold = "5 parsecs";
  expect_input_error([&] { workflow::RunJob(late, 4, 0, no_port()); },
                     "--late-threshold: '5 parsecs' is not a duration");
}
