// Hostile and damaged JSON input (docs/robustness.md): every value range-checked where it is read,
// one InputError naming the JSON pointer, memory bounded by what the file holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "expectation.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/format.hpp"
#include "run_report_read.hpp"

namespace {

using nlohmann::json;
using namespace ibroute;

// The message of the InputError `f` throws ("" when it throws none); any other exception fails the test.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  }
  return "";
}

json schedule4() {
  const int n = 4;
  json hosts = json::array(), phases = json::array();
  for (int r = 0; r < n; ++r) {
    char g[32];
    std::snprintf(g, sizeof g, "0x%016x", 0x100 + 16 * r);
    hosts.push_back({{"rank", r},
                     {"name", "n" + std::to_string(r)},
                     {"node_guid", g},
                     {"port_guid", g},
                     {"base_lid", 10 + 2 * r},
                     {"lmc", 1}});
  }
  for (int k = 1; k < n; ++k) {
    json p = json::array();
    for (int i = 0; i < n; ++i) p.push_back({{"src", i}, {"dst", (i + k) % n}, {"dlid", 10 + 2 * ((i + k) % n)}});
    phases.push_back(p);
  }
  return {{"format", "ibroute-schedule"},
          {"version", 1},
          {"name", "a2a"},
          {"created_at", "2026-11-21T23:40:02Z"},
          {"method", "structure"},
          {"bound", 2},
          {"fabric", {{"scan_id", 3}, {"scan_started_at", "x"}, {"lmc", 1}}},
          {"timing", {{"message_size", 1048576}, {"rate", 6.25e9}, {"slot_s", 0.000167772}}},
          {"hosts", hosts},
          {"phases", phases}};
}

std::string schedule_error(const json& j) {
  return error_of([&] { schedule::from_json(j.dump()); });
}

TEST(ScheduleInput, ValidFileReads) {
  schedule::ScheduleDoc d = schedule::from_json(schedule4().dump());
  EXPECT_EQ(d.schedule.phases.size(), 3u);
  EXPECT_EQ(d.schedule.phases[2].dlid[3], 14);
}

TEST(ScheduleInput, RangesAreCheckedWhereRead) {
  json j = schedule4();
  j["version"] = 1.9;
  EXPECT_NE(schedule_error(j).find("/version: schedule format version 1.9"), std::string::npos);
  j = schedule4(), j["version"] = "1";
  EXPECT_NE(schedule_error(j).find("/version"), std::string::npos);
  j = schedule4(), j["phases"][2][3]["dlid"] = 65550;  // must not become 14
  EXPECT_EQ(schedule_error(j), "/phases/2/3/dlid: 65550 is not a unicast LID (1..49151)");
  j = schedule4(), j["phases"][2][3]["dlid"] = 0;
  EXPECT_NE(schedule_error(j).find("not a unicast LID"), std::string::npos);
  j = schedule4(), j["hosts"][1]["base_lid"] = 0xC000;
  EXPECT_NE(schedule_error(j).find("/hosts/1/base_lid: 49152 is not a unicast LID"), std::string::npos);
  j = schedule4(), j["hosts"][1]["base_lid"] = 49151;  // its 2 LIDs go beyond the unicast range
  EXPECT_NE(schedule_error(j).find("/hosts/1/lmc"), std::string::npos);
  for (int lmc : {257, 40, 8, -1}) {
    j = schedule4(), j["hosts"][1]["lmc"] = lmc;
    EXPECT_NE(schedule_error(j).find("/hosts/1/lmc: " + std::to_string(lmc) + " is not an LMC (0..7)"),
              std::string::npos)
        << lmc;
    j = schedule4(), j["fabric"]["lmc"] = lmc;
    EXPECT_NE(schedule_error(j).find("/fabric/lmc"), std::string::npos) << lmc;
  }
  j = schedule4(), j["phases"][0][1]["dst"] = 4;
  EXPECT_NE(schedule_error(j).find("/phases/0/1/dst: 4: rank out of range (0..3)"), std::string::npos);
  j = schedule4(), j["phases"][0][1]["src"] = -1;
  EXPECT_NE(schedule_error(j).find("/phases/0/1/src"), std::string::npos);
  j = schedule4(), j["phases"][0][1]["src"] = 18446744073709551615u;
  EXPECT_NE(schedule_error(j).find("rank out of range"), std::string::npos);
  j = schedule4(), j["timing"].erase("rate");
  EXPECT_EQ(schedule_error(j), "/timing/rate: \"rate\" is missing");
  j = schedule4(), j["bound"] = "two";
  EXPECT_EQ(schedule_error(j), "/bound: \"two\" is not an integer (a transfer bound (0..1048576))");
  j = schedule4(), j["bound"] = -2;
  EXPECT_NE(schedule_error(j).find("/bound"), std::string::npos);
  j = schedule4(), j["timing"]["message_size"] = -1;
  EXPECT_NE(schedule_error(j).find("/timing/message_size"), std::string::npos);
  j = schedule4(), j["phases"] = json::array();
  EXPECT_NE(schedule_error(j).find("/phases: no phases (a schedule moves at least one transfer)"), std::string::npos);
  j = schedule4(), j["phases"][1] = json::object();
  EXPECT_NE(schedule_error(j).find("/phases/1: an object is not a list"), std::string::npos);
  j = schedule4(), j["phases"][1][0] = 7;
  EXPECT_NE(schedule_error(j).find("/phases/1/0: 7 is not an object"), std::string::npos);
  j = schedule4(), j["hosts"][2]["port_guid"] = j["hosts"][0]["port_guid"];
  EXPECT_NE(schedule_error(j).find("/hosts/2/port_guid"), std::string::npos);
  j = schedule4(), j["hosts"][2]["name"] = "a\nb";  // the message stays one line
  EXPECT_NE(schedule_error(j).find("control character"), std::string::npos);
  j = schedule4(), j["hosts"][2]["node_guid"] = "0x";
  EXPECT_NE(schedule_error(j).find("not a GUID"), std::string::npos);
}

TEST(ScheduleInput, MemoryIsBoundedByTheFile) {
  json j = schedule4();
  j["phases"].push_back(json::array());  // more phases than an all-to-all has
  EXPECT_NE(schedule_error(j).find("4 phases; an all-to-all of 4 hosts has 3"), std::string::npos);

  // The amplification case: ~530 KB of hosts and empty phases used to make validate take 1.2 GB.
  auto big = [](int n, int phases) {
    std::string s =
        R"({"format":"ibroute-schedule","version":1,"name":"x","created_at":"","method":"","bound":2,)"
        R"("fabric":{"scan_id":1,"scan_started_at":"","lmc":0},"timing":{"message_size":1,"rate":1,"slot_s":1},"hosts":[)";
    for (int r = 0; r < n; ++r) {
      char h[160];
      std::snprintf(h, sizeof h,
                    R"(%s{"rank":%d,"name":"","node_guid":"0x%x","port_guid":"0x%x","base_lid":1,"lmc":0})",
                    r ? "," : "", r, r, r);
      s += h;
    }
    s += R"(],"phases":[)";
    for (int k = 0; k < phases; ++k) s += k ? ",[]" : "[]";
    return s + "]}";
  };
  std::string many_phases = big(1000, 150000);
  EXPECT_GT(many_phases.size(), 500000u);
  EXPECT_NE(
      error_of([&] { schedule::from_json(many_phases); }).find("150000 phases; an all-to-all of 1000 hosts has 999"),
      std::string::npos);
  std::string many_hosts = big(6000, 5999);
  EXPECT_NE(error_of([&] { schedule::from_json(many_hosts); }).find("5999 phases of 6000 hosts list only 0 transfers"),
            std::string::npos);
}

std::string expectation_error(const std::string& text) {
  return error_of([&] { workflow::parse_expectation(text, "expect.json"); });
}

TEST(ExpectationInput, RangesAreCheckedWhereRead) {
  EXPECT_EQ(expectation_error(R"({"topology": "two-level", "hosts": 96, "link_width": 4, "link_speed": "EDR", "lmc": 2,
      "max_broken_links": 1, "max_routing_imbalance": 1.5, "congestion_free": true, "min_rate_per_node": "5G",
      "max_skipped_share": 0.001, "max_clock_uncertainty_us": 5, "message_size": "1M"})"),
            "");
  EXPECT_EQ(expectation_error(R"({"lmc": 257})"), "expect.json: /lmc: 257 is not an LMC (0..7)");
  EXPECT_EQ(expectation_error(R"({"lmc": 40})"), "expect.json: /lmc: 40 is not an LMC (0..7)");
  EXPECT_NE(expectation_error(R"({"lmc": 2.5})").find("/lmc"), std::string::npos);
  EXPECT_EQ(expectation_error(R"({"max_broken_links": -1})"),
            "expect.json: /max_broken_links: -1 is not a number of links (0 or more)");
  EXPECT_NE(expectation_error(R"({"hosts": -5})").find("/hosts"), std::string::npos);
  EXPECT_NE(expectation_error(R"({"hosts": "96"})").find("/hosts: \"96\" is not an integer"), std::string::npos);
  EXPECT_NE(expectation_error(R"({"link_width": 3})").find("/link_width"), std::string::npos);
  EXPECT_NE(expectation_error(R"({"link_speed": "FAST"})").find("/link_speed"), std::string::npos);
  EXPECT_NE(expectation_error(R"({"topology": "flat"})").find("/topology"), std::string::npos);
  EXPECT_NE(expectation_error(R"({"congestion_free": "yes"})").find("/congestion_free"), std::string::npos);
  EXPECT_NE(expectation_error(R"({"min_rate_per_node": 5000000000})").find("/min_rate_per_node"), std::string::npos);
  EXPECT_NE(expectation_error(R"({"min_rate_per_node": "5Q"})")
                .find("/min_rate_per_node: min_rate_per_node '5Q': unknown unit"),
            std::string::npos);
  EXPECT_NE(expectation_error(R"({"message_size": "1e30"})").find("/message_size"), std::string::npos);
  EXPECT_NE(expectation_error(R"({"max_skipped_share": 2})").find("/max_skipped_share"), std::string::npos);
  EXPECT_NE(expectation_error(R"({"max_routing_imbalance": 0.5})").find("/max_routing_imbalance"), std::string::npos);
  EXPECT_EQ(expectation_error("{\"a\\nb\": 1}"), "expect.json: /a\\nb: unknown key 'a\\nb' (see docs/acceptance.md)");
  EXPECT_EQ(expectation_error(R"({"hostz": 1})"), "expect.json: /hostz: unknown key 'hostz' (see docs/acceptance.md)");
  EXPECT_NE(expectation_error("[1]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(expectation_error("{nope").find("not JSON"), std::string::npos);
}

// One parser for every quantity (options, expectation files): decimal only, in range, or refused
// naming the option.
TEST(QuantityInput, DecimalOnlyAndWithinWhatReadersHold) {
  EXPECT_EQ(workflow::parse_quantity("1MiB", true, "--message-size"), 1048576.0);
  EXPECT_EQ(workflow::parse_quantity("1.5K", true, "--message-size"), 1500.0);
  EXPECT_EQ(workflow::parse_quantity("40Gb/s", false, "--rate"), 5e9);
  EXPECT_EQ(workflow::parse_quantity("5e3G", false, "--rate"), 5e12);
  EXPECT_EQ(workflow::parse_quantity("1TiB", true, "--message-size"), static_cast<double>(uint64_t{1} << 40));
  auto refused = [](const std::string& text, bool size, const std::string& needle) {
    const std::string e = error_of([&] { workflow::parse_quantity(text, size, size ? "--message-size" : "--rate"); });
    EXPECT_NE(e.find(needle), std::string::npos) << text << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  };
  const std::vector<std::tuple<std::string, bool, std::string>> cases = {
      {"0x10G", false, "unknown unit 'x10G'"},
      {"0x100", true, "unknown unit 'x100'"},
      {"0x1p3G", false, "unknown unit 'x1p3G'"},
      {"nan", true, "'nan' is not a decimal number"},
      {"infG", false, "'infG' is not a decimal number"},
      {"-5G", false, "'-5G' is not a decimal number"},
      {" 5G", false, "not a decimal number"},
      {"1e16", true, "--message-size '1e16' is out of range (1 B .. 1 TiB)"},
      {"999999999999999999", true, "out of range"},
      {"0.5", true, "out of range"},
      {"5e-300G", false, "--rate '5e-300G' is out of range (1 B/s .. 1 PB/s)"},
      {"1e300G", false, "out of range"},
      {"5e", false, "unknown unit 'e'"}};
  for (const auto& [text, size, needle] : cases) refused(text, size, needle);
}

// Read once into typed values: what the checks compare with, in their units (bytes, bytes/s).
TEST(ExpectationInput, ValuesAreTypedOnceRead) {
  const workflow::Expectation e = workflow::parse_expectation(
      R"({"topology": "three-level", "hosts": 96, "link_width": 4, "link_speed": "EDR", "lmc": 2, "max_broken_links": 1,
          "min_rate_per_node": "5G", "message_size": "1MiB", "max_skipped_share": 0.001, "fault_max_share": 0.6,
          "congestion_free": false, "xmit_wait_tick_ns": 4.5})",
      "expect.json");
  EXPECT_EQ(e.levels, 3);
  EXPECT_EQ(e.hosts, 96u);
  EXPECT_EQ(e.link_width, 4);
  EXPECT_EQ(e.link_speed, "EDR");
  EXPECT_EQ(e.lmc, 2);
  EXPECT_EQ(e.max_broken_links, 1u);
  EXPECT_EQ(e.min_rate_per_node, workflow::parse_quantity("5G", false, "rate"));
  EXPECT_EQ(e.message_size, 1u << 20);
  EXPECT_EQ(e.max_skipped_share, 0.001);
  EXPECT_EQ(e.text("max_skipped_share"), "0.001");  // as written, for the report
  EXPECT_FALSE(e.congestion_free);
  EXPECT_EQ(e.fault_max_share, 0.6);
  EXPECT_EQ(e.fault_confidence, workflow::kFaultConfidence);  // not given: the default
  EXPECT_EQ(e.xmit_wait_tick_ns, 4.5);
  EXPECT_FALSE(e.max_link_errors);
  EXPECT_EQ(workflow::parse_expectation(R"({"topology": 2})", "e.json").levels, 2);
  EXPECT_TRUE(workflow::parse_expectation("{}", "e.json").congestion_free);
}

json run_report4() {
  std::ifstream in(std::string(IBROUTE_FUZZ_CORPUS) + "/run_report/valid-4.json");
  return json::parse(in);
}

std::string report_error(const json& j, size_t hosts = 4) {
  return error_of([&] { workflow::parse_run_report(j.dump(), "run.json", hosts); });
}

TEST(RunReportInput, ValidReportReads) {
  workflow::RunReportInput r = workflow::parse_run_report(run_report4().dump(), "run.json", 4);
  EXPECT_EQ(r.ranks, 4u);
  ASSERT_EQ(r.pair_gbps.size(), 16u);
  EXPECT_GT(r.pair_gbps[0 * 4 + 1], 0.f);
  EXPECT_EQ(r.pair_gbps[2 * 4 + 3], 0.f);  // skipped
  EXPECT_EQ(r.missing_ranks, std::optional<size_t>(0));
  EXPECT_EQ(r.clock.size(), 4u);
  ASSERT_EQ(r.node_rates.size(), 4u);  // per rank: accept's two-group check takes the slowest sender
  EXPECT_DOUBLE_EQ(r.node_rate, *std::min_element(r.node_rates.begin(), r.node_rates.end()));
  EXPECT_TRUE(
      workflow::parse_run_report(run_report4().dump(), "run.json", 5).pair_gbps.empty());  // another plan: no matrix
}

json run_report_v2() {
  std::ifstream in(std::string(IBROUTE_FUZZ_CORPUS) + "/run_report/valid-v2-4.json");
  return json::parse(in);
}

TEST(RunReportInput, Version2ReadsThePairMatrixAndTheRateSearch) {
  workflow::RunReportInput r = workflow::parse_run_report(run_report_v2().dump(), "run.json", 4);
  EXPECT_EQ(r.ranks, 4u);
  ASSERT_EQ(r.pair_gbps.size(), 16u);
  EXPECT_EQ(r.pair_gbps[0], 0.f);  // no transfer to itself
  EXPECT_GT(r.pair_gbps[0 * 4 + 1], 0.f);
  EXPECT_FALSE(r.sustainable_rate);
  std::ifstream in(std::string(IBROUTE_FUZZ_CORPUS) + "/run_report/find-rate-v2-4.json");
  json f = json::parse(in);
  r = workflow::parse_run_report(f.dump(), "run.json", 4);
  ASSERT_TRUE(r.sustainable_rate);
  EXPECT_DOUBLE_EQ(*r.sustainable_rate, f["find_rate"]["answer"].get<double>());
  json j = run_report_v2();
  j["pair_mbps"][2].erase(1);
  EXPECT_EQ(report_error(j), "run.json: /pair_mbps/2: has 3 values, the run had 4 ranks");
  j = run_report_v2(), j["pair_mbps"].erase(3);
  EXPECT_EQ(report_error(j), "run.json: /pair_mbps: has 3 rows, the run had 4 ranks");
  j = run_report_v2(), j["pair_mbps"][1][2] = -4;
  EXPECT_NE(report_error(j).find("/pair_mbps/1/2"), std::string::npos);
  j = run_report_v2(), j["version"] = 3;
  EXPECT_NE(report_error(j).find("this ibroute reads versions 1 and 2"), std::string::npos);
  j = run_report_v2(), j.erase("pair_mbps");  // above 2048 ranks there is none
  EXPECT_TRUE(workflow::parse_run_report(j.dump(), "run.json", 4).pair_gbps.empty());
}

TEST(RunReportInput, NeverIndexesOutOfBounds) {
  json j = run_report4();
  j["transfers"][3] = json::array({0, 1, 12, 0});
  EXPECT_EQ(report_error(j), "run.json: /transfers/3: a row of 4 values, the table has 10 columns");
  j = run_report4(), j["transfers"][5][0] = 7;
  EXPECT_EQ(report_error(j), "run.json: /transfers/5/0: 7 is not a rank of this run (0..3)");
  j = run_report4(), j["transfers"][5][1] = -1;
  EXPECT_NE(report_error(j).find("/transfers/5/1"), std::string::npos);
  j = run_report4(), j["ranks"] = 100000;  // claims more ranks than it reports
  EXPECT_NE(report_error(j, 100000).find("/nodes: lists 4 ranks, the run had 100000"), std::string::npos);
  j = run_report4(), j["transfer_columns"].erase(0);
  EXPECT_NE(report_error(j).find("/transfer_columns: no column \"src\""), std::string::npos);
  j = run_report4(), j["nodes"][1]["send_gbps"] = "fast";
  EXPECT_NE(report_error(j).find("/nodes/1/send_gbps: \"fast\" is not a number"), std::string::npos);
  j = run_report4(), j["version"] = 1.9;
  EXPECT_NE(report_error(j).find("/version"), std::string::npos);
  j = run_report4(), j["clock"]["ranks"][2].erase("host");
  EXPECT_NE(report_error(j).find("/clock/ranks/2/host: \"host\" is missing"), std::string::npos);
  j = run_report4(), j["not_ok"][0]["dlid"] = 65550;
  EXPECT_NE(report_error(j).find("/not_ok/0/dlid: 65550 is not a unicast LID"), std::string::npos);
  j = run_report4(), j["totals"]["skipped_share"] = -0.5;
  EXPECT_NE(report_error(j).find("/totals/skipped_share"), std::string::npos);
  j = run_report4(), j["missing_ranks"] = json::array({{{"rank", 9}, {"host", "x"}}});
  EXPECT_NE(report_error(j).find("/missing_ranks/0/rank"), std::string::npos);
  j = run_report4(), j["format"] = "ibroute-schedule";
  EXPECT_NE(report_error(j).find("not an ibroute run report"), std::string::npos);
}

}  // namespace
