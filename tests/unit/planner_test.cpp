#include "ibroute/schedule/planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <random>

#include "fabrics.hpp"
#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/fabric/tree_routing.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/lower_bound.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/validate.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::eighteen_per_eight;
using ibroute::test::expect_input_error;
using ibroute::test::kShiftsOnly;
using ibroute::test::random_hosts;
using ibroute::test::three_level;
using ibroute::test::World;

namespace {
// Every schedule the planner makes: a complete all-to-all, permutations, DLIDs of the
// destinations, and (when `free_of_congestion`) within the bound on the fabric's routes.
void expect_valid(const World& w, const Schedule& s, bool free_of_congestion) {
  EXPECT_EQ(check_all_to_all(s.hosts.size(), s.phases), "");
  for (const Phase& ph : s.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;  // waits in this phase (packed into another)
      const Host& d = s.hosts[ph.dst[i]];
      ASSERT_TRUE(w.f.nodes[d.node].ports[d.port].owns_lid(ph.dlid[i])) << "rank " << i;
    }
  LoadReport r = evaluate(w.ctx, s.hosts, s.phases, false);
  EXPECT_EQ(r.broken, 0u);
  if (free_of_congestion) {
    EXPECT_EQ(r.congested, 0u);
    EXPECT_LE(r.max_load, w.s.transfer_bound);
    EXPECT_TRUE(r.over.empty());
  }
}

// T of round-robin in the leaves' GUID order with base LIDs: the baseline a user would pick.
double round_robin_in_topology_order(const World& w, std::vector<Host> hosts) {
  std::vector<Host> by_leaf = std::move(hosts);
  auto leaf_key = [&](const Host& h) {
    const Port& p = w.f.nodes[h.node].ports[h.port];
    return std::pair(w.f.nodes[p.peer_node].guid, p.peer_port);
  };
  std::sort(by_leaf.begin(), by_leaf.end(), [&](const Host& a, const Host& b) { return leaf_key(a) < leaf_key(b); });
  std::vector<Phase> rr = shift_phases(by_leaf.size());
  apply_lid_policy(w.f, by_leaf, rr, LidPolicy::base);
  return planned_time(evaluate(w.ctx, by_leaf, rr, false));
}

FatTreeSpec hft96(uint8_t lmc, bool shuffle) {
  FatTreeSpec t;
  t.leaves = 12, t.hosts_per_leaf = 8, t.uplinks = 4, t.spines = 4, t.lmc = lmc, t.shuffle_names = shuffle;
  return t;
}
}  // namespace

TEST(Structure, RecognisesHalfFatTree) {
  World w(build_fat_tree(hft96(2, true)));
  EXPECT_EQ(w.s.levels, 2);
  EXPECT_TRUE(w.s.two_level);
  EXPECT_EQ(w.s.leaves.size(), 12u);
  EXPECT_EQ(w.s.top.size(), 4u);
  EXPECT_EQ(w.s.hosts.size(), 96u);
  EXPECT_EQ(w.s.transfer_bound, 2);
  EXPECT_DOUBLE_EQ(w.s.oversubscription, 2.0);
  EXPECT_TRUE(w.s.missing.empty());
  EXPECT_TRUE(w.s.slow.empty());
}

TEST(Planner, HalfFatTreeNameOrderIsCongestionFree) {
  World w(build_fat_tree(hft96(2, true)));
  std::vector<Host> hosts = all_hosts(w.f);
  // Round-robin in host-name order with base LIDs congests ...
  std::vector<Phase> rr = shift_phases(hosts.size());
  apply_lid_policy(w.f, hosts, rr, LidPolicy::base);
  LoadReport naive = evaluate(w.ctx, hosts, rr, false);
  EXPECT_GT(naive.max_load, 2);
  EXPECT_GT(naive.congested, 0u);
  // ... the plan does not, with either method.
  for (Method m : {Method::structure, Method::free, Method::automatic}) {
    PlanStats st;
    Schedule s = plan_all_to_all(w.ctx, hosts, {.method = m}, &st);
    SCOPED_TRACE(to_string(m));
    expect_valid(w, s, true);
    EXPECT_EQ(st.phases_over, 0u);
  }
}

TEST(Planner, OneLeafAndTwoLeaves) {
  FatTreeSpec one;
  one.leaves = 1, one.hosts_per_leaf = 6, one.uplinks = 1, one.spines = 1, one.lmc = 1;
  World w1(build_fat_tree(one));
  Schedule s1 = plan_all_to_all(w1.ctx, all_hosts(w1.f), {});
  EXPECT_EQ(s1.phases.size(), 5u);
  expect_valid(w1, s1, true);

  ibroute::test::TwoLeaves t;  // 2 hosts per leaf, 2 spines, LMC 1: bound 1
  World w2(t.f);
  EXPECT_EQ(w2.s.transfer_bound, 1);
  Schedule s2 = plan_all_to_all(w2.ctx, all_hosts(w2.f), {});
  expect_valid(w2, s2, true);
}

TEST(Planner, RandomSubsetStillMeetsTheBound) {
  World w(build_fat_tree(hft96(2, true)));
  std::vector<Host> all = all_hosts(w.f);
  std::vector<Host> subset;
  for (size_t i = 0; i < all.size(); ++i)
    if (i % 10 != 3) subset.push_back(all[i]);  // 90 %
  Schedule s = plan_all_to_all(w.ctx, subset, {});
  expect_valid(w, s, true);
}

TEST(Planner, LmcZeroCannotChooseAndReportsTheWorstLink) {
  World w(build_fat_tree(hft96(0, true)));
  PlanStats st;
  Schedule s = plan_all_to_all(w.ctx, all_hosts(w.f), ibroute::test::kShiftsOnly, &st);
  expect_valid(w, s, false);
  LoadReport r = evaluate(w.ctx, s.hosts, s.phases, false);
  EXPECT_GT(st.phases_over, 0u);
  EXPECT_EQ(st.worst_overflow, r.max_load - 2);
  EXPECT_FALSE(r.over.empty());
  // With no DLID to choose, the phases themselves must avoid the overload: the shifts in topology
  // order (a ring over the same ranks: 182 message-times) beat the busy leaves' excess packed into
  // phases of one transfer per link (186); the least possible is 176. Recomputed from the LFT walk.
  Schedule planned = plan_all_to_all(w.ctx, all_hosts(w.f), {}, &st);
  expect_valid(w, planned, true);
  EXPECT_EQ(st.phases_over, 0u);
  EXPECT_NE(st.method.find("ring"), std::string::npos) << st.method;
  const LoadReport lr = evaluate(w.ctx, planned.hosts, planned.phases, false);
  double t = 0;
  for (int load : lr.phase_max) t += std::max(1, load);
  EXPECT_LE(t, 182);
  EXPECT_GE(t, 176);
}

TEST(Planner, Timing864) {
  FatTreeSpec t;
  t.leaves = 36, t.hosts_per_leaf = 24, t.uplinks = 12, t.spines = 12, t.lmc = 4, t.shuffle_names = true;
  World w(build_fat_tree(t));
  auto t0 = std::chrono::steady_clock::now();
  PlanStats st;
  Schedule s = plan_all_to_all(w.ctx, all_hosts(w.f), {}, &st);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "864 hosts planned in " << secs << " s by " << st.method << ", phases over " << st.phases_over << "\n";
  expect_valid(w, s, true);
}

TEST(PlannerAtScale, ThreeLevelsInNameOrderTheSamePlanOnAnyNumberOfThreadsAndAsClaimed) {
  // 4 pods x 8 leaves x 16 hosts, 8 aggregation switches per pod, 16 cores, LMC 2, names shuffled:
  // the option table is built in parts (one per thread) and each phase works on its own copy of
  // it; the plan must not depend on how the work was cut, and what the planner claims must hold
  // when the routes are walked again from the LFTs.
  World w(three_level(4, 8, 16, 8, 16));
  ASSERT_EQ(w.s.levels, 3);
  std::vector<Host> hosts = all_hosts(w.f);
  ASSERT_GE(hosts.size(), 512u) << "large enough for the table to be built in two parts";
  PlanOptions one, two;
  one.threads = 1, two.threads = 2;
  PlanStats s1, s2;
  Schedule a = plan_all_to_all(w.ctx, hosts, one, &s1), b = plan_all_to_all(w.ctx, hosts, two, &s2);
  ASSERT_EQ(a.phases.size(), b.phases.size());
  for (size_t p = 0; p < a.phases.size(); ++p) {
    ASSERT_EQ(a.phases[p].dst, b.phases[p].dst) << "phase " << p;
    ASSERT_EQ(a.phases[p].dlid, b.phases[p].dlid) << "phase " << p;
  }
  EXPECT_EQ(s1.worst_overflow, s2.worst_overflow);
  expect_valid(w, a, false);
  LoadReport r = evaluate(w.ctx, a.hosts, a.phases, false);
  EXPECT_EQ(std::max(0, r.max_load - w.s.transfer_bound), s1.worst_overflow)
      << "the planner's own count agrees with the LFT walk";
  EXPECT_FALSE(s1.greedy_start) << "d-mod-k tables: the routing's own choice fits, it is not probed away";
}

TEST(Planner, OnMinhopTablesThePhasesStartFromTheGreedyTheSameOnAnyNumberOfThreads) {
  // The same 512-host tree under minhop-like tables (each switch gives each LID its least-used
  // shortest port): the routing's own choice congests every phase, the probe of the first phases
  // sees the greedy start win each time, and the rest start from the greedy alone. Decided before
  // the threads start: the plan must not depend on them, and it must still beat round-robin.
  Fabric f = three_level(4, 8, 16, 8, 16);
  route_minhop(f);
  World w(std::move(f));
  const std::vector<Host> hosts = all_hosts(w.f);
  ASSERT_GE(hosts.size(), 512u);
  PlanOptions one, two;
  one.threads = 1, two.threads = 2;
  one.packing = two.packing = false;  // the shifts alone: every phase through the solver
  PlanStats s1, s2;
  const Schedule a = plan_all_to_all(w.ctx, hosts, one, &s1), b = plan_all_to_all(w.ctx, hosts, two, &s2);
  EXPECT_TRUE(s1.greedy_start);
  EXPECT_TRUE(s2.greedy_start);
  ASSERT_EQ(a.phases.size(), b.phases.size());
  for (size_t p = 0; p < a.phases.size(); ++p) {
    ASSERT_EQ(a.phases[p].dst, b.phases[p].dst) << "phase " << p;
    ASSERT_EQ(a.phases[p].dlid, b.phases[p].dlid) << "phase " << p;
  }
  expect_valid(w, a, false);
  // Recomputed from the LFTs: the planner's overflow, and its time against round-robin with base LIDs.
  const LoadReport r = evaluate(w.ctx, a.hosts, a.phases, false);
  EXPECT_EQ(std::max(0, r.max_load - w.s.transfer_bound), s1.worst_overflow);
  std::vector<Phase> rr = shift_phases(hosts.size());
  apply_lid_policy(w.f, hosts, rr, LidPolicy::base);
  const LoadReport base = evaluate(w.ctx, hosts, rr, false);
  EXPECT_LT(planned_time(r), planned_time(base) * 0.8)
      << "the plan " << planned_time(r) << ", round-robin " << planned_time(base);
}

TEST(Planner, WhereTheRepairLowersNoProbedPhaseItIsGivenUpAndNothingIsLost) {
  // Minhop-like tables on the 512-host three-level tree force each phase's worst link: the repair
  // lowers hardly any of the probed phases and is skipped for the rest. The same plan with the repair
  // searching every phase is hardly shorter (recomputed from the LFTs: 7 226 slots against 7 234,
  // a few phases the probe did not see); on d-mod-k tables, where the routing's choice fits every
  // phase, nothing is skipped.
  Fabric f = three_level(4, 8, 16, 8, 16);
  route_minhop(f);
  World w(std::move(f));
  const std::vector<Host> hosts = all_hosts(w.f);
  PlanOptions skip, full;
  skip.packing = full.packing = false;
  full.repair_probe = false;
  PlanStats s1, s2;
  const Schedule a = plan_all_to_all(w.ctx, hosts, skip, &s1), b = plan_all_to_all(w.ctx, hosts, full, &s2);
  EXPECT_TRUE(s1.repair_skipped);
  EXPECT_FALSE(s2.repair_skipped);
  expect_valid(w, a, false);
  const double skipped = planned_time(evaluate(w.ctx, a.hosts, a.phases, false)),
               searched = planned_time(evaluate(w.ctx, b.hosts, b.phases, false));
  EXPECT_LE(skipped, searched * 1.005) << "the repair would have shortened the plan";
  World d(three_level(4, 8, 16, 8, 16));
  PlanStats s3;
  plan_all_to_all(d.ctx, all_hosts(d.f), skip, &s3);
  EXPECT_FALSE(s3.repair_skipped);
}

namespace {
// Tables as poor as OpenSM's minhop leaves a three-level tree at its worst: every switch sends all
// its up-going traffic over its first up-link (a leaf's to one agg, an agg's to one core).
void concentrate_up_routes(Fabric& f) {
  auto level = [&](int node) {
    const std::string& d = f.nodes[node].desc;
    return d.rfind("core", 0) == 0 ? 2 : d.rfind("agg", 0) == 0 ? 1 : 0;
  };
  for (int sw = 0; sw < static_cast<int>(f.nodes.size()); ++sw) {
    Node& n = f.nodes[sw];
    if (n.type != NodeType::sw) continue;
    std::vector<char> up(n.ports.size(), 0);
    int first = -1;
    for (int p = 1; p < static_cast<int>(n.ports.size()); ++p) {
      const Port& port = n.ports[p];
      if (port.peer_node >= 0 && f.nodes[port.peer_node].type == NodeType::sw && level(port.peer_node) > level(sw)) {
        up[p] = 1;
        if (first < 0) first = p;
      }
    }
    if (first < 0) continue;
    for (uint8_t& out : n.lft)
      if (out < up.size() && up[out]) out = static_cast<uint8_t>(first);
  }
}
}  // namespace

TEST(Planner, NoPackingWhereTheTablesAloneKeepThePlanNearItsShifts) {
  // Every switch's up-going traffic over one up-link: the tables force a time near what the
  // shifts take, and no composition can do better than the tables allow. Packing would only spend
  // its budget (30 s on a 1 350-host director under updn) to find that out.
  Fabric f = three_level(2, 4, 8, 4, 8);
  concentrate_up_routes(f);
  World w(std::move(f));
  const std::vector<Host> hosts = all_hosts(w.f);
  PlanStats st;
  const Schedule s = plan_all_to_all(w.ctx, hosts, {}, &st);
  EXPECT_EQ(st.packings, 0u);
  expect_valid(w, s, false);
  // Recomputed apart from the planner: the plan's time from the LFTs, within 10 % of the tables' least.
  const LeastTimes least = least_times(w.ctx, hosts, {}, {});
  ASSERT_GT(least.tables.time, 2 * least.fabric.time) << "the tables, not the fabric, bound this exchange";
  EXPECT_LE(planned_time(evaluate(w.ctx, hosts, s.phases, false)), 1.1 * least.tables.time);
}

TEST(Planner, PackingOnPoorTablesStaysWithinAWorkBudgetNotAClock) {
  // Minhop-like tables: the shifts are far from what the tables allow, and packing is tried.
  Fabric f = three_level(2, 4, 8, 4, 8);
  route_minhop(f);
  World w(std::move(f));
  const std::vector<Host> hosts = all_hosts(w.f);
  PlanStats st;
  const Schedule s = plan_all_to_all(w.ctx, hosts, {}, &st);
  ASSERT_GE(st.packings, 1u) << "the shifts are far from the least time: packing is tried";
  EXPECT_LE(st.packing_work, st.packing_budget);
  expect_valid(w, s, false);
  // A budget it cannot keep: every packing stops at it (or at its projection), and the plan is still
  // complete and valid -- and the same whether one or two threads made it.
  PlanOptions tight;
  tight.packing_work_base = 0, tight.packing_work_per_transfer = 2;
  PlanStats a, b;
  tight.threads = 1;
  const Schedule one = plan_all_to_all(w.ctx, hosts, tight, &a);
  tight.threads = 2;
  const Schedule two = plan_all_to_all(w.ctx, hosts, tight, &b);
  ASSERT_GE(a.packings, 1u);
  EXPECT_EQ(a.packings_over_budget, a.packings);
  EXPECT_EQ(a.packing_work, b.packing_work);
  expect_valid(w, one, false);
  ASSERT_EQ(one.phases.size(), two.phases.size());
  for (size_t p = 0; p < one.phases.size(); ++p) EXPECT_EQ(one.phases[p].dst, two.phases[p].dst) << p;
  // The budget's cap holds whatever the transfers waiting would allow.
  PlanOptions capped;
  capped.packing_work_max = 1000;
  PlanStats c;
  expect_valid(w, plan_all_to_all(w.ctx, hosts, capped, &c), false);
  ASSERT_GE(c.packings, 1u);
  EXPECT_EQ(c.packings_over_budget, c.packings);
  EXPECT_EQ(c.packing_budget, 1000 * c.packings);
}

namespace {
// Tables as a subnet manager's sweep computes them for the fabric as it is: `ibroute routing`'s
// hubs, destinations numbered in tree order.
void route_as_tree(Fabric& f) {
  const FabricStructure s = analyze_structure(f);
  std::vector<CaPort> refs;
  for (const Host& h : all_hosts(f)) refs.push_back({h.node, h.port});
  const TreeRouting r = route_tree(f, s, tree_order(f, s, refs), TreeStyle::hubs);
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!r.lft[i].empty()) f.nodes[i].lft = r.lft[i];
}
}  // namespace

TEST(PlannerAtScale, AfterALeafLostAnUpLinkTheShiftsFollowTheRoutingsOrderWhateverTheNumbering) {
  // 700 hosts on 6 pods x 12 leaves of up to 12 hosts, 12 aggregation switches per pod, 144 cores
  // (no blocking): 700 is no multiple of 12, so the plain shifts' wrap collides in every phase.
  // leaf001 has lost its cable to agg01-01 and the tables are computed again: the routing numbers
  // destinations in tree order, where leaf001 now stands last in its pod, no longer in the leaves'
  // GUID order. Over a ring in the routing's order, padded to 708 places, the shifts nearly fit
  // once the LIDs are chosen; the names are shuffled, so this must not depend on how the hosts
  // happen to be numbered.
  FatTreeSpec t;
  t.levels = 3, t.pods = 6, t.leaves = 12, t.hosts_per_leaf = 12, t.aggs = 12, t.cores = 144, t.hosts = 700, t.lmc = 2,
  t.shuffle_names = true;
  Fabric f = build_fat_tree(t);
  ibroute::test::unplug(f, "leaf001", "agg01-01");
  route_as_tree(f);
  World w(std::move(f));
  const std::vector<Host> hosts = all_hosts(w.f);
  ASSERT_EQ(hosts.size(), 700u);
  PlanStats st;
  const Schedule s = plan_all_to_all(w.ctx, hosts, {}, &st);
  EXPECT_NE(st.composition.find("shifts over tree order, 708 places"), std::string::npos) << st.composition;
  expect_valid(w, s, false);
  // Recomputed from the LFTs, apart from the planner: against the fabric's least time, and against
  // round-robin in the leaves' GUID order with base LIDs (about twice as long).
  const double planned = planned_time(evaluate(w.ctx, hosts, s.phases, false));
  EXPECT_GE(least_times(w.ctx, hosts, {}, {}).fabric.time / planned, 0.95) << planned;
  EXPECT_GT(round_robin_in_topology_order(w, hosts), 1.6 * planned);
}

TEST(Planner, TheWalkOverThePlateauShortensPoorTablesTheSameOnAnyNumberOfThreads) {
  // 8 pods x 8 leaves x 9 hosts, 4 aggs per pod, 36 cores, minhop-like tables: where the repair's
  // chains stop, the walk moves transfers along the plateau of equal excess. Its choices come from
  // a generator seeded by the level: the plan is the same on one and two threads; recomputed from
  // the LFTs it is shorter than the chains' alone, and no phase is longer.
  Fabric f = three_level(8, 8, 9, 4, 36);
  route_minhop(f);
  World w(std::move(f));
  const std::vector<Host> hosts = all_hosts(w.f);
  PlanOptions one = kShiftsOnly, two = kShiftsOnly, chains = kShiftsOnly;
  one.threads = 1, two.threads = 2, chains.walk = false;
  one.repair_probe = two.repair_probe = chains.repair_probe =
      false;  // the repair in every phase: the probe gives it up here
  const Schedule a = plan_all_to_all(w.ctx, hosts, one), b = plan_all_to_all(w.ctx, hosts, two),
                 c = plan_all_to_all(w.ctx, hosts, chains);
  ASSERT_EQ(a.phases.size(), b.phases.size());
  for (size_t p = 0; p < a.phases.size(); ++p) ASSERT_EQ(a.phases[p].dlid, b.phases[p].dlid) << "phase " << p;
  expect_valid(w, a, false);
  const LoadReport walked = evaluate(w.ctx, hosts, a.phases, false), chained = evaluate(w.ctx, hosts, c.phases, false);
  EXPECT_LT(planned_time(walked), planned_time(chained));
  for (size_t p = 0; p < a.phases.size(); ++p) EXPECT_LE(walked.phase_max[p], chained.phase_max[p]) << "phase " << p;
}

TEST(PlannerAtScale, AThreeLevelHostSetWhoseDensestLeafsExcessIsPackedWithinItsBudget) {
  // 2 000 random hosts of the 3 456-host three-level tree (d-mod-k, LMC 2): the densest leaf holds
  // 16 of them on 8 up-links, and 1.7 M of the 4 M transfers wait after the shifts. Packing them
  // scanned 256 waiting transfers per idle sender for the few receivers still free: 1 364 units of
  // work per transfer placed, every packing projected past its budget (1 000 M) and abandoned,
  // 0.84. Scanning only what the budget pays for (64 here), they finish. Recomputed from the LFTs.
  // The leaf pairs left out: they win here (0.99 as an open shop) before any packing.
  World w(eighteen_per_eight(12, 2));
  const std::vector<Host> hosts = random_hosts(w.f, 2000, 2u * 7919u + 17u);
  PlanOptions opt;
  opt.leaf_pairs = false;
  PlanStats st;
  const Schedule s = plan_all_to_all(w.ctx, hosts, opt, &st);
  expect_valid(w, s, false);
  EXPECT_GE(st.packings, 1u);
  EXPECT_LT(st.packings_over_budget, st.packings) << "a packing finished within its budget";
  const LeastTimes least = least_times(w.ctx, hosts, {}, {});
  const double planned = planned_time(evaluate(w.ctx, hosts, s.phases, false));
  EXPECT_GE(least.fabric.time / planned, 0.95) << "least " << least.fabric.time << " (" << least.fabric.limited_by
                                               << "), planned " << planned << " by " << st.method;
}

TEST(PlannerAtScale, TheWholeThreeLevelTreeWhoseLeavesOutnumberTheirUpLinksIsPlannedInLeafPairBlocks) {
  // All 3 456 hosts of the three-level tree (d-mod-k, LMC 2): 18 hosts per leaf over 8 up-links.
  // Every shift sends from all 18 at once, 3 slots where 2.25 would do: the shifts take 10 317 slots
  // against the least time's 7 735.5 (0.75), and packing their 7.9 M waiting transfers goes past its
  // budget. Leaf pairs exchanging 8 transfers per phase leave a few per cent to pack (0.94). Recomputed from the
  // LFTs, against the fabric's least time and round-robin in topology order with base LIDs.
  World w(eighteen_per_eight(12, 1));
  const std::vector<Host> hosts = all_hosts(w.f);
  ASSERT_EQ(hosts.size(), 3456u);
  PlanStats st;
  const Schedule s = plan_all_to_all(w.ctx, hosts, {}, &st);
  EXPECT_NE(st.method.find("leaf-blocks"), std::string::npos) << st.method;
  expect_valid(w, s, true);
  const LeastTimes least = least_times(w.ctx, hosts, {}, {});
  const double planned = planned_time(evaluate(w.ctx, hosts, s.phases, false));
  EXPECT_GE(least.fabric.time / planned, 0.9)
      << "least " << least.fabric.time << ", planned " << planned << " by " << st.method;
  EXPECT_GT(round_robin_in_topology_order(w, hosts), 1.2 * planned);
}

TEST(PlannerAtScale, LeafPairsOfUnequalHostCountsArePlannedAsAnOpenShop) {
  // 1 500 random hosts of the 1 728: leaves of 10-18 hosts over 8 up-links. Blocks of leaf pairs
  // would last as long as each block's largest pair; as an open shop each leaf moves on as soon as
  // its pair is done, taking receivers whose paths have room. Recomputed from the LFTs, against
  // the fabric's least time and round-robin in topology order.
  World w(eighteen_per_eight(6, 1));
  const std::vector<Host> hosts = random_hosts(w.f, 1500, 5);
  PlanStats st;
  const Schedule s = plan_all_to_all(w.ctx, hosts, {}, &st);
  EXPECT_NE(st.method.find("leaf-shop"), std::string::npos) << st.method;
  EXPECT_NE(st.composition.find("open shop"), std::string::npos) << st.composition;
  expect_valid(w, s, true);
  const LeastTimes least = least_times(w.ctx, hosts, {}, {});
  const double planned = planned_time(evaluate(w.ctx, hosts, s.phases, false));
  EXPECT_GE(least.fabric.time / planned, 0.95)
      << "least " << least.fabric.time << ", planned " << planned << " by " << st.method;
  EXPECT_GT(round_robin_in_topology_order(w, hosts), 1.2 * planned);
}

TEST(Planner, MethodAndLidPolicyNamesRoundTrip) {
  for (Method m : {Method::automatic, Method::free, Method::structure}) {
    Method out = m == Method::free ? Method::structure : Method::free;
    ASSERT_TRUE(method_from(to_string(m), out));
    EXPECT_EQ(out, m);
  }
  for (LidPolicy p : {LidPolicy::base, LidPolicy::spread, LidPolicy::random}) {
    LidPolicy out = p == LidPolicy::base ? LidPolicy::random : LidPolicy::base;
    ASSERT_TRUE(lid_policy_from(to_string(p), out));
    EXPECT_EQ(out, p);
  }
  Method kept = Method::structure;
  EXPECT_FALSE(method_from("automatic", kept));  // the word is "auto"
  EXPECT_EQ(kept, Method::structure);
  EXPECT_EQ(to_string(static_cast<Method>(7)), "?");
}
