// Structure of real shapes built in memory: hosts on a spine, three levels with cables missing
// above the leaves and routing that leaves up-links idle, a single switch, and the 8-switch
// fabric with parallel links whose SVG crashed libgvc.
#include <gtest/gtest.h>

#include "fabrics.hpp"
#include "ibroute/fabric/dot.hpp"
#include "ibroute/fabric/synthetic.hpp"

using namespace ibroute::test;

TEST(Structure, HostsOnASpineKeepTwoLevels) {
  TwoLeaves t;
  // A host cabled to spine S1 (give it a third port).
  t.f.nodes[t.s1].ports.resize(4);
  int h = add_node(t.f, NodeType::ca, "odd-host", 1, 0x900);
  up_link(t.f, h, 1, t.s1, 3);
  set_lid(t.f, h, 1, 40);
  FabricStructure s = analyze_structure(t.f);
  EXPECT_EQ(s.levels, 2);
  EXPECT_EQ(s.leaves.size(), 2u);
  EXPECT_EQ(s.top.size(), 2u);
  EXPECT_TRUE(s.missing.empty());
  ASSERT_EQ(s.hosts_above.size(), 1u);
  EXPECT_EQ(s.hosts_above[0], h);
  EXPECT_EQ(s.per_level[1].hosts, 1);
}

TEST(Structure, ThreeLevelsMissingAndIdleLinksAboveTheLeaves) {
  FatTreeSpec spec;
  spec.levels = 3, spec.pods = 2, spec.leaves = 4, spec.hosts_per_leaf = 4, spec.aggs = 2, spec.uplinks = 2,
  spec.cores = 4;
  Fabric f = build_fat_tree(spec);
  FabricStructure s = analyze_structure(f);
  ASSERT_EQ(s.levels, 3);
  EXPECT_EQ(s.leaves.size(), 8u);
  EXPECT_EQ(s.top.size(), 4u);
  EXPECT_TRUE(s.missing.empty());
  EXPECT_TRUE(s.tree);
  EXPECT_EQ(s.per_level[1].common_up, 2);
  RoutingBalance ok = routing_balance(f, s);
  EXPECT_TRUE(ok.idle.empty());
  EXPECT_EQ(ok.upper.size(), 1u);

  // Route everything an aggregation switch sends up through its first up-port only: the other
  // up-links idle, as minhop left 1 440 of 1 728 on a simulated three-level tree.
  int agg = -1;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (s.level[i] == 2) {
      agg = static_cast<int>(i);
      break;
    }
  ASSERT_GE(agg, 0);
  std::vector<int> ups;
  for (int p = 1; p <= f.nodes[agg].num_ports(); ++p)
    if (f.nodes[agg].ports[p].connected() && s.level[f.nodes[agg].ports[p].peer_node] == 3) ups.push_back(p);
  ASSERT_EQ(ups.size(), 2u);
  for (auto& e : f.nodes[agg].lft)
    if (e == ups[1]) e = static_cast<uint8_t>(ups[0]);
  RoutingBalance bad = routing_balance(f, s);
  ASSERT_EQ(bad.idle.size(), 1u);
  EXPECT_EQ(bad.idle[0].a_node, agg);
  EXPECT_EQ(bad.idle[0].a_port, ups[1]);
  EXPECT_EQ(bad.idle_per_level[1], 1);

  // A cable between aggregation and core removed: named at its switch.
  Port& p = f.nodes[agg].ports[ups[1]];
  Port& q = f.nodes[p.peer_node].ports[p.peer_port];
  p.peer_node = -1, q.peer_node = -1;
  FabricStructure cut = analyze_structure(f);
  EXPECT_EQ(cut.levels, 3);
  ASSERT_EQ(cut.missing.size(), 1u);
  EXPECT_EQ(cut.missing[0].a_node, agg);
}

TEST(Structure, SingleSwitchAndLoopback) {
  Fabric f;
  int sw = add_node(f, NodeType::sw, "lonely", 8, 0x10);
  for (int i = 0; i < 3; ++i) {
    int h = add_node(f, NodeType::ca, "h" + std::to_string(i), 1, 0x100 + i * 0x10);
    up_link(f, h, 1, sw, i + 1);
  }
  up_link(f, sw, 7, sw, 8);  // a loopback cable
  FabricStructure s = analyze_structure(f);
  EXPECT_EQ(s.levels, 1);
  EXPECT_EQ(s.leaves.size(), 1u);
  EXPECT_TRUE(s.top.empty());
  ASSERT_EQ(s.loopbacks.size(), 1u);
  EXPECT_EQ(s.loopbacks[0].a_port, 7);
  EXPECT_TRUE(s.slow.empty());
  EXPECT_EQ(s.transfer_bound, 1);
  RoutingBalance b = routing_balance(f, s);
  EXPECT_TRUE(b.leaves.empty());
}

TEST(Dot, EightSwitchesWithParallelLinksRenderWithoutCrashing) {
  // libgvc 2.43 aborted with a double free in gvFreeLayout on this shape (4 leaves, 4 spines, two
  // links per pair); the layout now runs in a child process.
  Fabric f;
  std::vector<int> leaves, spines;
  for (int i = 0; i < 4; ++i)
    leaves.push_back(add_node(f, NodeType::sw, "leaf" + std::to_string(i), 12, 0x1000 + i * 0x10));
  for (int i = 0; i < 4; ++i)
    spines.push_back(add_node(f, NodeType::sw, "spine" + std::to_string(i), 12, 0x2000 + i * 0x10));
  for (int l = 0; l < 4; ++l)
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < 2; ++k) up_link(f, leaves[l], 5 + 2 * s + k, spines[s], 1 + 2 * l + k);
  for (int l = 0; l < 4; ++l)
    for (int h = 0; h < 4; ++h) {
      int n = add_node(f, NodeType::ca, "n" + std::to_string(l * 4 + h), 1, 0x10000 + (l * 4 + h) * 0x10);
      up_link(f, n, 1, leaves[l], h + 1);
    }
  std::string svg = render_svg(to_dot(f));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("spine3"), std::string::npos);
  EXPECT_THROW(render_svg("digraph { this is not dot"), std::runtime_error);
}
