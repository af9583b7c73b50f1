// Two-group schedules (senders -> receivers) and the compact format that stores shifts and offsets.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <numeric>
#include <set>

#include "fabric_store.hpp"
#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"
#include "ibroute/schedule/validate.hpp"
#include "round_robin.hpp"
#include "schedule_docs.hpp"
#include "slurm_topology.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::expect_input_error;
using ibroute::test::kShiftsOnly;
using ibroute::test::World;

namespace {

std::vector<int32_t> ranks(int from, int to) {  // from .. to-1
  std::vector<int32_t> r(to - from);
  std::iota(r.begin(), r.end(), from);
  return r;
}

// Every (sender, receiver) pair exactly once, counted here without check_pairs.
void expect_each_pair_once(size_t n, const std::vector<int32_t>& snd, const std::vector<int32_t>& rcv,
                           const std::vector<Phase>& phases) {
  std::multiset<std::pair<int, int>> seen;
  for (const Phase& ph : phases) {
    std::set<int> receiving;
    for (size_t i = 0; i < n; ++i)
      if (ph.dst[i] >= 0) {
        seen.emplace(static_cast<int>(i), ph.dst[i]);
        EXPECT_TRUE(receiving.insert(ph.dst[i]).second) << "rank " << ph.dst[i] << " receives twice in a phase";
      }
  }
  std::multiset<std::pair<int, int>> want;
  for (int32_t s : snd)
    for (int32_t r : rcv)
      if (s != r) want.emplace(s, r);
  EXPECT_EQ(seen, want);
}

FatTreeSpec half_fat_tree(uint8_t lmc) {
  FatTreeSpec t;
  t.leaves = 8, t.hosts_per_leaf = 6, t.uplinks = 3, t.spines = 3, t.lmc = lmc, t.shuffle_names = true, t.seed = 5;
  return t;
}

ScheduleDoc doc_of(const World& w, Schedule s) { return ibroute::test::doc_of(w, std::move(s), "g"); }

}  // namespace

TEST(Groups, PhasesCoverEveryPairOnceInMaxPhases) {
  struct Case {
    size_t n;
    std::vector<int32_t> snd, rcv;
    size_t phases;
  };
  const std::vector<Case> cases = {
      {10, ranks(0, 5), ranks(5, 10), 5},  // disjoint halves
      {8, ranks(0, 2), ranks(2, 8), 6},    // 1:3
      {8, ranks(0, 6), ranks(6, 8), 6},    // 3:1
      {10, ranks(0, 6), ranks(3, 10), 7},  // overlapping: 3 ranks in both
      {6, ranks(0, 6), ranks(0, 6), 5},    // the same group: shift 0 has no transfer
      {7, {6, 2, 4}, {1, 3, 5, 0}, 4},     // any rank order
  };
  for (const Case& c : cases) {
    std::vector<Phase> ph = group_phases(c.n, c.snd, c.rcv);
    EXPECT_EQ(ph.size(), c.phases);
    expect_each_pair_once(c.n, c.snd, c.rcv, ph);
    Schedule s;
    s.hosts.resize(c.n);
    s.senders = c.snd, s.receivers = c.rcv, s.phases = ph;
    EXPECT_EQ(check_pairs(s), "");
    EXPECT_EQ(shifts_of(s).size(), ph.size());
  }
  // Equal groups over every rank are the all-to-all shifts.
  EXPECT_EQ(group_phases(6, ranks(0, 6), ranks(0, 6)), shift_phases(6));
}

TEST(Groups, CheckPairsNamesWhatIsWrong) {
  Schedule s;
  s.hosts.resize(6);
  s.senders = ranks(0, 3), s.receivers = ranks(3, 6);
  s.phases = group_phases(6, s.senders, s.receivers);
  Schedule missing = s;
  missing.phases[1].dst[0] = -1;
  EXPECT_NE(check_pairs(missing).find("is missing"), std::string::npos);
  Schedule wrong = s;
  wrong.phases[0].dst[3] = 0;  // a receiver that sends
  EXPECT_NE(check_pairs(wrong).find("is not a sender"), std::string::npos);
  Schedule twice = s;
  twice.phases[0].dst[1] = twice.phases[0].dst[0];
  EXPECT_NE(check_pairs(twice).find("receives twice"), std::string::npos);
  EXPECT_TRUE(shifts_of(twice).empty());  // not a shift pattern any more
}

TEST(Groups, PlannedCongestionFreeOnAHalfFatTree) {
  World w(build_fat_tree(half_fat_tree(2)));
  std::vector<Host> hosts = topology_order(w.f, all_hosts(w.f));
  const int n = static_cast<int>(hosts.size());
  ASSERT_EQ(n, 48);
  struct Case {
    std::vector<int32_t> snd, rcv;
  };
  for (const Case& c : {Case{ranks(0, 24), ranks(24, 48)}, Case{ranks(0, 12), ranks(12, 48)},
                        Case{ranks(0, 36), ranks(36, 48)}, Case{ranks(0, 32), ranks(16, 48)}}) {
    PlanStats st;
    Schedule s = plan_groups(w.ctx, hosts, c.snd, c.rcv, kShiftsOnly, &st);
    EXPECT_EQ(s.phases.size(), std::max(c.snd.size(), c.rcv.size()));
    expect_each_pair_once(hosts.size(), c.snd, c.rcv, s.phases);
    LoadReport r = evaluate(w.ctx, s.hosts, s.phases, false);
    EXPECT_LE(r.max_load, w.s.transfer_bound) << c.snd.size() << " -> " << c.rcv.size();
    EXPECT_EQ(st.phases_over, 0u);
    ScheduleDoc d = doc_of(w, s);
    EXPECT_TRUE(validate(w.ctx, d).ok());
  }
}

TEST(Format, TwoGroupsRoundTripCompactly) {
  World w(build_fat_tree(half_fat_tree(2)));
  std::vector<Host> hosts = all_hosts(w.f);
  ScheduleDoc d = doc_of(w, plan_groups(w.ctx, hosts, ranks(0, 12), ranks(12, 48), kShiftsOnly));
  const std::string text = to_json(d);
  EXPECT_NE(text.find("\"version\": 2"), std::string::npos);
  EXPECT_NE(text.find("\"encoding\": \"shift\""), std::string::npos);
  EXPECT_EQ(text.find("\"src\""), std::string::npos);  // no transfer objects
  ScheduleDoc back = from_json(text);
  EXPECT_EQ(back.schedule.senders, d.schedule.senders);
  EXPECT_EQ(back.schedule.receivers, d.schedule.receivers);
  EXPECT_EQ(back.schedule.phases, d.schedule.phases);
  EXPECT_EQ(to_json(back), text);  // byte for byte
  // The host table names the groups; a receiver that sends nothing has no sends.
  const ScheduleDoc table = hosts_file_from_json(hosts_file_json(d));
  EXPECT_EQ(table.schedule.senders, d.schedule.senders);
  EXPECT_EQ(table.schedule.receivers, d.schedule.receivers);
  const std::string slice = SliceWriter(d).slice(40);
  EXPECT_NE(slice.find("\"sends\":{\"dlid\":[],\"dst\":[]}"), std::string::npos) << slice.substr(0, 400);
}

TEST(Format, ExplicitPhasesAndVersion1StillRead) {
  World w(build_fat_tree(half_fat_tree(1)));
  std::vector<Host> hosts = all_hosts(w.f);
  Schedule s;
  s.hosts = hosts;
  s.phases = random_permutations(hosts.size(), 3, 7);  // not a shift pattern: written transfer by transfer
  apply_lid_policy(w.f, hosts, s.phases, LidPolicy::spread);
  ScheduleDoc d = doc_of(w, s);
  const std::string text = to_json(d);
  EXPECT_NE(text.find("\"src\""), std::string::npos);
  EXPECT_EQ(from_json(text).schedule.phases, d.schedule.phases);
  // A version-1 file (explicit phases, no groups) reads as before.
  ScheduleDoc a2a = doc_of(w, plan_all_to_all(w.ctx, hosts, kShiftsOnly));
  std::string v1 = to_json(a2a);
  nlohmann::json j = nlohmann::json::parse(v1);
  j["version"] = 1;
  nlohmann::json phases = nlohmann::json::array();
  for (const Phase& ph : a2a.schedule.phases) {
    nlohmann::json p = nlohmann::json::array();
    for (size_t i = 0; i < ph.dst.size(); ++i) p.push_back({{"src", i}, {"dst", ph.dst[i]}, {"dlid", ph.dlid[i]}});
    phases.push_back(p);
  }
  j["phases"] = phases;
  ScheduleDoc old = from_json(j.dump(1));
  EXPECT_EQ(old.schedule.phases, a2a.schedule.phases);
  EXPECT_TRUE(old.schedule.all_to_all());
  EXPECT_EQ(to_json(old), v1);  // re-exported compactly
}

TEST(Format, DamagedCompactPhasesAreRefusedByPlace) {
  World w(build_fat_tree(half_fat_tree(2)));
  ScheduleDoc d = doc_of(w, plan_groups(w.ctx, all_hosts(w.f), ranks(0, 24), ranks(24, 48), kShiftsOnly));
  const nlohmann::json good = nlohmann::json::parse(to_json(d));
  auto fails = [&](const std::function<void(nlohmann::json&)>& damage, const std::string& needle) {
    nlohmann::json j = good;
    damage(j);
    expect_input_error([&] { from_json(j.dump()); }, needle);
  };
  fails([](auto& j) { j["phases"]["offsets"][2] = std::string(24, 'z'); },
        "/phases/offsets/2 (sender 0): 'z' is not a hex digit");
  fails([](auto& j) { j["phases"]["offsets"][2] = "01"; }, "/phases/offsets/2: 2 characters for 24 senders");
  fails([](auto& j) { j["phases"]["offsets"][0] = std::string(24, '7'); }, "offset 7 beyond the 4 LIDs");
  fails([](auto& j) { j["phases"]["shifts"][1] = j["phases"]["shifts"][0]; },
        "/phases/shifts/1: shift 0 appears twice");
  fails([](auto& j) { j["phases"]["shifts"][1] = 24; }, "/phases/shifts/1: 24 is not a shift (0..23)");
  fails([](auto& j) { j["phases"]["offsets"].erase(0); }, "23 offset lines for 24 shifts");
  // No phases at all: nothing to run, and no slice could name a phase (found by the fuzzer).
  fails(
      [](auto& j) {
        j["phases"]["shifts"] = nlohmann::json::array(), j["phases"]["offsets"] = nlohmann::json::array();
      },
      "/phases: no phases (a schedule moves at least one transfer)");
  fails([](auto& j) { j["groups"]["senders"][3] = 0; }, "/groups/senders/3: rank 0 is listed twice");
  fails([](auto& j) { j["groups"]["receivers"][0] = 48; }, "/groups/receivers/0: 48 is not a rank (0..47)");
  fails([](auto& j) { j["phases"]["encoding"] = "zip"; }, "unknown phase encoding");
  // Overlapping groups: a sender's own receiver position is '.', and a digit there is refused.
  ScheduleDoc o = doc_of(w, plan_groups(w.ctx, all_hosts(w.f), ranks(0, 30), ranks(20, 48), kShiftsOnly));
  nlohmann::json j = nlohmann::json::parse(to_json(o));
  for (size_t k = 0; k < j["phases"]["offsets"].size(); ++k) {
    std::string line = j["phases"]["offsets"][k];
    if (size_t dot = line.find('.'); dot != std::string::npos) {
      line[dot] = '0';
      j["phases"]["offsets"][k] = line;
      expect_input_error([&] { from_json(j.dump()); }, "has no transfer (expected '.')");
      break;
    }
  }
}

TEST(ScheduleStore, TwoGroupsStoredCompactly) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ibroute-groups-" + std::to_string(::getpid()) + ".db")).string();
  std::filesystem::remove(path);
  World w(build_fat_tree(half_fat_tree(2)));
  Schedule s = plan_groups(w.ctx, all_hosts(w.f), ranks(10, 20), ranks(0, 48), kShiftsOnly);
  s.name = "g";
  {
    ibroute::store::FabricStore st(path, ibroute::store::Access::create);
    st.save_scan({.source = "offline", .origin = "unit"}, w.f, resolve_routes(w.f));
    st.save_schedule(1, s, 2, 0, 0.1, false);
    Schedule back = st.load_schedule(st.schedule_info("g").id);
    EXPECT_EQ(back.senders, s.senders);
    EXPECT_EQ(back.receivers, s.receivers);
    EXPECT_EQ(back.phases, s.phases);
    // One byte per sender and phase, no destination blob.
    ibroute::store::Stmt q(st.db(), "SELECT sum(length(dst)), sum(length(dlid)), count(shift) FROM schedule_phase");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.i64(0), 0);
    EXPECT_EQ(q.i64(1), static_cast<int64_t>(10 * s.phases.size()));
    EXPECT_EQ(q.i64(2), static_cast<int64_t>(s.phases.size()));
    // A damaged offset is named, not used.
    st.db().exec("UPDATE schedule_phase SET dlid = zeroblob(3) WHERE phase = 4");
    expect_input_error([&] { st.load_schedule(1); },
                       "database damaged: schedule 1, phase 4: offsets of 3 bytes for 10 senders");
    st.db().exec("UPDATE schedule SET senders = zeroblob(2) WHERE id = 1");
    expect_input_error([&] { st.load_schedule(1); }, "senders of 2 bytes");
    // A schedule without phases is refused as a file without them is.
    st.db().exec("DELETE FROM schedule_phase WHERE schedule_id = 1; UPDATE schedule SET phases = 0 WHERE id = 1");
    expect_input_error([&] { st.load_schedule(1); }, "phases 0 (not in 1..");
  }
  std::filesystem::remove(path);
}

TEST(ScheduleStore, ExplicitRowsOfAVersion4DatabaseStillLoad) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ibroute-v4-" + std::to_string(::getpid()) + ".db")).string();
  std::filesystem::remove(path);
  World w(build_fat_tree(half_fat_tree(1)));
  Schedule s;
  s.name = "perm";
  s.hosts = all_hosts(w.f);
  s.phases = random_permutations(s.hosts.size(), 4, 3);  // no shift pattern: stored row by row, as version 4 did
  apply_lid_policy(w.f, s.hosts, s.phases, LidPolicy::random);
  {
    ibroute::store::FabricStore st(path, ibroute::store::Access::create);
    st.save_scan({.source = "offline", .origin = "unit"}, w.f, resolve_routes(w.f));
    st.save_schedule(1, s, 2, 0, 0.1, false);
    st.db().exec(
        "ALTER TABLE schedule DROP COLUMN senders; ALTER TABLE schedule DROP COLUMN receivers;"
        "ALTER TABLE schedule_phase DROP COLUMN shift; UPDATE meta SET value='4' WHERE key='schema_version'");
  }
  ibroute::store::FabricStore st(path, ibroute::store::Access::read_write);
  EXPECT_TRUE(st.migrated());
  Schedule back = st.load_schedule(st.schedule_info("perm").id);
  EXPECT_EQ(back.phases, s.phases);
  EXPECT_TRUE(back.all_to_all());
  std::filesystem::remove(path);
}

// The one reader of host lists: files (comments, blanks, CRLF, line numbers kept) and a,b,c.
TEST(HostLists, LinesAndCommasAsPeopleWriteThem) {
  const auto lines =
      ibroute::schedule::host_lines("# DAQ nodes\r\nnode0001 HCA-1\r\n\n  node0002   # spare\n\t\nnode0003");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].name, "node0001 HCA-1");
  EXPECT_EQ(lines[0].line, 2u);
  EXPECT_EQ(lines[1].name, "node0002");
  EXPECT_EQ(lines[1].line, 4u);
  EXPECT_EQ(lines[2].name, "node0003");
  EXPECT_EQ(lines[2].line, 6u);
  EXPECT_TRUE(ibroute::schedule::host_lines("").empty());
  EXPECT_EQ(ibroute::schedule::host_commas("a, b ,,c HCA-1 ,"), (std::vector<std::string>{"a", "b", "c HCA-1"}));
  EXPECT_TRUE(ibroute::schedule::host_commas(" , ").empty());
}

// Two groups become one rank list in the core: senders first, then the receivers that do not
// send; a host in both groups is one rank; by topology each group is sorted by leaf and port.
TEST(Groups, JoinedIntoOneRankListAndOrderedByTopology) {
  World w(build_fat_tree(half_fat_tree(0)));
  const std::vector<Host> all = all_hosts(w.f);
  const std::vector<Host> snd{all[5], all[1], all[9]}, rcv{all[9], all[2]};
  const Groups g = join_groups(snd, rcv);
  ASSERT_EQ(g.hosts.size(), 4u);
  EXPECT_EQ(g.senders, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(g.receivers, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(g.hosts[2], all[9]);
  const Groups t = topology_ordered(w.f, g);
  auto members = [&](const Groups& x, const std::vector<int32_t>& r) {
    std::vector<Host> out;
    for (int32_t i : r) out.push_back(x.hosts[static_cast<size_t>(i)]);
    return out;
  };
  EXPECT_EQ(members(t, t.senders), topology_order(w.f, snd));
  EXPECT_EQ(members(t, t.receivers), topology_order(w.f, rcv));
  ibroute::test::expect_input_error([&] { join_groups({all[0]}, {all[0]}); }, "at least two hosts");
}

// Hosts as users type them: a hostname for "HOSTNAME HCA-1" (several HCAs: the machine, each rail),
// and Slurm's ranges, padded as written, in files and on the command line.
TEST(HostLists, HostnamesAndSlurmRanges) {
  EXPECT_EQ(host_commas("node[0008-0011],gpu[1,3]x, a"),
            (std::vector<std::string>{"node0008", "node0009", "node0010", "node0011", "gpu1x", "gpu3x", "a"}));
  EXPECT_EQ(host_commas("r[1-2]n[7-8]"), (std::vector<std::string>{"r1n7", "r1n8", "r2n7", "r2n8"}));
  EXPECT_EQ(host_commas("odd[name] HCA-1"), (std::vector<std::string>{"odd[name] HCA-1"}));  // not a range: as written
  const auto lines = host_lines("# rack 3\nnode[098-101]\n");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3].name, "node101");
  EXPECT_EQ(lines[3].line, 2u);
  expect_input_error([] { host_commas("node[5-2]"); }, "'5-2' is no range");
  expect_input_error([] { host_commas("node[1-999999999]"); }, "more than a million");

  ibroute::test::TwoLeaves t;
  t.f.nodes[t.h[0]].desc = "stage99 mlx4_0";
  t.f.nodes[t.h[1]].desc = "r-dcs96 HCA-1";
  t.f.nodes[t.h[2]].desc = "r-dcs96 HCA-2";
  const std::vector<Host> all = all_hosts(t.f);
  const std::vector<Host> picked = pick_hosts(t.f, all, {"stage99", "h4"}, 2);
  EXPECT_EQ(picked[0].node, t.h[0]);
  // A machine's name: all its HCAs, rail 0 first; "machine/K": rail K alone.
  const std::vector<Host> machine = pick_hosts(t.f, all, {"r-dcs96", "h4"}, 2);
  ASSERT_EQ(machine.size(), 3u);
  EXPECT_EQ(machine[0].node, t.h[1]);
  EXPECT_EQ(machine[1].node, t.h[2]);
  EXPECT_EQ(pick_hosts(t.f, all, {"r-dcs96/1", "h4"}, 2)[0].node, t.h[2]);
  expect_input_error([&] { pick_hosts(t.f, all, {"r-dcs96/2", "h4"}, 2); }, "unknown host 'r-dcs96/2'");
  expect_input_error([&] { pick_hosts(t.f, all, {"r-dcs96", "r-dcs96/HCA-2"}, 2); }, "listed twice");
  EXPECT_EQ(pick_hosts(t.f, all, {"r-dcs96/HCA-2", "h4"}, 2)[0].node, t.h[2]);  // one HCA of that host
  std::vector<HostIdentity> ids;
  for (const Host& h : all) ids.push_back({h.name, 0, 0, 0, 0});
  EXPECT_EQ(ids[rank_named(ids, "stage99", "--placement")].name, "stage99 mlx4_0");
}

// A placement file names hosts by their whole node description, up to its 64 bytes (an FQDN and
// " mlx5_0"): resolved by the name as written, not by a quoted form cut for messages (60 bytes).
// Four names of 61 to 64 bytes that agree in their first 60.
TEST(HostLists, PlacementNamesOf61To64BytesResolveWhole) {
  const std::string common = "n" + std::string(52, 'x') + ". mlx5_";  // 60 bytes
  ASSERT_EQ(common.size(), 60u);
  std::vector<HostIdentity> ids;
  for (size_t len = 61; len <= 64; ++len)
    ids.push_back(
        {common + std::string(len - 60, static_cast<char>('0' + len - 60)), 0x1000 + len, 0x1000 + len, 0, 0});
  std::string text;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) text += it->name + "\n";
  const HostNames names(ids);
  const std::vector<ListedHost> lines = host_lines(text);
  ASSERT_EQ(lines.size(), ids.size());
  for (size_t k = 0; k < lines.size(); ++k) {
    const size_t want = ids.size() - 1 - k;
    EXPECT_EQ(lines[k].name, ids[want].name) << k;
    EXPECT_EQ(names.rank(lines[k].name, "p.txt line " + std::to_string(k + 1)), want) << lines[k].name;
  }
}

// Slurm's host lists, as `scontrol show hostnames` expands them back (test_slurm_sim checks that
// with Slurm itself): runs of one prefix and digit count folded, widths kept, the rest listed.
TEST(HostLists, SlurmHostListsFoldRunsOfOneWidth) {
  using ibroute::workflow::compress_hostlist;
  EXPECT_EQ(compress_hostlist({"node1-003", "node1-001", "node1-002", "node1-007"}), "node1-[001-003,007]");
  EXPECT_EQ(compress_hostlist({"n9", "n10", "n11"}), "n9,n[10-11]");
  EXPECT_EQ(compress_hostlist({"login", "c01", "c01"}), "c01,login");
  EXPECT_EQ(compress_hostlist({"a08-p1-dgx-04-c02", "a08-p1-dgx-04-c03", "b01-x"}), "a08-p1-dgx-04-c[02-03],b01-x");
  EXPECT_EQ(compress_hostlist({}), "");
}

// topology.conf and topology.yaml list only the hosts that every switch hosts are cabled to
// reaches by its forwarding tables; a host one leaf drops is left out and said why. A scan
// without tables (an imported topology) cannot tell: every cabled host is listed, and so said.
TEST(HostLists, SlurmListsOnlyHostsEveryLeafRoutesTo) {
  FatTreeSpec t;
  t.leaves = 3, t.hosts_per_leaf = 2, t.uplinks = 2, t.spines = 2;
  Fabric f = build_fat_tree(t);
  route_dmodk(f);
  Fabric bare = f;  // as a topology imported alone has it
  for (Node& n : bare.nodes) n.lft.clear(), n.lft_read = false;
  int32_t host = -1, other_leaf = -1;
  for (size_t i = 0; i < f.nodes.size() && host < 0; ++i)
    if (!f.nodes[i].is_switch()) host = static_cast<int32_t>(i);
  ASSERT_GE(host, 0);
  const Port& hp = f.nodes[static_cast<size_t>(host)].ports[1];
  for (size_t i = 0; i < f.nodes.size() && other_leaf < 0; ++i)
    if (f.nodes[i].desc.rfind("leaf", 0) == 0 && static_cast<int32_t>(i) != hp.peer_node)
      other_leaf = static_cast<int32_t>(i);
  ASSERT_GE(other_leaf, 0);
  using ibroute::workflow::slurm_blocks;
  using ibroute::workflow::slurm_topology;
  const auto whole = slurm_topology(f, analyze_structure(f));
  EXPECT_EQ(whole.hosts, 6u);
  EXPECT_TRUE(whole.left_out.empty());
  f.nodes[static_cast<size_t>(other_leaf)].lft[hp.base_lid] = kNoRoute;
  for (const auto& out : {slurm_topology(f, analyze_structure(f)), slurm_blocks(f, analyze_structure(f))}) {
    EXPECT_EQ(out.hosts, 5u);
    ASSERT_EQ(out.left_out.size(), 1u);
    EXPECT_NE(out.left_out[0].find(f.nodes[static_cast<size_t>(host)].desc + " (port GUID"), std::string::npos)
        << out.left_out[0];
    EXPECT_NE(out.left_out[0].find("no working route to it from 1 of the 3 switches hosts are cabled to (" +
                                   f.nodes[static_cast<size_t>(other_leaf)].desc + ": drop)"),
              std::string::npos)
        << out.left_out[0];
    EXPECT_EQ(out.text.find(f.nodes[static_cast<size_t>(host)].desc), std::string::npos);
  }
  const auto unchecked = slurm_topology(bare, analyze_structure(bare));
  EXPECT_EQ(unchecked.hosts, 6u);
  ASSERT_EQ(unchecked.notes.size(), 1u);
  EXPECT_NE(unchecked.notes[0].find("routes not checked"), std::string::npos);
}

// The one round-robin every command measures (workflow/round_robin): shift k from rank i to i + k
// in the ranks' order, a sample of its shifts the same phases as the whole's, DLIDs by the policy,
// two groups their group phases; and its figures those of exchange_figures over the same load.
TEST(RoundRobin, OneConstructionForEveryCaller) {
  using ibroute::workflow::Exchange;
  World w(ibroute::test::three_level(2, 3, 4, 2, 2));  // LMC 2, names shuffled
  const Exchange x{all_hosts(w.f)};
  const size_t n = x.hosts.size();
  ASSERT_EQ(n, 24u);
  const std::vector<Phase> whole = ibroute::workflow::round_robin_phases(w.f, x);
  ASSERT_EQ(whole.size(), n - 1);
  for (size_t k = 1; k < n; ++k)
    for (size_t i = 0; i < n; ++i) {
      const Host& d = x.hosts[(i + k) % n];
      ASSERT_EQ(whole[k - 1].dst[i], static_cast<int32_t>((i + k) % n));
      ASSERT_EQ(whole[k - 1].dlid[i], w.f.nodes[d.node].ports[d.port].base_lid) << "base LID";
    }
  // The topology order as a permutation of the same ranks, and a sample of its shifts.
  const std::vector<Host> topo = topology_order(w.f, x.hosts);
  std::vector<int32_t> order;
  for (const Host& h : topo)
    order.push_back(static_cast<int32_t>(std::find(x.hosts.begin(), x.hosts.end(), h) - x.hosts.begin()));
  const std::vector<size_t> only{0, 6, 22};
  const std::vector<Phase> ordered = ibroute::workflow::round_robin_phases(w.f, x, {.order = &order});
  const std::vector<Phase> sample = ibroute::workflow::round_robin_phases(w.f, x, {.only = &only, .order = &order});
  ASSERT_EQ(sample.size(), only.size());
  for (size_t j = 0; j < only.size(); ++j) {
    EXPECT_EQ(sample[j], ordered[only[j]]);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(ordered[only[j]].dst[static_cast<size_t>(order[i])], order[(i + only[j] + 1) % n]);
  }
  std::vector<Phase> spread = shift_phases(n);
  apply_lid_policy(w.f, x.hosts, spread, LidPolicy::spread);
  EXPECT_EQ(ibroute::workflow::round_robin_phases(w.f, x, {.lids = LidPolicy::spread}), spread);
  const Exchange groups{x.hosts, ranks(0, 8), ranks(8, 24)};
  std::vector<Phase> g = group_phases(n, groups.senders, groups.receivers);
  apply_lid_policy(w.f, x.hosts, g, LidPolicy::base);
  EXPECT_EQ(ibroute::workflow::round_robin_phases(w.f, groups), g);
  // Its figures: exchange_figures' over the load of the same phases.
  const ibroute::workflow::RoundRobin rr = ibroute::workflow::measure_round_robin(w.ctx, x);
  const LoadReport load = evaluate(w.ctx, x.hosts, whole, false);
  const ibroute::workflow::ExchangeFigures fig = ibroute::workflow::exchange_figures(w.ctx, x, load);
  EXPECT_EQ(rr.load.max_load, load.max_load);
  EXPECT_EQ(rr.figures.efficiency.planned, fig.efficiency.planned);
  EXPECT_EQ(rr.figures.efficiency.value, fig.efficiency.value);
  EXPECT_EQ(rr.figures.least.fabric.time, fig.least.fabric.time);
}
