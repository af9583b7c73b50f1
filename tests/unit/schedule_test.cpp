#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "fabric_store.hpp"
#include "fabrics.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/node_names.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"
#include "ibroute/schedule/validate.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::expect_input_error;
using ibroute::test::kShiftsOnly;
using ibroute::test::World;

namespace {
FatTreeSpec small(uint8_t lmc) {
  FatTreeSpec t;
  t.leaves = 4, t.hosts_per_leaf = 4, t.uplinks = 2, t.spines = 2, t.lmc = lmc, t.shuffle_names = true, t.seed = 3;
  return t;
}

ScheduleDoc planned_doc(const World& w) {
  ScheduleDoc d;
  d.schedule = plan_all_to_all(w.ctx, all_hosts(w.f), kShiftsOnly);
  d.schedule.name = "t";
  LoadReport r = evaluate(w.ctx, d.schedule.hosts, d.schedule.phases, false);
  time_schedule(w.ctx, r, 1 << 20, 0, d.schedule);
  d.identities = identify_hosts(w.f, d.schedule.hosts);
  d.fabric = {7, "2026-11-21T00:00:00Z", 2};
  d.created_at = "2026-11-21T00:00:01Z";
  return d;
}
}  // namespace

TEST(MaxMin, KnownAnswers) {
  // Links 0 (cap 10) and 1 (cap 4). Flow a: 0; b: 0,1; c: 1. Link 1 fills first: b = c = 2; a gets 8.
  auto r = max_min_rates({{0}, {0, 1}, {1}}, {10, 4});
  EXPECT_DOUBLE_EQ(r[0], 8);
  EXPECT_DOUBLE_EQ(r[1], 2);
  EXPECT_DOUBLE_EQ(r[2], 2);
  auto s = max_min_rates({{0}, {0}, {}}, {6});
  EXPECT_DOUBLE_EQ(s[0], 3);
  EXPECT_DOUBLE_EQ(s[2], 0);  // crosses no link: not limited by the fabric, reported as 0
  // Links one flow alone crosses (its ceiling) beside shared ones, filled at several levels. Caps:
  // 0: 10 (a, b), 1: 3 (a alone), 2: 100 (b alone), 3: 5 (b, c), 4: 1 (c alone). Level 1: c at its
  // own link; level 3: a at its own; then b takes what link 3 leaves it (5 - 1 = 4 < 10 - 3).
  auto t = max_min_rates({{0, 1}, {0, 2, 3}, {3, 4}}, {10, 3, 100, 5, 1});
  EXPECT_DOUBLE_EQ(t[0], 3);
  EXPECT_DOUBLE_EQ(t[1], 4);
  EXPECT_DOUBLE_EQ(t[2], 1);
  // Two flows at the same ceiling under a shared link with room to spare: both at the ceiling.
  auto u = max_min_rates({{0, 1}, {0, 2}}, {10, 4, 4});
  EXPECT_DOUBLE_EQ(u[0], 4);
  EXPECT_DOUBLE_EQ(u[1], 4);
}

TEST(Structure, MissingAndSlowLinks) {
  Fabric f = build_fat_tree(small(1));
  // Unplug leaf001's link to spine02 and slow another link to 1x.
  int leaf = -1, spine = -1;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].desc == "leaf001") leaf = static_cast<int>(i);
    if (f.nodes[i].desc == "spine02") spine = static_cast<int>(i);
  }
  for (int p = 1; p <= f.nodes[leaf].num_ports(); ++p) {
    Port& port = f.nodes[leaf].ports[p];
    if (port.peer_node == spine) {
      f.nodes[spine].ports[port.peer_port] = Port{.guid = f.nodes[spine].guid};
      port = Port{.guid = f.nodes[leaf].guid};
    }
  }
  f.nodes[leaf].ports[5].width = 1;
  FabricStructure s = analyze_structure(f);
  ASSERT_EQ(s.missing.size(), 1u);
  EXPECT_EQ(s.missing[0].a_node, leaf);
  EXPECT_EQ(s.missing[0].b_node, spine);
  ASSERT_EQ(s.slow.size(), 1u);
  EXPECT_EQ(s.transfer_bound, 2);
  LinkIndex links(f);
  EXPECT_EQ(link_capacity(s, links.gbps(links.id(leaf, 5))), 1);  // 1x: one transfer at most
}

TEST(Format, JsonRoundTripIsExact) {
  World w(build_fat_tree(small(2)));
  ScheduleDoc d = planned_doc(w);
  std::string text = to_json(d);
  ScheduleDoc back = from_json(text);
  EXPECT_EQ(back.schedule.phases, d.schedule.phases);
  EXPECT_EQ(back.identities, d.identities);
  EXPECT_EQ(back.fabric, d.fabric);
  EXPECT_EQ(back.schedule.timing, d.schedule.timing);
  EXPECT_EQ(back.schedule.name, "t");
  EXPECT_EQ(back.created_at, d.created_at);
  EXPECT_EQ(to_json(back), text);
}

TEST(Format, RejectsBrokenFiles) {
  World w(build_fat_tree(small(2)));
  std::string text = to_json(planned_doc(w));
  auto fails = [](const std::string& t, const std::string& needle) {
    expect_input_error([&] { from_json(t); }, needle);
  };
  fails(text.substr(0, text.size() / 2), "not valid JSON");
  fails("{\"format\": \"other\"}", "not an ibroute schedule");
  std::string v3 = text;
  v3.replace(v3.find("\"version\": 2"), 12, "\"version\": 4");
  fails(v3, "format version 4");
  std::string no_hosts = text;
  no_hosts.replace(no_hosts.find("\"hosts\""), 7, "\"hostz\"");
  fails(no_hosts, "\"hosts\" is missing");
  std::string bad_guid = text;
  bad_guid.replace(bad_guid.find("\"port_guid\": \"0x"), 16, "\"port_guid\": \"zz");
  fails(bad_guid, "GUID");
}

TEST(Format, CsvAndSlices) {
  World w(build_fat_tree(small(2)));
  ScheduleDoc d = planned_doc(w);
  std::string csv = to_csv(d);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "phase,src,dst,src_name,dst_name,dlid,dlid_offset");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 16 * 15);
  std::string slice = node_slice_json(d, 3);
  EXPECT_NE(slice.find("\"rank\":3"), std::string::npos);
  EXPECT_NE(slice.find("\"sends\":{\"dlid\":["), std::string::npos) << "columns, every phase one send: no phase list";
  EXPECT_NE(slice.find("\"hosts_count\":16"), std::string::npos);
  EXPECT_EQ(slice.find("\"hosts\""), std::string::npos) << "the peers are in the host table, not in every slice";
  const ScheduleDoc table = hosts_file_from_json(hosts_file_json(d));
  EXPECT_EQ(table.identities, d.identities);
  EXPECT_EQ(table.schedule.name, d.schedule.name);
}

TEST(Validate, AcceptsThePlanAndCatchesEachFault) {
  World w(build_fat_tree(small(2)));
  ScheduleDoc d = planned_doc(w);
  Validation ok = validate(w.ctx, d);
  EXPECT_TRUE(ok.ok()) << ok.checks[0].detail;
  EXPECT_EQ(ok.checks.size(), 6u);

  ScheduleDoc other = d;  // a host the scan does not know
  other.identities[2].port_guid = 0xdead;
  Validation v1 = validate(w.ctx, other);
  EXPECT_FALSE(v1.checks[0].ok);
  EXPECT_NE(v1.checks[0].detail.find("not in this scan"), std::string::npos);

  ScheduleDoc lids = d;  // LIDs changed since
  lids.identities[1].base_lid += 4;
  EXPECT_FALSE(validate(w.ctx, lids).checks[0].ok);

  ScheduleDoc dup = d;  // a pair twice, another never
  std::swap(dup.schedule.phases[0].dst, dup.schedule.phases[1].dst);
  dup.schedule.phases[1] = dup.schedule.phases[0];
  EXPECT_FALSE(validate(w.ctx, dup).checks[1].ok);

  ScheduleDoc foreign = d;  // a DLID of someone else
  foreign.schedule.phases[0].dlid[0] = foreign.schedule.phases[0].dlid[1];
  EXPECT_FALSE(validate(w.ctx, foreign).checks[2].ok);

  ScheduleDoc naive = d;  // round-robin with base LIDs: congested on this fabric
  std::vector<Phase> rr = shift_phases(d.schedule.hosts.size());
  apply_lid_policy(w.f, d.schedule.hosts, rr, LidPolicy::base);
  naive.schedule.phases = rr;
  Validation v5 = validate(w.ctx, naive);
  ASSERT_EQ(v5.checks[5].name, "congestion");
  bool congested = !v5.checks[5].ok;
  LoadReport r = evaluate(w.ctx, d.schedule.hosts, rr, false);
  EXPECT_EQ(congested, r.max_load > 2);
  // The plan's timing gives each phase the time of 2 transfers per link: a phase with more does not fit.
  ASSERT_EQ(v5.checks[4].name, "timing");
  EXPECT_EQ(v5.checks[4].ok, r.max_load <= 2) << v5.checks[4].detail;
}

TEST(Admission, RateAndSlot) {
  World w(build_fat_tree(small(2)));
  ScheduleDoc d = planned_doc(w);
  LoadReport r = evaluate(w.ctx, d.schedule.hosts, d.schedule.phases, false);
  const double fastest = fastest_rate(phase_needs(w.ctx, r, 1 << 20), 15, 1 << 20);
  EXPECT_NEAR(planned_rate(d.schedule), fastest, fastest * 0.02);  // no rate asked: as fast as the links allow
  // Below it: the rate asked, within the rounding of the slots; every phase at least one message at that rate.
  Schedule s = d.schedule;
  time_schedule(w.ctx, r, 1 << 20, 5e9, s);
  EXPECT_GE(planned_rate(s), 0.98 * 5e9);
  EXPECT_LE(planned_rate(s), 5e9 * (1 + 1e-9));
  const std::vector<uint64_t> at = slot_starts(s);
  for (size_t k = 0; k + 1 < at.size(); ++k)
    EXPECT_GE((at[k + 1] - at[k]) * s.timing.slot_s, (1 << 20) / 5e9 * (1 - 1e-9)) << k;
  expect_input_error([&] { time_schedule(w.ctx, r, 1 << 20, fastest * 1.1, s); }, "at most " + rate_text(fastest));
  EXPECT_THROW(time_schedule(w.ctx, r, 0, 0, s), ibroute::InputError);
}

TEST(Hosts, NaturalOrderAndPicking) {
  EXPECT_TRUE(natural_less("node2-001", "node10-001"));
  EXPECT_TRUE(natural_less("node1-009", "node1-010"));
  EXPECT_FALSE(natural_less("node1-010", "node1-010"));
  World w(build_fat_tree(small(0)));
  auto all = all_hosts(w.f);
  ASSERT_EQ(all.size(), 16u);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_TRUE(natural_less(all[i - 1].name, all[i].name));
  auto two = pick_hosts(w.f, all, {all[5].name, all[2].name});
  EXPECT_EQ(two[0], all[5]);
  EXPECT_THROW(pick_hosts(w.f, all, {"nope", all[1].name}), ibroute::InputError);
  EXPECT_THROW(pick_hosts(w.f, all, {all[1].name, all[1].name}), ibroute::InputError);
  auto topo = topology_order(w.f, all);
  for (size_t i = 1; i < topo.size(); ++i) {
    const Port& a = w.f.nodes[topo[i - 1].node].ports[1];
    const Port& b = w.f.nodes[topo[i].node].ports[1];
    EXPECT_LE(w.f.nodes[a.peer_node].guid, w.f.nodes[b.peer_node].guid);
  }
}

TEST(ScheduleStore, RoundTripAndMigrationFromVersion1) {
  std::string path =
      (std::filesystem::temp_directory_path() / ("ibroute-sched-" + std::to_string(::getpid()) + ".db")).string();
  std::filesystem::remove(path);
  World w(build_fat_tree(small(2)));
  ScheduleDoc d = planned_doc(w);
  {
    ibroute::store::FabricStore s(path, ibroute::store::Access::create);
    int64_t scan = s.save_scan({.source = "offline", .origin = "unit"}, w.f, resolve_routes(w.f));
    // Make it look like a version-1 database: no schedule tables.
    s.db().exec(
        "DROP TABLE schedule; DROP TABLE schedule_host; DROP TABLE schedule_phase; DROP TABLE run;"
        "UPDATE meta SET value='1' WHERE key='schema_version'");
    (void)scan;
  }
  ibroute::store::FabricStore s(path, ibroute::store::Access::read_write);  // migrates
  int64_t id = s.save_schedule(1, d.schedule, 2, 0, 0.1, false);
  EXPECT_THROW(s.save_schedule(1, d.schedule, 2, 0, 0.1, false), ibroute::InputError);
  EXPECT_EQ(s.save_schedule(1, d.schedule, 2, 0, 0.1, true), id + 1);  // replaced
  Schedule back = s.load_schedule(s.schedule_info("t").id);
  EXPECT_EQ(back.phases, d.schedule.phases);
  EXPECT_EQ(back.hosts, d.schedule.hosts);
  EXPECT_EQ(back.timing, d.schedule.timing);
  EXPECT_EQ(s.schedules().size(), 1u);
  EXPECT_THROW(s.schedule_info("nope"), ibroute::InputError);
  std::filesystem::remove(path);
}

TEST(RunStore, MigrationFromVersion2AndRoundTrip) {
  std::string path =
      (std::filesystem::temp_directory_path() / ("ibroute-run-" + std::to_string(::getpid()) + ".db")).string();
  std::filesystem::remove(path);
  World w(build_fat_tree(small(2)));
  {
    ibroute::store::FabricStore s(path, ibroute::store::Access::create);
    s.save_scan({.source = "offline", .origin = "unit"}, w.f, resolve_routes(w.f));
    s.db().exec("DROP TABLE run; UPDATE meta SET value='2' WHERE key='schema_version'");  // a version-2 database
  }
  ibroute::store::FabricStore s(path, ibroute::store::Access::read_write);  // migrates
  ibroute::store::RunRow r;
  r.scan_id = 1, r.ranks = 4, r.rounds = 3, r.planned = 36, r.ok = 35, r.skipped = 1, r.report_json = "{\"x\":1}";
  int64_t id = s.save_run(r);
  std::optional<ibroute::store::RunRow> back = s.run(id);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->scan_id, 1);
  EXPECT_FALSE(back->schedule_id);
  EXPECT_EQ(back->planned, 36);
  EXPECT_EQ(back->ok, 35);
  EXPECT_EQ(back->skipped, 1);
  EXPECT_EQ(back->report_json, "{\"x\":1}");
  EXPECT_FALSE(s.run(id + 1));
  std::filesystem::remove(path);
}

TEST(Hosts, EveryFormOfAHostsNameAndAmbiguityRefusedWithTheCandidates) {
  using ibroute::test::expect_input_error;
  ibroute::test::TwoLeaves t;  // h1..h4: node GUIDs 0x100..0x400, port 1 GUID +1, base LIDs 8, 10, 12, 14 (LMC 1)
  assign_display_names(t.f, {{0x300, "rack3-a"}});  // a node-name map renames h3
  t.f.nodes[t.h[3]].desc = "h1";                    // and h4 reports the same description as h1
  const std::vector<Host> all = all_hosts(t.f);
  auto pick = [&](std::vector<std::string> names) { return pick_hosts(t.f, all, names, 1)[0].node; };
  EXPECT_EQ(pick({"h2"}), t.h[1]);                     // node description
  EXPECT_EQ(pick({"rack3-a"}), t.h[2]);                // node-name map
  EXPECT_EQ(pick({"h3"}), t.h[2]);                     // the reported description behind the map name
  EXPECT_EQ(pick({"0x200"}), t.h[1]);                  // node GUID
  EXPECT_EQ(pick({"0x0000000000000201"}), t.h[1]);     // port GUID
  EXPECT_EQ(pick({"11"}), t.h[1]);                     // a LID of its port (base 10, LMC 1)
  EXPECT_EQ(pick({"h1 0x0000000000000400"}), t.h[3]);  // a repeated description made unique, as plans list it
  expect_input_error([&] { pick({"h1"}); },
                     "'h1' names 2 nodes (h1 0x0000000000000100 LID 8; h1 0x0000000000000400 LID 14)");
  expect_input_error([&] { pick({"L1"}); }, "'L1' is a switch, not a host");
  expect_input_error([&] { pick({"0x999"}); }, "unknown host '0x999'");
  expect_input_error([&] { pick({"77"}); }, "unknown host '77'");
  expect_input_error([&] { pick_hosts(t.f, all, {"h2", "0x200"}, 1); }, "host '0x200' is listed twice (as 'h2')");
}

TEST(NodeNames, RoutesEndsTakeTheSameFormsAndSwitchesToo) {
  using ibroute::test::expect_input_error;
  ibroute::test::TwoLeaves t;
  const NodeNames names(t.f);
  EXPECT_EQ(names.resolve("S2", "--to"), (NamedPort{t.s2, 0}));
  EXPECT_EQ(names.resolve("0x3000", "--to"), (NamedPort{t.s1, 0}));
  EXPECT_EQ(names.resolve("2", "--to"), (NamedPort{t.l2, 0}));  // a switch's LID
  EXPECT_EQ(names.resolve("0x401", "--from"), (NamedPort{t.h[3], 1}));
  expect_input_error([&] { names.resolve("nowhere", "--from"); }, "--from: no node or port 'nowhere'");
}
