// The efficiency measure (least possible time / planned time) with known answers, and the planner
// that minimises the planned time: subsets, a leaf short of up-links, two groups, a missing up-link;
// phases of different lengths through the format, the store, the peer library and the runner.
#include "ibroute/schedule/efficiency.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "fabric_store.hpp"
#include "ibroute/fabric/routes.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/peer.hpp"
#include "ibroute/runner/run_plan.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"
#include "ibroute/schedule/validate.hpp"
#include "schedule_docs.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::kShiftsOnly;
using ibroute::test::World;

namespace {

FatTreeSpec two_level(int leaves, int hosts_per_leaf, int uplinks, uint8_t lmc) {
  FatTreeSpec t;
  t.leaves = leaves, t.hosts_per_leaf = hosts_per_leaf, t.uplinks = uplinks, t.spines = uplinks, t.lmc = lmc,
  t.shuffle_names = true;
  return t;
}

int32_t leaf_of(const World& w, const Host& h) { return w.f.nodes[h.node].ports[h.port].peer_node; }

// Per leaf, the first `k` hosts (in name order) of each leaf.
std::vector<Host> per_leaf(const World& w, size_t k) {
  std::map<int32_t, size_t> taken;
  std::vector<Host> out;
  for (const Host& h : all_hosts(w.f))
    if (taken[leaf_of(w, h)]++ < k) out.push_back(h);
  return out;
}

// T of a plan recomputed from its phases' loads on the LFT walk: each phase its worst link load
// (all links of the host rate here), at least 1.
double walked_time(const World& w, const Schedule& s) {
  const LoadReport r = evaluate(w.ctx, s.hosts, s.phases, false);
  double t = 0;
  for (size_t p = 0; p < s.phases.size(); ++p) {
    const bool any = std::any_of(s.phases[p].dst.begin(), s.phases[p].dst.end(), [](int32_t d) { return d >= 0; });
    if (any) t += std::max(1, r.phase_max[p]);
  }
  return t;
}

// Every (sender, receiver) pair once, every rank at most once per phase, every DLID its destination's.
void expect_complete(const World& w, const Schedule& s) {
  EXPECT_EQ(check_pairs(s), "");
  for (const Phase& ph : s.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] >= 0) {
        const Host& d = s.hosts[static_cast<size_t>(ph.dst[i])];
        ASSERT_TRUE(w.f.nodes[d.node].ports[d.port].owns_lid(ph.dlid[i]));
      }
}

Efficiency measured(const World& w, const Schedule& s) {
  const LoadReport r = evaluate(w.ctx, s.hosts, s.phases, false);
  const size_t sends = s.all_to_all() ? s.hosts.size() - 1 : s.receivers.size();
  return efficiency_of(w.ctx, least_times(w.ctx, s.hosts, s.senders, s.receivers), r, sends);
}

// Three levels of 4-port-down switches (64 host places), 61 hosts, LMC 2, d-mod-k.
FatTreeSpec three_level_61() {
  FatTreeSpec t;
  t.levels = 3, t.leaves = 4, t.hosts_per_leaf = 4, t.aggs = t.uplinks = 4, t.pods = 4, t.cores = 16, t.lmc = 2;
  t.shuffle_names = true, t.hosts = 61;
  return t;
}

// A version-3 all-to-all written, read back to the same phases, valid on its fabric, and every
// rank's sends through the peer library N(N-1) in all; returns the text.
std::string round_trip_v3(const World& w, const ScheduleDoc& d) {
  const std::string text = to_json(d);
  EXPECT_NE(text.find("\"version\": 3"), std::string::npos);
  const ScheduleDoc back = from_json(text);
  EXPECT_EQ(back.schedule.phases, d.schedule.phases);
  EXPECT_TRUE(validate(w.ctx, back).ok());
  const auto peer = ibroute::peer::Schedule::parse(text, d.schedule.name + ".json");
  const auto n = static_cast<uint32_t>(d.schedule.hosts.size());
  size_t sends = 0;
  for (uint32_t r = 0; r < n; ++r) sends += peer.sends(r).size();
  EXPECT_EQ(sends, size_t{n} * (n - 1));
  return text;
}

}  // namespace

TEST(Efficiency, ASubsetWithNoMoreHostsPerLeafThanUpLinksRunsAtFullRate) {
  World w(build_fat_tree(two_level(12, 8, 4, 2)));  // half fat-tree: 8 hosts, 4 up-links per leaf
  const std::vector<Host> hosts = per_leaf(w, 4);   // 4 per leaf: 48 hosts
  const LeastTime least = least_time(w.ctx, hosts, {}, {});
  EXPECT_DOUBLE_EQ(least.time, 47);  // each host sends 47 messages; each leaf 4 x 44 over 4 up-links = 44
  EXPECT_NE(least.limited_by.find("'s link: 47 messages sent"), std::string::npos) << least.limited_by;
  const Schedule s = plan_all_to_all(w.ctx, hosts, {});
  expect_complete(w, s);
  EXPECT_EQ(walked_time(w, s), 47);  // every phase at one transfer per link: the bound (2) would take 94
  const Efficiency e = measured(w, s);
  EXPECT_DOUBLE_EQ(e.planned, 47);
  EXPECT_DOUBLE_EQ(e.value, 1);
  EXPECT_NEAR(e.rate_gbps, w.s.host_gbps, 1e-9);
}

TEST(Efficiency, ALeafWithMoreHostsThanUpLinksIsTheCutAndItsExcessWaits) {
  World w(build_fat_tree(two_level(6, 15, 12, 4)));  // 15 hosts and 12 up-links per leaf, 90 hosts
  const std::vector<Host> hosts = all_hosts(w.f);
  const LeastTime least = least_time(w.ctx, hosts, {}, {});
  EXPECT_DOUBLE_EQ(least.time, 15.0 * 75 / 12);  // 93.75 > the 89 messages of each host
  EXPECT_NE(least.limited_by.find("1125 transfers leave over up-links worth 12 host links"), std::string::npos)
      << least.limited_by;
  // Shifts alone: nearly every shift sends more than 12 out of each leaf, so is timed for 2.
  const Schedule shifts = plan_all_to_all(w.ctx, hosts, kShiftsOnly);
  expect_complete(w, shifts);
  EXPECT_GT(walked_time(w, shifts), 150);
  // Packed: every phase at one transfer per link, the leaves' excess in phases of its own.
  PlanStats st;
  const Schedule packed = plan_all_to_all(w.ctx, hosts, {}, &st);
  expect_complete(w, packed);
  EXPECT_NE(st.method.find("packed"), std::string::npos);
  EXPECT_GT(packed.phases.size(), hosts.size() - 1);
  EXPECT_EQ(evaluate(w.ctx, packed.hosts, packed.phases, false).max_load, 1);
  const double t = walked_time(w, packed);
  EXPECT_GE(t, least.time);
  EXPECT_GE(least.time / t, 0.9) << t;
  EXPECT_DOUBLE_EQ(measured(w, packed).planned, t);
}

// Where every leaf holds more hosts than it has up-links, the shifts send from every host at once:
// the leaves' excess waits and is packed after them, where few senders are left to fill the
// up-links. Packing every transfer from no phases keeps each leaf's up-links busy in every phase:
// T (walked from the LFTs) within 5 % of the least time, below the shifts and their packing.
TEST(Efficiency, PackingEveryTransferKeepsTheLeavesUpLinksBusy) {
  World w(build_fat_tree(two_level(6, 15, 12, 4)));  // 15 hosts and 12 up-links per leaf, 90 hosts, LMC 4
  const std::vector<Host> hosts = all_hosts(w.f);
  const double least = least_time(w.ctx, hosts, {}, {}).time;
  // Without compaction, which brings the shifts' packing as far here (below).
  PlanOptions shifts_packed, packed_whole;
  shifts_packed.whole_packing = false, shifts_packed.compaction = false, packed_whole.compaction = false;
  const Schedule before = plan_all_to_all(w.ctx, hosts, shifts_packed);
  PlanStats st;
  const Schedule whole = plan_all_to_all(w.ctx, hosts, packed_whole, &st);
  expect_complete(w, whole);
  EXPECT_EQ(st.method, "free+packed-whole");
  EXPECT_EQ(evaluate(w.ctx, whole.hosts, whole.phases, false).max_load, 1);
  const double t = walked_time(w, whole);
  EXPECT_GE(t, least);
  EXPECT_GE(least / t, 0.95) << t;
  EXPECT_LT(t, walked_time(w, before));
  // With compaction (the default), whatever composition wins is no longer.
  const Schedule compacted = plan_all_to_all(w.ctx, hosts, {});
  expect_complete(w, compacted);
  EXPECT_LE(walked_time(w, compacted), t);
}

TEST(Efficiency, TwoGroupsOneToThreeAndThreeToOne) {
  World w(build_fat_tree(two_level(12, 8, 4, 2)));
  const std::vector<Host> hosts = all_hosts(w.f);  // 96, names shuffled over the leaves
  std::vector<int32_t> few, many;
  for (int32_t r = 0; r < 96; ++r) (r % 4 == 0 ? few : many).push_back(r);  // 24 and 72
  for (bool one_to_three : {true, false}) {
    const auto& snd = one_to_three ? few : many;
    const auto& rcv = one_to_three ? many : few;
    const LeastTime least = least_time(w.ctx, hosts, snd, rcv);
    EXPECT_DOUBLE_EQ(least.time, 72) << least.limited_by;  // the smaller group's hosts each send (receive) 72
    const Schedule s = plan_groups(w.ctx, hosts, snd, rcv, {});
    expect_complete(w, s);
    const double t = walked_time(w, s);
    EXPECT_GE(t, 72);
    EXPECT_GE(72 / t, 0.95) << (one_to_three ? "1:3 " : "3:1 ") << t;
  }
}

TEST(Efficiency, ALeafMissingAnUpLink) {
  FatTreeSpec spec = two_level(4, 6, 3, 2);
  spec.seed = 4;
  Fabric f = build_fat_tree(spec);
  // leaf001 loses its link to spine02: 6 hosts over 2 up-links.
  int leaf = -1, spine = -1;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].desc == "leaf001") leaf = static_cast<int>(i);
    if (f.nodes[i].desc == "spine02") spine = static_cast<int>(i);
  }
  for (int p = 1; p <= f.nodes[leaf].num_ports(); ++p)
    if (Port& port = f.nodes[leaf].ports[p]; port.peer_node == spine) {
      f.nodes[spine].ports[port.peer_port] = Port{.guid = f.nodes[spine].guid};
      port = Port{.guid = f.nodes[leaf].guid};
    }
  route_dmodk(f);
  World w(f);
  const std::vector<Host> hosts = all_hosts(w.f);
  const LeastTime least = least_time(w.ctx, hosts, {}, {});
  EXPECT_DOUBLE_EQ(least.time, 6.0 * 18 / 2);  // 54 against 23 messages per host
  EXPECT_EQ(least.limited_by.rfind("leaf001: 108 transfers leave over up-links worth 2 host links", 0), 0u)
      << least.limited_by;
  const Schedule s = plan_all_to_all(w.ctx, hosts, {});
  expect_complete(w, s);
  const double t = walked_time(w, s);
  EXPECT_GE(t, 54);
  EXPECT_GE(54 / t, 0.9) << t;
}

TEST(Efficiency, TheFullRegularFabricStaysAtTheBound) {
  World w(build_fat_tree(two_level(36, 24, 12, 4)));  // 864 hosts
  PlanStats st;
  const Schedule s = plan_all_to_all(w.ctx, all_hosts(w.f), {}, &st);
  EXPECT_EQ(s.phases.size(), 863u);
  // Over LMC 4's sixteen LIDs the shifts take 1 726 slots; over the base LIDs, d-mod-k's own
  // alignment on the ring of their LID order, 1 702 (the least time: 1 680).
  EXPECT_EQ(st.method.rfind("structure", 0), 0u) << st.method;
  EXPECT_EQ(evaluate(w.ctx, s.hosts, s.phases, false).max_load, 2);
  EXPECT_GE(measured(w, s).value, 0.97);
}

// Three levels, d-mod-k on the hosts' LID order, 61 hosts where 64 places fit: every plain shift
// wraps from the last rank to the first and puts two transfers on one up-link (no DLID of the four
// helps), so every phase takes twice as long. Shifts over a ring of 64 places, 3 left empty: every
// phase at one transfer per link.
TEST(Efficiency, ShiftsOverARingWithEmptyPlacesWhereTheHostCountDoesNotAlign) {
  World w(build_fat_tree(three_level_61()));
  for (bool topology : {false, true}) {
    const std::vector<Host> hosts = topology ? topology_order(w.f, all_hosts(w.f)) : all_hosts(w.f);
    const Schedule shifts = plan_all_to_all(w.ctx, hosts, kShiftsOnly);
    EXPECT_EQ(evaluate(w.ctx, shifts.hosts, shifts.phases, false).max_load, 2);
    PlanStats st;
    const Schedule s = plan_all_to_all(w.ctx, hosts, {}, &st);
    expect_complete(w, s);
    EXPECT_EQ(s.hosts, hosts);  // the ranks stay as given; only the phases follow the ring
    EXPECT_NE(st.method.find("ring"), std::string::npos) << st.method;
    EXPECT_NE(st.composition.find("64 places"), std::string::npos) << st.composition;
    EXPECT_EQ(s.phases.size(), 63u);
    const LoadReport r = evaluate(w.ctx, s.hosts, s.phases, false);
    EXPECT_EQ(r.max_load, 1);  // every phase at its least possible load
    EXPECT_DOUBLE_EQ(walked_time(w, s), 63);
    EXPECT_GE(60.0 / walked_time(w, s), 0.95);
    EXPECT_EQ(format_version_for(s), 3);  // more phases than shifts
  }
}

// Phases of different lengths: the slots of each phase from its load, the rate they allow, and the
// same slots back from the file, the database and the peer library; the runner posts each phase
// at its own offset.
TEST(Efficiency, PhasesOfDifferentLengthsTravelEverywhere) {
  World w(build_fat_tree(two_level(12, 8, 4, 2)));
  const std::vector<Host> hosts = topology_order(w.f, all_hosts(w.f));
  Schedule s = plan_all_to_all(w.ctx, hosts, kShiftsOnly);  // loads 1 and 2: short shifts stay mostly inside a leaf
  const LoadReport r = evaluate(w.ctx, s.hosts, s.phases, false);
  s.name = "slotted";
  time_schedule(w.ctx, r, 1 << 20, 0, s);  // as fast as the links allow: each phase as long as its load needs
  ASSERT_FALSE(s.slots.empty());
  for (size_t p = 1; p < s.slots.size(); ++p)  // slots in proportion to each phase's worst load
    EXPECT_EQ(s.slots[p] * static_cast<uint32_t>(std::max(1, r.phase_max[0])),
              s.slots[0] * static_cast<uint32_t>(std::max(1, r.phase_max[p])))
        << p;
  // Per node: 95 messages over the phases' own lengths at the host link rate.
  EXPECT_NEAR(planned_rate(s), 95.0 / planned_time(r) * w.s.host_gbps * 1e9 / 8, 1);
  EXPECT_NEAR(s.timing.rate, planned_rate(s), 1);
  EXPECT_LT(planned_time(r), 2.0 * 95);

  ScheduleDoc d;
  d.schedule = s;
  d.identities = identify_hosts(w.f, hosts);
  d.fabric = {1, "2026-11-24T00:00:00Z", w.f.max_lmc()};
  const std::string text = to_json(d);
  EXPECT_NE(text.find("\"version\": 3"), std::string::npos);
  EXPECT_NE(text.find("\"phase_slots\""), std::string::npos);
  const ScheduleDoc back = from_json(text);
  EXPECT_EQ(back.schedule.slots, s.slots);
  EXPECT_EQ(back.schedule.phases, s.phases);
  const Validation v = validate(w.ctx, back);
  EXPECT_TRUE(v.ok()) << v.checks.back().detail;
  // The same phases with every slot 1 are too short where a phase carries 2 per link.
  ScheduleDoc squeezed = back;
  std::fill(squeezed.schedule.slots.begin(), squeezed.schedule.slots.end(), 1u);
  const Validation vs = validate(w.ctx, squeezed);
  auto timing = std::find_if(vs.checks.begin(), vs.checks.end(), [](const Check& c) { return c.name == "timing"; });
  ASSERT_NE(timing, vs.checks.end());
  EXPECT_FALSE(timing->ok) << timing->detail << " slot " << squeezed.schedule.timing.slot_s << " max " << r.max_load;
  // A damaged phase_slots is refused by place.
  std::string bad = text;
  bad.replace(bad.find("\"phase_slots\": ["), 16, "\"phase_slots\": [0,");
  ibroute::test::expect_input_error([&] { (void)from_json(bad); }, "/timing/phase_slots");

  // The peer library: offsets are the slots before the phase.
  const std::vector<uint64_t> start = slot_starts(s);
  const auto peer = ibroute::peer::Schedule::parse(text, "slotted.json");
  EXPECT_EQ(peer.format_version(), 3);
  for (const auto& t : peer.sends(5))
    EXPECT_NEAR(t.offset_s, static_cast<double>(start[t.phase]) * s.timing.slot_s, 1e-12);
  SliceWriter slices(d);
  const auto slice = ibroute::peer::Schedule::parse(slices.slice(5), "rank5.json");
  EXPECT_EQ(slice.sends(5).size(), peer.sends(5).size());
  for (size_t k = 0; k < slice.sends(5).size(); ++k)
    EXPECT_DOUBLE_EQ(slice.sends(5)[k].offset_s, peer.sends(5)[k].offset_s);

  // The runner: phase p of round r at (r x total slots + start(p)) slots.
  const auto channels = ibroute::runner::channels_of(s);
  ibroute::runner::SendPlan plan(s, channels, 5, 1000);
  EXPECT_EQ(plan.slots(), start.back());
  for (uint64_t k = 0; k < 2 * plan.per_round(); ++k) {
    const auto ts = plan.at(k);
    const uint64_t phase = ts.seq % s.phases.size(), round = ts.seq / s.phases.size();
    EXPECT_EQ(ts.at_ns, static_cast<int64_t>((round * start.back() + start[phase]) * 1000)) << k;
  }

  // The database keeps the slots (and a schedule without them reads back without).
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ibroute-slots-" + std::to_string(::getpid()) + ".db")).string();
  std::filesystem::remove(path);
  {
    ibroute::store::FabricStore st(path, ibroute::store::Access::create);
    st.save_scan({.source = "offline", .origin = "unit"}, w.f, resolve_routes(w.f));
    st.save_schedule(1, s, 2, 0, 0.1, false);
    Schedule plain = s;
    plain.name = "plain", plain.slots.clear();
    st.save_schedule(1, plain, 2, 0, 0.1, false);
    EXPECT_EQ(st.load_schedule(st.schedule_info("slotted").id).slots, s.slots);
    EXPECT_TRUE(st.load_schedule(st.schedule_info("plain").id).slots.empty());
    st.db().exec("UPDATE schedule_phase SET slots = 0 WHERE phase = 3 AND slots IS NOT NULL");
    ibroute::test::expect_input_error([&] { (void)st.load_schedule(st.schedule_info("slotted").id); }, "phase 3");
  }
  std::filesystem::remove(path);
}

TEST(Efficiency, APackedScheduleRoundTripsAsVersion3) {
  World w(build_fat_tree(two_level(6, 15, 12, 4)));
  const ScheduleDoc d = ibroute::test::doc_of(w, plan_all_to_all(w.ctx, all_hosts(w.f), {}), "packed");
  ASSERT_GT(d.schedule.phases.size(), 89u);
  (void)round_trip_v3(w, d);
}

// Shifts over a ring travel compactly: encoding "ring" (its places and size, a shift and an offset
// line per phase), version 3, back to the same phases; the peer library reads it; a damaged ring
// is refused naming the place.
TEST(Efficiency, ARingScheduleRoundTripsCompactly) {
  World w(build_fat_tree(three_level_61()));
  const ScheduleDoc d = ibroute::test::doc_of(w, plan_all_to_all(w.ctx, all_hosts(w.f), {}), "ring");
  ASSERT_EQ(d.schedule.phases.size(), 63u);
  const std::string text = round_trip_v3(w, d);
  EXPECT_NE(text.find("\"encoding\": \"ring\""), std::string::npos);
  EXPECT_LT(text.size(), 20000u);  // the list encoding takes ~140 KB

  auto damaged = [&](const std::function<void(nlohmann::json&)>& change, const std::string& where) {
    nlohmann::json j = nlohmann::json::parse(text);
    change(j);
    ibroute::test::expect_input_error([&] { (void)from_json(j.dump()); }, where);
  };
  damaged([](nlohmann::json& j) { j["phases"]["places"][5] = j["phases"]["places"][4]; }, "/phases/places/5: place");
  damaged([](nlohmann::json& j) { j["phases"]["size"] = 100000; }, "/phases/size");
  damaged([](nlohmann::json& j) { j["phases"]["places"][0] = 64; }, "/phases/places/0");
  damaged([](nlohmann::json& j) { j["phases"]["shifts"][0] = 0; }, "/phases/shifts/0");
  damaged([](nlohmann::json& j) { j["phases"]["places"].erase(0); }, "/phases/places: 60 places for 61 ranks");
  damaged([](nlohmann::json& j) { j["version"] = 2; }, "/phases/encoding");
}

namespace {

using ibroute::test::TwoLeaves;

// An up-link no route uses carries nothing: the tables' least time counts only the used ones, the
// fabric's all of them — the routing is the limit, and the efficiency says which is which.
TEST(Efficiency, IdleUpLinksRaiseTheTablesLeastTime) {
  TwoLeaves t;
  for (uint16_t lid = 12; lid <= 15; ++lid)
    ibroute::test::route(t.f, t.l1, lid, 3);  // both offsets over S1: L1[4] idle
  World w(std::move(t.f));
  const std::vector<Host> hosts = all_hosts(w.f);
  const LeastTimes least = least_times(w.ctx, hosts, {}, {});
  EXPECT_DOUBLE_EQ(least.fabric.time, 3);  // each host's 3 messages; L1's 4 leaving transfers over 2 up-links = 2
  EXPECT_DOUBLE_EQ(least.tables.time, 4);  // ... over the 1 up-link the routes use = 4
  EXPECT_EQ(least.tables.limited_by.rfind("L1", 0), 0u) << least.tables.limited_by;  // L1[3], the one up-link used
  std::vector<Phase> rr = shift_phases(hosts.size());
  apply_lid_policy(w.f, hosts, rr, LidPolicy::spread);
  const Efficiency e = efficiency_of(w.ctx, least, evaluate(w.ctx, hosts, rr, false), hosts.size() - 1);
  EXPECT_TRUE(e.routing_limits());
  EXPECT_NEAR(e.value, 3 / e.planned, 1e-12);
  EXPECT_NEAR(e.value_tables, 4 / e.planned, 1e-12);
  EXPECT_LT(e.value, e.value_tables);
}

// A transfer whose route ends nowhere is lost: it loads the links up to where it ends, and an
// exchange that loses transfers has no efficiency; its rate counts only what arrives.
TEST(Efficiency, BrokenTransfersAreCountedNotDropped) {
  TwoLeaves t;
  ibroute::test::route(t.f, t.l1, 12, kNoRoute);  // h3's base LID from L1: dropped at L1
  World w(std::move(t.f));
  const std::vector<Host> hosts = all_hosts(w.f);
  std::vector<Phase> rr = shift_phases(hosts.size());
  apply_lid_policy(w.f, hosts, rr, LidPolicy::base);
  const LoadReport load = evaluate(w.ctx, hosts, rr, false);
  EXPECT_EQ(load.broken, 2u);  // h1 -> h3 and h2 -> h3
  EXPECT_EQ(load.transfers, 12u);
  const int32_t h1_link = w.links.id(t.h[0], 1);
  EXPECT_EQ(load.link_total[static_cast<size_t>(h1_link)], 3u);  // all three of h1's transfers left its link
  const Efficiency e = efficiency_of(w.ctx, least_times(w.ctx, hosts, {}, {}), load, hosts.size() - 1);
  EXPECT_EQ(e.broken, 2u);
  EXPECT_EQ(e.value, 0);
  EXPECT_NEAR(e.rate_gbps, 10.0 / 12 * 3 / e.planned * w.s.host_gbps, 1e-9);
}

// The quick look at a baseline: given up only where the phases really take longer than the limit
// (or lose a transfer), whatever the limit; where it is not given up, its worst is the evaluation's.
TEST(Efficiency, ALookGivenUpOnlyWherePhasesTakeLongerThanTheLimit) {
  for (uint8_t lmc : {0, 2}) {
    World w(build_fat_tree(two_level(8, 6, 3, lmc)));
    const std::vector<Host> hosts = all_hosts(w.f);  // name order: shuffled, so some shifts congest
    std::vector<Phase> rr = shift_phases(hosts.size());
    apply_lid_policy(w.f, hosts, rr, LidPolicy::base);
    const LoadReport full = evaluate(w.ctx, hosts, rr, false);
    const double t = planned_time(full);
    ASSERT_GT(t, static_cast<double>(rr.size()));  // some phase takes two message-times
    for (double limit : {0.0, static_cast<double>(rr.size()) - 1, t - 1, t - 0.5, t, t + 0.5, 10 * t}) {
      const LongerThan look = takes_longer_than(w.ctx, hosts, rr, limit);
      EXPECT_EQ(look.longer, t > limit) << "limit " << limit << ", lmc " << int(lmc);
      EXPECT_LE(look.worst, full.max_load);
      if (!look.longer) {
        EXPECT_EQ(look.worst, full.max_load);
      }
    }
  }
  TwoLeaves t;
  ibroute::test::route(t.f, t.l1, 12, kNoRoute);  // a lost transfer: longer than any limit
  World w(std::move(t.f));
  const std::vector<Host> hosts = all_hosts(w.f);
  std::vector<Phase> rr = shift_phases(hosts.size());
  apply_lid_policy(w.f, hosts, rr, LidPolicy::base);
  EXPECT_TRUE(takes_longer_than(w.ctx, hosts, rr, 1e9).longer);
}

}  // namespace

// Tables such as OpenSM's minhop leaves a three-level tree (3 456 hosts: 81 up-links of a pod in
// use, 39 down-links) bound what enters a pod by the down-links its routes use. Here a pod's routes
// leave over 3 up-links per agg but enter over 1 down-link per agg. Recomputed here from the LFTs.
TEST(Efficiency, WhatEntersAPodIsBoundByTheDownLinksItsRoutesUse) {
  const ibroute::test::PodsEnteringOverFewLinks t;
  const World& w = t.w;
  const std::vector<Host>& hosts = t.hosts;
  const std::vector<int>& pod = t.pod;
  std::map<int, std::set<std::pair<int, int>>> down, up;  // per pod: the links used into it, out of it
  std::map<int, size_t> in_pod;
  for (const Host& h : hosts) ++in_pod[pod[static_cast<size_t>(leaf_of(w, h))]];
  for (const Host& d : hosts) {
    const Port& port = w.f.nodes[d.node].ports[d.port];
    const int to = pod[static_cast<size_t>(port.peer_node)];
    for (size_t sw = 0; sw < w.f.nodes.size(); ++sw) {
      if (pod[sw] < 0 || pod[sw] == to || w.f.nodes[sw].desc.rfind("leaf", 0) != 0) continue;
      for (uint16_t o = 0; o < port.lid_count(); ++o)
        for (auto [node, out] :
             ibroute::test::lft_path(w.f, static_cast<int>(sw), static_cast<uint16_t>(port.base_lid + o))) {
          const int peer = w.f.nodes[static_cast<size_t>(node)].ports[out].peer_node;
          if (pod[static_cast<size_t>(node)] < 0 && pod[static_cast<size_t>(peer)] == to) down[to].insert({node, out});
          if (pod[static_cast<size_t>(node)] == pod[sw] && pod[static_cast<size_t>(peer)] < 0)
            up[pod[sw]].insert({node, out});
        }
    }
  }
  double in_bound = 0, out_bound = 0;
  for (auto [p, n] : in_pod) {
    const double transfers = static_cast<double>(n) * static_cast<double>(hosts.size() - n);
    in_bound = std::max(in_bound, transfers / static_cast<double>(down[p].size()));
    out_bound = std::max(out_bound, transfers / static_cast<double>(up[p].size()));
  }
  const LeastTimes least = least_times(w.ctx, hosts, {}, {});
  std::cout << "pods in over used down-links " << in_bound << ", out over used up-links " << out_bound << "; tables "
            << least.tables.time << " (" << least.tables.limited_by << ")\n";
  ASSERT_GT(in_bound, out_bound * 1.2) << "minhop leaves fewer down-links than up-links in use";
  EXPECT_GE(least.tables.time, in_bound - 1e-9);
  EXPECT_NE(least.tables.limited_by.find("enter over the down-links the routes use"), std::string::npos)
      << least.tables.limited_by;
}

// Over the tables, transfers whose every LID leaves one switch by one of two links load those two
// between them, where the cut over all the links their routes use spreads them over four: a leaf
// of 4 up-links sends to two leaves by up-ports a, b (base LID a, the other b) and to the third
// by c, d. Its 4 hosts send 4 x 8 transfers over {a, b}: 16 each, where the cut gives 48 / 4 = 12.
TEST(Efficiency, TransfersThatLeaveASwitchByTwoLinksAtEveryLidAreBoundByThoseTwo) {
  Fabric f = build_fat_tree(two_level(4, 4, 4, 1));
  const std::vector<Host> all = all_hosts(f);
  const int32_t from = f.nodes[all[0].node].ports[all[0].port].peer_node;
  std::vector<uint8_t> up;
  for (int p = 1; p <= f.nodes[from].num_ports(); ++p)
    if (const int32_t peer = f.nodes[from].ports[p].peer_node; peer >= 0 && f.nodes[peer].is_switch())
      up.push_back(static_cast<uint8_t>(p));
  ASSERT_EQ(up.size(), 4u);
  std::vector<int32_t> others;  // the other leaves, in the order first met
  for (const Host& h : all)
    if (const int32_t leaf = f.nodes[h.node].ports[h.port].peer_node;
        leaf != from && std::find(others.begin(), others.end(), leaf) == others.end())
      others.push_back(leaf);
  ASSERT_EQ(others.size(), 3u);
  size_t mine = 0, over_ab = 0;
  for (const Host& h : all) {
    const Port& p = f.nodes[h.node].ports[h.port];
    if (p.peer_node == from) {
      ++mine;
      continue;
    }
    const bool third = p.peer_node == others[2];
    over_ab += !third;
    for (uint16_t o = 0; o < p.lid_count(); ++o) f.nodes[from].lft[p.base_lid + o] = up[(third ? 2 : 0) + o];
  }
  const World w(std::move(f));
  const double expected = static_cast<double>(mine * over_ab) / 2;  // host links of the host rate
  const LeastTimes least = least_times(w.ctx, all_hosts(w.f), {}, {});
  EXPECT_GE(least.tables.time, expected - 1e-9) << least.tables.limited_by;
  EXPECT_NE(least.tables.limited_by.find("leave it by 2 links"), std::string::npos) << least.tables.limited_by;
  // And no plan beats it: the planner's own time, walked, is at least that.
  const Schedule s = plan_all_to_all(w.ctx, all_hosts(w.f), {});
  EXPECT_GE(walked_time(w, s), expected - 1e-9);
}
