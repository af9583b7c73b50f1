// Tree routing: tables that make the round-robin all-to-all congestion-free at LMC 0, the check
// that guards them, and the file OpenSM loads. Loads are recomputed by walking the new tables.
#include "ibroute/fabric/tree_routing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/fabric/text_export.hpp"
#include "ibroute/fabric/text_import.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"
#include "routing_advice.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::World;

namespace {

std::vector<CaPort> refs(const std::vector<Host>& hosts) {
  std::vector<CaPort> out;
  for (const Host& h : hosts) out.push_back({h.node, h.port});
  return out;
}

struct Routed {
  TreeRouting routing;
  std::vector<Host> hosts;  // in the rank order routed
  LoadReport load;          // round-robin, base LIDs, over the new tables
  RoutingCheck check;
};

// Route `f` for `hosts` (in the tree's order when `tree`), install the tables, evaluate.
Routed route_and_evaluate(Fabric& f, std::vector<Host> hosts, bool tree) {
  const FabricStructure s = analyze_structure(f);
  Routed r;
  if (tree) {
    const std::vector<CaPort> order = tree_order(f, s, refs(hosts));
    std::vector<Host> sorted;
    for (CaPort p : order)
      sorted.push_back(*std::find_if(hosts.begin(), hosts.end(),
                                     [&](const Host& h) { return h.node == p.node && h.port == p.port; }));
    hosts = sorted;
  }
  r.routing = route_tree(f, s, refs(hosts));
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!r.routing.lft[i].empty()) f.nodes[i].lft = r.routing.lft[i];
  r.check = check_tree_routing(f, s);
  World w(f);
  std::vector<Phase> rr = shift_phases(hosts.size());
  apply_lid_policy(w.f, hosts, rr, LidPolicy::base);
  r.load = evaluate(w.ctx, hosts, rr, false);
  r.hosts = hosts;
  return r;
}

FatTreeSpec half_fat_tree(uint8_t lmc) {
  FatTreeSpec t;
  t.leaves = 12, t.hosts_per_leaf = 8, t.uplinks = 4, t.spines = 4, t.lmc = lmc, t.shuffle_names = true, t.seed = 7;
  return t;
}

FatTreeSpec three_levels(uint8_t lmc) {
  FatTreeSpec t;
  t.levels = 3, t.pods = 4, t.leaves = 4, t.hosts_per_leaf = 8, t.aggs = 4, t.cores = 16, t.lmc = lmc,
  t.shuffle_names = true;
  return t;
}

// Removes the cable on `port` of switch `sw`, on both ends.
void unlink(Fabric& f, int sw, int port) {
  Port& a = f.nodes[sw].ports[port];
  Port& b = f.nodes[a.peer_node].ports[a.peer_port];
  b.peer_node = -1, b.peer_port = 0, a.peer_node = -1, a.peer_port = 0;
}

int node_named(const Fabric& f, const std::string& name) {
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].desc == name) return static_cast<int>(i);
  return -1;
}

// Three directors (4 line ASICs of 9 outside ports and 9 links to 3 spine ASICs each, not cabled to each other)
// and 18 edge switches of 6 hosts, every edge cabled twice to every director, its two line ASICs
// of a director taken 3 apart (so edges that share one line share no other: no pods), one edge
// short of a cable. LIDs in node order.
Fabric multi_director() {
  Fabric f;
  uint64_t guid = 0x10000;
  auto sw = [&](const std::string& name, int ports) {
    const int n = ibroute::test::add_node(f, NodeType::sw, name, ports, guid += 0x100);
    f.nodes[n].ports[0].state = PortState::active;
    return n;
  };
  std::vector<std::vector<int>> lines(3);
  std::vector<int> used(3 * 4, 0);
  for (int d = 0; d < 3; ++d) {
    std::vector<int> spines;
    for (int k = 0; k < 3; ++k) spines.push_back(sw("director" + std::to_string(d) + "/S" + std::to_string(k), 12));
    for (int l = 0; l < 4; ++l) {
      lines[d].push_back(sw("director" + std::to_string(d) + "/L" + std::to_string(l), 18));
      for (int j = 0; j < 9; ++j) ibroute::test::up_link(f, lines[d][l], 10 + j, spines[j % 3], 3 * l + j / 3 + 1);
    }
  }
  int host = 0;
  for (int e = 0; e < 18; ++e) {
    const int edge = sw("edge" + std::to_string(e), 12);
    for (int u = 0; u < 6; ++u) {
      const int d = u % 3, l = (3 * e + u / 3) % 4;
      if (e == 5 && u == 4) continue;  // the missing cable
      ibroute::test::up_link(f, edge, 7 + u, lines[d][l], 1 + used[d * 4 + l]++);
    }
    for (int h = 0; h < 6; ++h, ++host) {
      const int ca = ibroute::test::add_node(f, NodeType::ca, "node" + std::to_string((host * 37) % 108) + " HCA-1", 1,
                                             0x900000 + 0x10 * host);
      ibroute::test::up_link(f, ca, 1, edge, h + 1);
    }
  }
  uint16_t lid = 1;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    ibroute::test::set_lid(f, static_cast<int>(i), f.nodes[i].is_switch() ? 0 : 1, lid++);
  f.has_lfts = true;
  return f;
}

}  // namespace

// Hubs pin each destination to one way into its edge switch: on directors that edges share
// irregularly, a few links into a leaf carry several hosts' traffic. The spread construction
// splits every destination over all the ways in: the least possible all-to-all time over its
// tables (walked from them by the efficiency code, not by the routing) comes near the fabric's.
TEST(TreeRouting, SpreadRoutingReachesTheCapacityOfMultiDirectorTrees) {
  double fabric = 0;
  std::map<TreeStyle, double> tables;
  for (TreeStyle style : {TreeStyle::hubs, TreeStyle::spread}) {
    Fabric f = multi_director();
    const FabricStructure s = analyze_structure(f);
    ASSERT_EQ(s.levels, 3);
    const std::vector<CaPort> order = tree_order(f, s, refs(all_hosts(f)));
    const TreeRouting r = route_tree(f, s, order, style);
    for (size_t i = 0; i < f.nodes.size(); ++i)
      if (!r.lft[i].empty()) f.nodes[i].lft = r.lft[i];
    const RoutingCheck check = check_tree_routing(f, s);
    EXPECT_TRUE(check.ok()) << (check.first.empty() ? "" : check.first[0]);
    World w(f);
    const std::vector<Host> hosts = all_hosts(w.f);
    fabric = least_time(w.ctx, hosts, {}, {}, false).time;
    tables[style] = least_time(w.ctx, hosts, {}, {}).time;
    // Every host reaches every other over the new tables.
    std::vector<Phase> rr = shift_phases(hosts.size());
    apply_lid_policy(w.f, hosts, rr, LidPolicy::base);
    EXPECT_EQ(evaluate(w.ctx, hosts, rr, false).broken, 0u);
  }
  // An edge with 5 up-links for 6 hosts: 6 x 102 transfers enter it over 5 links.
  EXPECT_DOUBLE_EQ(fabric, 6.0 * 102 / 5);
  EXPECT_LE(tables[TreeStyle::spread], 1.05 * fabric);
  EXPECT_GT(tables[TreeStyle::hubs], 1.5 * fabric);
}

// At LMC 0 every path is fixed: a greedy packing over the spread tables leaves phases short of
// senders and a tail of nearly empty ones. Compaction (phase_compaction.hpp) empties the emptiest
// phases into the others. Checked by the evaluation (every pair once, no link over its capacity)
// against the plan without it and the fabric's least time, and planned twice alike.
TEST(TreeRouting, CompactionBringsLmc0PlansNearTheSpreadTablesLeastTime) {
  Fabric f = multi_director();
  const FabricStructure s = analyze_structure(f);
  const std::vector<CaPort> order = tree_order(f, s, refs(all_hosts(f)));
  const TreeRouting r = route_tree(f, s, order, TreeStyle::spread);
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!r.lft[i].empty()) f.nodes[i].lft = r.lft[i];
  World w(f);
  const std::vector<Host> hosts = all_hosts(w.f);
  const double least = least_time(w.ctx, hosts, {}, {}, false).time;  // the fabric's: 6 x 102 / 5 into the short edge
  auto total = [](const LoadReport& l) { return std::accumulate(l.phase_time.begin(), l.phase_time.end(), 0.0); };
  PlanOptions plain;
  plain.compaction = false;
  PlanStats a, b, again;
  const Schedule before = plan_all_to_all(w.ctx, hosts, plain, &a);
  const Schedule after = plan_all_to_all(w.ctx, hosts, {}, &b);
  EXPECT_EQ(a.phases_compacted, 0u);
  ASSERT_GT(b.phases_compacted, 0u);
  std::set<std::pair<int32_t, int32_t>> pairs;
  for (const Phase& ph : after.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] >= 0) {
        EXPECT_TRUE(pairs.emplace(static_cast<int32_t>(i), ph.dst[i]).second) << i << " -> " << ph.dst[i] << " twice";
      }
  EXPECT_EQ(pairs.size(), hosts.size() * (hosts.size() - 1));
  const LoadReport lb = evaluate(w.ctx, hosts, before.phases, false), la = evaluate(w.ctx, hosts, after.phases, false);
  EXPECT_EQ(la.broken, 0u);
  EXPECT_EQ(la.max_load, 1);
  EXPECT_LT(after.phases.size(), before.phases.size());
  EXPECT_LT(total(la), total(lb));
  EXPECT_GE(least / total(la), 0.95) << least << " / " << total(la) << " (without compaction " << total(lb)
                                     << ")";  // 0.97
  EXPECT_LT(least / total(lb), 0.9);          // 0.87 without
  EXPECT_EQ(plan_all_to_all(w.ctx, hosts, {}, &again).phases, after.phases);
  EXPECT_EQ(again.compaction_work, b.compaction_work);
}

TEST(TreeRouting, HalfFatTreeInTreeOrderIsCongestionFreeAtLmc0) {
  Fabric f = build_fat_tree(half_fat_tree(0));
  const int bound = analyze_structure(f).transfer_bound;
  ASSERT_EQ(bound, 2);
  // The d-mod-k tables the synthetic builder made, in host-name order: congested.
  World before(f);
  std::vector<Host> hosts = all_hosts(f);
  std::vector<Phase> rr = shift_phases(hosts.size());
  apply_lid_policy(f, hosts, rr, LidPolicy::base);
  EXPECT_GT(evaluate(before.ctx, hosts, rr, false).max_load, bound);

  Routed r = route_and_evaluate(f, hosts, true);
  EXPECT_TRUE(r.check.ok()) << (r.check.first.empty() ? "" : r.check.first[0]);
  EXPECT_EQ(r.load.broken, 0u);
  EXPECT_EQ(r.load.max_load, bound);
  EXPECT_EQ(r.load.congested, 0u);
  EXPECT_EQ(r.routing.hubs.size(), 4u);
  EXPECT_EQ(r.routing.moved_roots + r.routing.detours, 0u);
  // Tree order: each leaf's hosts are consecutive ranks.
  for (size_t i = 0; i + 1 < r.hosts.size(); i += 8)
    for (size_t k = 1; k < 8; ++k)
      EXPECT_EQ(f.nodes[r.hosts[i].node].ports[1].peer_node, f.nodes[r.hosts[i + k].node].ports[1].peer_node);
}

TEST(TreeRouting, GivenOrderThatFollowsTheCablingIsKept) {
  Fabric f = build_fat_tree(half_fat_tree(0));
  std::vector<Host> hosts = topology_order(f, all_hosts(f));
  Routed r = route_and_evaluate(f, hosts, false);
  EXPECT_EQ(r.hosts, hosts);
  EXPECT_LE(r.load.max_load, 2);
}

TEST(TreeRouting, ThreeLevelTreeInTreeOrderIsCongestionFree) {
  Fabric f = build_fat_tree(three_levels(0));
  const FabricStructure s = analyze_structure(f);
  ASSERT_EQ(s.levels, 3);
  Routed r = route_and_evaluate(f, all_hosts(f), true);
  EXPECT_TRUE(r.check.ok()) << (r.check.first.empty() ? "" : r.check.first[0]);
  EXPECT_EQ(r.load.broken, 0u);
  EXPECT_LE(r.load.max_load, s.transfer_bound);
  EXPECT_EQ(r.routing.hubs.size(), 16u);
}

// The minhop-like tables the benchmarks plan over (route_minhop): every host still reaches every
// other, and round-robin in topology order meets the congestion that the
// correlated choices make, where d-mod-k's tables have none beyond the bound.
TEST(TreeRouting, MinhopLikeTablesArriveButCongestTheRoundRobin) {
  std::map<std::string, int> worst;
  for (const std::string rule : {"dmodk", "minhop"}) {
    Fabric f = build_fat_tree(three_levels(2));
    if (rule == "minhop") route_minhop(f);
    World w(f);
    const std::vector<Host> hosts = topology_order(w.f, all_hosts(w.f));
    std::vector<Phase> rr = shift_phases(hosts.size());
    apply_lid_policy(w.f, hosts, rr, LidPolicy::base);
    const LoadReport load = evaluate(w.ctx, hosts, rr, false);
    EXPECT_EQ(load.broken, 0u) << rule;
    worst[rule] = load.max_load;
  }
  EXPECT_GT(worst["minhop"], worst["dmodk"]);
}

TEST(TreeRouting, SubsetAndMissingLinkStayNearTheBound) {
  Fabric f = build_fat_tree(half_fat_tree(0));
  std::vector<Host> hosts = all_hosts(f);
  std::shuffle(hosts.begin(), hosts.end(), std::mt19937(3));
  hosts.resize(hosts.size() * 9 / 10);
  Routed sub = route_and_evaluate(f, hosts, true);
  EXPECT_TRUE(sub.check.ok());
  EXPECT_EQ(sub.load.broken, 0u);
  EXPECT_LE(sub.load.max_load, 3);

  Fabric g = build_fat_tree(half_fat_tree(0));
  const int leaf = node_named(g, "leaf003");
  unlink(g, leaf, 8 + 2);  // one of its four up-links
  Routed cut = route_and_evaluate(g, all_hosts(g), true);
  EXPECT_TRUE(cut.check.ok()) << (cut.check.first.empty() ? "" : cut.check.first[0]);
  EXPECT_EQ(cut.load.broken, 0u);
  EXPECT_GT(cut.routing.moved_roots + cut.routing.detours, 0u);
  EXPECT_LE(cut.load.max_load, 3);  // 8 hosts over 3 up-links: 3 is the least possible
}

TEST(TreeRouting, LidsOfOnePortStartAtRootsThatDifferAtEveryLevel) {
  Fabric f = build_fat_tree(three_levels(2));
  const FabricStructure s = analyze_structure(f);
  const std::vector<Host> hosts = all_hosts(f);
  TreeRouting r = route_tree(f, s, refs(hosts));
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!r.lft[i].empty()) f.nodes[i].lft = r.lft[i];
  EXPECT_TRUE(check_tree_routing(f, s).ok());
  // From a leaf of another pod, the four LIDs of a host leave by four different up-links and
  // reach four different cores.
  const Host& h = hosts.front();
  const int home = f.nodes[h.node].ports[h.port].peer_node;
  LftWalker walker(f);
  auto crosses_a_core = [&](int32_t leaf) {
    std::vector<Hop> hops;
    walker.walk(leaf, f.nodes[h.node].ports[h.port].base_lid, hops);
    return std::any_of(hops.begin(), hops.end(), [&](const Hop& x) { return s.level[x.node] == 3; });
  };
  const int32_t far =
      *std::find_if(s.leaves.begin(), s.leaves.end(), [&](int32_t l) { return l != home && crosses_a_core(l); });
  std::set<int> ups, cores;
  for (uint32_t off = 0; off < 4; ++off) {
    std::vector<Hop> hops;
    const uint16_t lid = static_cast<uint16_t>(f.nodes[h.node].ports[h.port].base_lid + off);
    ASSERT_EQ(walker.walk(far, lid, hops), RouteStatus::ok);
    ups.insert(hops.front().out_port);
    for (const Hop& hop : hops)
      if (s.level[hop.node] == 3) cores.insert(hop.node);
  }
  EXPECT_EQ(ups.size(), 4u);
  EXPECT_EQ(cores.size(), 4u);
}

TEST(TreeRouting, CheckCatchesLoopsClimbsAfterDescentAndPortsOutOfRange) {
  ibroute::test::TwoLeaves t;
  // The fixture routes spine to spine down and up again; no up*/down* route joins two top switches.
  ibroute::test::route(t.f, t.s1, 4, kNoRoute);
  ibroute::test::route(t.f, t.s2, 3, kNoRoute);
  const FabricStructure s = analyze_structure(t.f);
  EXPECT_TRUE(check_tree_routing(t.f, s).ok());
  {  // a loop: S1 sends h3's LID back to L1, which sends it up to S1
    Fabric f = t.f;
    ibroute::test::route(f, t.s1, 12, 1);
    const RoutingCheck c = check_tree_routing(f, s);
    EXPECT_FALSE(c.ok());
    ASSERT_FALSE(c.first.empty());
    EXPECT_NE(c.first[0].find("0x000c"), std::string::npos) << c.first[0];
  }
  {  // down to L1, then up again to S2, then down to L2: a route that could close a credit loop
    Fabric f = t.f;
    ibroute::test::route(f, t.s1, 12, 1);
    ibroute::test::route(f, t.l1, 12, 4);
    const RoutingCheck c = check_tree_routing(f, s);
    EXPECT_FALSE(c.ok());
    ASSERT_FALSE(c.first.empty());
    EXPECT_NE(c.first[0].find("up*/down*"), std::string::npos) << c.first[0];
  }
  {  // an entry beyond the switch's ports
    Fabric f = t.f;
    ibroute::test::route(f, t.l2, 9, 40);
    const RoutingCheck c = check_tree_routing(f, s);
    EXPECT_FALSE(c.ok());
    EXPECT_NE(c.first[0].find("beyond its 4 ports"), std::string::npos) << c.first[0];
  }
}

// Edges cabled to some of the top switches (directors) only: A to T0 and T1, B to T1 and T2, C to T2
// and T3. A and C share none, so only a turn from down to up would join them: no up*/down* tables
// route A's hosts to C's. The check says so rather than only that the route is dropped.
TEST(TreeRouting, CheckNamesEdgesThatShareNoSwitchAbove) {
  Fabric f;
  std::vector<int> top;
  for (int t = 0; t < 4; ++t)
    top.push_back(ibroute::test::add_node(f, NodeType::sw, "T" + std::to_string(t), 4, 0x1000 + t));
  const int edges[3][2] = {{0, 1}, {1, 2}, {2, 3}};
  std::vector<int> used(4, 0);
  for (int e = 0; e < 3; ++e) {
    const int sw = ibroute::test::add_node(f, NodeType::sw, std::string("edge") + char('A' + e), 6, 0x2000 + e);
    for (int u = 0; u < 2; ++u) ibroute::test::up_link(f, sw, 5 + u, top[edges[e][u]], 1 + used[edges[e][u]]++);
    for (int h = 0; h < 2; ++h) {
      const int ca =
          ibroute::test::add_node(f, NodeType::ca, "n" + std::to_string(2 * e + h) + " HCA-1", 1, 0x9000 + 2 * e + h);
      ibroute::test::up_link(f, ca, 1, sw, h + 1);
    }
  }
  uint16_t lid = 1;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    ibroute::test::set_lid(f, static_cast<int>(i), f.nodes[i].is_switch() ? 0 : 1, lid++);
  f.has_lfts = true;
  const FabricStructure s = analyze_structure(f);
  ASSERT_EQ(s.levels, 2);
  ASSERT_TRUE(s.tree);
  const TreeRouting r = route_tree(f, s, refs(all_hosts(f)));
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!r.lft[i].empty()) f.nodes[i].lft = r.lft[i];
  const RoutingCheck c = check_tree_routing(f, s);
  ASSERT_FALSE(c.ok());
  bool named = false;
  for (const std::string& line : c.first) named |= line.find("share no switch above them") != std::string::npos;
  EXPECT_TRUE(named) << c.first.front();
}

TEST(TreeRouting, TheWrittenTablesReadBackAsComputed) {
  Fabric f = build_fat_tree(three_levels(1));
  const FabricStructure s = analyze_structure(f);
  const TreeRouting r = route_tree(f, s, refs(all_hosts(f)));
  const std::string text = write_lft_dump(f, r.lft, {"made by a test", "second line\nwith a break"});
  EXPECT_EQ(text.find("\nwith a break"), std::string::npos);
  Fabric back = f;
  for (Node& n : back.nodes) n.lft.clear(), n.lft_read = false;
  apply_lft_dump(back, text, "tables");
  const LidMap lids(f);
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (r.lft[i].empty()) continue;
    ASSERT_TRUE(back.nodes[i].lft_read) << f.nodes[i].desc;
    for (uint16_t lid : lids.lids())
      EXPECT_EQ(back.nodes[i].lft.at(lid), r.lft[i][lid]) << f.nodes[i].desc << " LID " << lid;
  }
  // Every entry names its destination's port GUID, the key OpenSM re-maps LIDs by.
  EXPECT_NE(text.find("(Channel Adapter portguid 0x"), std::string::npos);
  EXPECT_NE(text.find("(Switch portguid 0x"), std::string::npos);
}

TEST(TreeRouting, RefusesWhatItCannotRoute) {
  Fabric f = build_fat_tree(half_fat_tree(0));
  const FabricStructure s = analyze_structure(f);
  const int leaf = node_named(f, "leaf001");
  ibroute::test::expect_input_error([&] { route_tree(f, s, {{leaf, 1}}); }, "is not a CA port");
  const std::vector<Host> hosts = all_hosts(f);
  ibroute::test::expect_input_error([&] { route_tree(f, s, {{hosts[0].node, 1}, {hosts[0].node, 1}}); }, "twice");
  Fabric none = f;
  for (Node& n : none.nodes)
    for (Port& p : n.ports) p.base_lid = 0;
  ibroute::test::expect_input_error([&] { route_tree(none, analyze_structure(none), {}); }, "no LIDs");
}

TEST(TreeRouting, LocalSearchLowersTheExcessItCountsExactly) {
  Fabric f = build_fat_tree(half_fat_tree(0));
  unlink(f, node_named(f, "leaf003"), 8 + 2);
  unlink(f, node_named(f, "leaf007"), 8 + 4);
  const FabricStructure s = analyze_structure(f);
  std::vector<Host> hosts = all_hosts(f);
  std::shuffle(hosts.begin(), hosts.end(), std::mt19937(11));
  hosts.resize(hosts.size() - 5);
  std::vector<Host> ordered;
  for (CaPort p : tree_order(f, s, refs(hosts)))
    ordered.push_back(
        *std::find_if(hosts.begin(), hosts.end(), [&](const Host& h) { return h.node == p.node && h.port == p.port; }));
  TreeRouting r = route_tree(f, s, refs(ordered));
  // The excess as the evaluator counts it: per switch link and phase, transfers above 2.
  auto excess_of = [&](const TreeRouting& tables, int* worst) {
    Fabric g = f;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!tables.lft[i].empty()) g.nodes[i].lft = tables.lft[i];
    EXPECT_TRUE(check_tree_routing(g, s).ok());
    World w(g);
    std::vector<Phase> rr = shift_phases(ordered.size());
    apply_lid_policy(w.f, ordered, rr, LidPolicy::base);
    const LoadReport load = evaluate(w.ctx, ordered, rr, false);
    EXPECT_EQ(load.broken, 0u);
    long sum = 0;
    for (auto [l, count] : load.histogram) sum += l > 2 ? (l - 2) * static_cast<long>(count) : 0;
    *worst = load.max_load;
    return sum;
  };
  int worst_before = 0, worst_after = 0;
  const long before = excess_of(r, &worst_before);
  const RefineStats st = refine_for_shift(f, s, refs(ordered), r);
  const long after = excess_of(r, &worst_after);
  EXPECT_FALSE(st.skipped);
  EXPECT_EQ(st.excess_before, before);
  EXPECT_EQ(st.excess_after, after);
  EXPECT_GT(st.moves, 0u);
  EXPECT_LT(after, before);
  EXPECT_LE(worst_after, worst_before);
  EXPECT_EQ(st.worst_excess_after, worst_after - 2);
}

// The local search serves the unplanned shifts; it must not take from what a plan can reach: no
// link's all-to-all total rises above the worst there was (the tables' least time, computed by
// the efficiency code from the tables, stays), while the shifts' excess falls.
TEST(TreeRouting, LocalSearchKeepsTheTablesLeastTime) {
  Fabric f = multi_director();
  const FabricStructure s = analyze_structure(f);
  const std::vector<CaPort> order = tree_order(f, s, refs(all_hosts(f)));
  TreeRouting r = route_tree(f, s, order, TreeStyle::spread);
  auto least_over = [&](const TreeRouting& tables) {
    Fabric g = f;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!tables.lft[i].empty()) g.nodes[i].lft = tables.lft[i];
    EXPECT_TRUE(check_tree_routing(g, s).ok());
    World w(g);
    return least_time(w.ctx, all_hosts(w.f), {}, {}).time;
  };
  const double before = least_over(r);
  const RefineStats st = refine_for_shift(f, s, order, r);
  EXPECT_GT(st.moves, 0u);
  EXPECT_LT(st.excess_after, st.excess_before);
  EXPECT_LE(least_over(r), before);
}

TEST(TreeRouting, LocalSearchSkipsWhatItCannotHoldInMemory) {
  Fabric f = build_fat_tree(half_fat_tree(0));
  const FabricStructure s = analyze_structure(f);
  const std::vector<Host> hosts = all_hosts(f);
  TreeRouting r = route_tree(f, s, refs(hosts));
  const auto lft = r.lft;
  const RefineStats st = refine_for_shift(f, s, refs(hosts), r, {.max_cells = 100});
  EXPECT_TRUE(st.skipped);
  EXPECT_EQ(r.lft, lft);
}

// A budget of work, not of time: a search cut short stops at the same move on every run (and
// machine), and a larger budget goes on from there.
TEST(TreeRouting, LocalSearchStopsOnItsWorkBudgetTheSameWayEveryTime) {
  Fabric f = build_fat_tree(half_fat_tree(0));
  unlink(f, node_named(f, "leaf003"), 8 + 2);
  const FabricStructure s = analyze_structure(f);
  std::vector<CaPort> order = refs(all_hosts(f));
  const TreeRouting start = route_tree(f, s, order);
  const RefineStats full = [&] {
    TreeRouting r = start;
    return refine_for_shift(f, s, order, r);
  }();
  ASSERT_GT(full.work, 1000u);
  EXPECT_FALSE(full.out_of_budget);
  std::vector<std::vector<std::vector<uint8_t>>> tables;
  for (int run = 0; run < 2; ++run) {
    TreeRouting r = start;
    const RefineStats cut = refine_for_shift(f, s, order, r, {.work = full.work / 3});
    EXPECT_TRUE(cut.out_of_budget);
    EXPECT_LE(cut.moves, full.moves);
    EXPECT_GE(cut.excess_after, full.excess_after);
    tables.push_back(r.lft);
  }
  EXPECT_EQ(tables[0], tables[1]);
}

// plan's advice: `ibroute routing` is named only where both its constructions pass the check the
// command runs before writing; else what blocks it is said (workflow/routing_advice).
TEST(TreeRouting, AdviceNamesTheCommandOnlyWhereItsCheckPasses) {
  Fabric f = build_fat_tree(half_fat_tree(0));
  const std::vector<Host> hosts = all_hosts(f);
  const auto ok = ibroute::workflow::advise_routing(f, analyze_structure(f), hosts);
  EXPECT_EQ(ok.command, "ibroute routing");
  EXPECT_EQ(ok.blocked_by, "");
  // leaf001 keeps only its cable to one spine, leaf002 only to another: no up*/down* route joins them.
  Fabric cut = f;
  const int l1 = node_named(cut, "leaf001"), l2 = node_named(cut, "leaf002");
  std::set<int> spines_of_l1;
  for (int p = 1; p <= cut.nodes[l1].num_ports(); ++p)
    if (cut.nodes[l1].ports[p].connected() && cut.nodes[cut.nodes[l1].ports[p].peer_node].is_switch())
      spines_of_l1.insert(p);
  const int keep1 = *spines_of_l1.begin();
  const int spine1 = cut.nodes[l1].ports[keep1].peer_node;
  for (int p : spines_of_l1)
    if (p != keep1) unlink(cut, l1, p);
  for (int p = 1; p <= cut.nodes[l2].num_ports(); ++p)
    if (cut.nodes[l2].ports[p].connected() && cut.nodes[cut.nodes[l2].ports[p].peer_node].is_switch() &&
        cut.nodes[l2].ports[p].peer_node == spine1)
      unlink(cut, l2, p);
  bool first = true;  // of leaf002's other spines, keep one
  for (int p = 1; p <= cut.nodes[l2].num_ports(); ++p)
    if (cut.nodes[l2].ports[p].connected() && cut.nodes[cut.nodes[l2].ports[p].peer_node].is_switch() &&
        !std::exchange(first, false))
      unlink(cut, l2, p);
  const auto blocked = ibroute::workflow::advise_routing(cut, analyze_structure(cut), all_hosts(cut));
  EXPECT_EQ(blocked.command, "");
  EXPECT_NE(blocked.blocked_by.find("fail their own check"), std::string::npos) << blocked.blocked_by;
  // No LIDs: it cannot route at all, and says why.
  Fabric none = f;
  for (Node& n : none.nodes)
    for (Port& p : n.ports) p.base_lid = 0;
  const auto no_lids = ibroute::workflow::advise_routing(none, analyze_structure(none), hosts);
  EXPECT_EQ(no_lids.command, "");
  EXPECT_NE(no_lids.blocked_by.find("cannot route this fabric: "), std::string::npos) << no_lids.blocked_by;
  EXPECT_NE(no_lids.blocked_by.find("has no LID"), std::string::npos) << no_lids.blocked_by;
}

// A SHARP aggregation node on every spine (as NVIDIA's switches carry them): from one spine to the
// node on another there is no up*/down* way (only down to a leaf and up again), so no table routes
// it, and the check counts those pairs apart instead of failing the tables; every host still
// reaches every node and every node every host, walked here through the written tables.
TEST(TreeRouting, CasOnTwoTopSwitchesAreCountedNotFailed) {
  Fabric f = build_fat_tree(half_fat_tree(0));
  const FabricStructure before = analyze_structure(f);
  const int top = *std::max_element(before.level.begin(), before.level.end());
  uint16_t lid = 0;
  for (const Node& n : f.nodes)
    for (const Port& p : n.ports) lid = std::max(lid, p.base_lid);
  std::vector<std::pair<int, int>> nodes;  // (aggregation node, its spine)
  for (size_t sw = 0; sw < before.level.size(); ++sw) {
    if (before.level[sw] != top || f.nodes[sw].type != NodeType::sw) continue;
    const int an = ibroute::test::add_node(f, NodeType::ca, "Mellanox Technologies Aggregation Node", 1,
                                           0xa000 + static_cast<uint64_t>(sw) * 16);
    Node& spine = f.nodes[sw];
    spine.ports.push_back(Port{.guid = spine.guid});
    ibroute::test::up_link(f, static_cast<int>(sw), spine.num_ports(), an, 1);
    ibroute::test::set_lid(f, an, 1, ++lid);
    nodes.emplace_back(an, static_cast<int>(sw));
  }
  ASSERT_EQ(nodes.size(), 4u);
  const std::vector<Host> hosts = all_hosts(f);
  ASSERT_EQ(hosts.size(), 96u) << "the aggregation nodes are not hosts";
  const Routed r = route_and_evaluate(f, hosts, false);
  EXPECT_TRUE(r.check.ok()) << (r.check.first.empty() ? "" : r.check.first.front());
  EXPECT_EQ(r.check.no_way, nodes.size() * (nodes.size() - 1)) << "each spine to each other spine's node";
  for (const auto& [an, spine] : nodes) {
    const uint16_t an_lid = f.nodes[an].ports[1].base_lid;
    for (const Host& h : hosts) {
      const int leaf = f.nodes[h.node].ports[h.port].peer_node;
      const auto up = ibroute::test::lft_path(f, leaf, an_lid);
      ASSERT_FALSE(up.empty()) << h.name << " to an aggregation node";
      EXPECT_EQ(f.nodes[up.back().first].ports[up.back().second].peer_node, spine);
      EXPECT_EQ(f.nodes[spine].ports[f.nodes[spine].lft[an_lid]].peer_node, an);
      const auto down = ibroute::test::lft_path(f, spine, f.nodes[h.node].ports[h.port].base_lid);
      ASSERT_FALSE(down.empty()) << "an aggregation node to " << h.name;
      EXPECT_EQ(f.nodes[down.back().first].ports[down.back().second].peer_node, leaf);
    }
  }
}

// LMC is a choice, never a cost: at LMC 2 each construction routes the base LIDs exactly as it
// does at LMC 0 (the same fabric with one LID per port), so a plan over them alone is the LMC 0
// plan; and the two constructions merged keep one's base LIDs and add the other's LIDs after them,
// every route still up*/down* (checked on the tables written into the fabric).
TEST(TreeRouting, BaseLidsAtLmc2AreTheLmc0TablesAndMergingKeepsThem) {
  Fabric f2 = build_fat_tree(three_levels(2));
  Fabric f0 = f2;
  for (Node& n : f0.nodes)
    for (Port& p : n.ports) p.lmc = 0;
  const FabricStructure s = analyze_structure(f2);
  const std::vector<CaPort> order = tree_order(f2, s, refs(all_hosts(f2)));
  std::map<TreeStyle, TreeRouting> at2;
  for (TreeStyle style : {TreeStyle::hubs, TreeStyle::spread}) {
    const TreeRouting r0 = route_tree(f0, s, order, style);
    at2[style] = route_tree(f2, s, order, style);
    EXPECT_EQ(at2[style].hubs, r0.hubs);
    EXPECT_EQ(at2[style].moved_roots, r0.moved_roots);
    EXPECT_EQ(at2[style].detours, r0.detours);
    size_t compared = 0;
    for (const Node& owner : f2.nodes)
      for (const Port& p : owner.ports) {
        if (owner.is_switch() || p.base_lid == 0) continue;
        ASSERT_EQ(p.lid_count(), 4u);
        for (size_t sw = 0; sw < r0.lft.size(); ++sw)
          if (!r0.lft[sw].empty()) {
            EXPECT_EQ(at2[style].lft[sw][p.base_lid], r0.lft[sw][p.base_lid])
                << f2.nodes[sw].desc << " to " << owner.desc;
            ++compared;
          }
      }
    EXPECT_GT(compared, 1000u);
  }
  const TreeRouting& first = at2[TreeStyle::spread];
  const TreeRouting& second = at2[TreeStyle::hubs];
  const TreeRouting merged = merge_lids(f2, first, second);
  for (const Node& owner : f2.nodes)
    for (const Port& p : owner.ports) {
      if (owner.is_switch() || p.base_lid == 0) continue;
      for (size_t sw = 0; sw < merged.lft.size(); ++sw) {
        if (merged.lft[sw].empty()) continue;
        EXPECT_EQ(merged.lft[sw][p.base_lid], first.lft[sw][p.base_lid]);
        for (uint16_t k = 1; k < 4; ++k) EXPECT_EQ(merged.lft[sw][p.base_lid + k], second.lft[sw][p.base_lid + k - 1]);
      }
    }
  apply_tree_routing(f2, merged);
  const RoutingCheck check = check_tree_routing(f2, s);
  EXPECT_TRUE(check.ok()) << (check.first.empty() ? "" : check.first[0]);
  EXPECT_GT(check.walked, 0u);
}
