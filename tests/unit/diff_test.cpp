#include "ibroute/fabric/diff.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "fabrics.hpp"

using namespace ibroute::test;

TEST(Diff, IdenticalFabrics) {
  TwoLeaves a, b;
  FabricDiff d = diff_fabrics(a.f, resolve_routes(a.f), b.f, resolve_routes(b.f));
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.routes_compared, 24u);
}

// A topology-only scan (no forwarding tables) has no routes to compare: the diff says so instead
// of "0 of 0 compared", which reads as "unchanged".
TEST(Diff, TablesNotComparedWhereAScanHasNone) {
  TwoLeaves a, b;
  EXPECT_TRUE(diff_fabrics(a.f, resolve_routes(a.f), b.f, resolve_routes(b.f)).tables_compared);
  b.f.has_lfts = false;
  for (Node& n : b.f.nodes) n.lft.clear(), n.lft_read = false;
  FabricDiff d = diff_fabrics(a.f, resolve_routes(a.f), b.f, RouteSet{});
  EXPECT_FALSE(d.tables_compared);
  EXPECT_EQ(d.routes_compared, 0u);
  d = diff_fabrics(b.f, RouteSet{}, a.f, resolve_routes(a.f));
  EXPECT_FALSE(d.tables_compared);
}

TEST(Diff, NodeOrderDoesNotMatter) {
  TwoLeaves a, b;
  std::swap(b.f.nodes[0], b.f.nodes[1]);  // indices change, GUIDs do not: fix up the links
  for (Node& n : b.f.nodes)
    for (Port& p : n.ports)
      if (p.peer_node == 0 || p.peer_node == 1) p.peer_node = 1 - p.peer_node;
  FabricDiff d = diff_fabrics(a.f, resolve_routes(a.f), b.f, resolve_routes(b.f));
  EXPECT_TRUE(d.empty()) << d.routes_changed << " routes, " << d.links_added.size() << " links";
}

TEST(Diff, LinkGoneLftAndRoutesChanged) {
  TwoLeaves a, b;
  b.f.nodes[b.l2].ports[3] = Port{.guid = 0x2000};  // L2[3] -- S1[2] unplugged
  b.f.nodes[b.s1].ports[2] = Port{.guid = 0x3000};
  b.f.nodes[b.l1].lft[12] = 4;  // L1 moved h3's base LID to S2
  b.f.nodes[b.l1].ports[1].width = 1;
  FabricDiff d = diff_fabrics(a.f, resolve_routes(a.f), b.f, resolve_routes(b.f));
  ASSERT_EQ(d.links_removed.size(), 1u);
  EXPECT_EQ(d.links_removed[0].a.desc, "L2");
  EXPECT_EQ(d.links_removed[0].b.desc, "S1");
  ASSERT_EQ(d.links_changed.size(), 1u);
  EXPECT_EQ(d.links_changed[0].before, "4xEDR");
  EXPECT_EQ(d.links_changed[0].after, "1xEDR");
  EXPECT_EQ(d.lft_entries_changed, 1u);
  EXPECT_EQ(d.switches_with_lft_changes, 1u);
  EXPECT_GT(d.routes_changed, 0u);
  bool seen = false;
  for (auto& r : d.route_examples)
    if (r.ingress == "L1" && r.dlid == 12) {
      seen = true;
      EXPECT_EQ(r.before, "ok: L1[3] -> S1[2] -> L2[1]");
      EXPECT_EQ(r.after, "ok: L1[4] -> S2[2] -> L2[1]");
    }
  EXPECT_TRUE(seen);
}

TEST(Diff, NodesAddedRemovedAndLidsChanged) {
  TwoLeaves a, b;
  b.f.nodes[b.h[3]].guid = 0x999;
  b.f.nodes[b.h[2]].ports[1].base_lid = 20;
  FabricDiff d = diff_fabrics(a.f, resolve_routes(a.f), b.f, resolve_routes(b.f));
  ASSERT_EQ(d.nodes_removed.size(), 1u);
  EXPECT_EQ(d.nodes_removed[0].desc, "h4");
  ASSERT_EQ(d.nodes_added.size(), 1u);
  ASSERT_EQ(d.lids_changed.size(), 1u);
  EXPECT_EQ(d.lids_changed[0].lid_before, 12);
  EXPECT_EQ(d.lids_changed[0].lid_after, 20);
}

// watch's check without routes: the same tables exactly where the full diff (routes included) is
// empty, for every single change a fabric shows between two reads.
TEST(Diff, SameTablesExactlyWhereTheFullDiffIsEmpty) {
  std::vector<std::pair<std::string, std::function<void(TwoLeaves&)>>> changes = {
      {"nothing", [](TwoLeaves&) {}},
      {"node order",
       [](TwoLeaves& t) {
         std::swap(t.f.nodes[0], t.f.nodes[1]);
         for (Node& n : t.f.nodes)
           for (Port& p : n.ports)
             if (p.peer_node == 0 || p.peer_node == 1) p.peer_node = 1 - p.peer_node;
       }},
      {"a description", [](TwoLeaves& t) { t.f.nodes[t.h[0]].desc = "renamed"; }},
      {"an LFT entry", [](TwoLeaves& t) { t.f.nodes[t.l1].lft[12] = 4; }},
      {"an LFT entry no route uses", [](TwoLeaves& t) { t.f.nodes[t.l1].lft.push_back(3); }},
      {"a cable",
       [](TwoLeaves& t) {
         t.f.nodes[t.l2].ports[3] = Port{.guid = 0x2000};
         t.f.nodes[t.s1].ports[2] = Port{.guid = 0x3000};
       }},
      {"a width", [](TwoLeaves& t) { t.f.nodes[t.l1].ports[1].width = 1; }},
      // Either end of a link not yet active (OpenSM arms and activates ports one at a time): the
      // host's end (the lower GUID) and the switch's end behind an active host port.
      {"a host port armed", [](TwoLeaves& t) { t.f.nodes[t.h[0]].ports[1].state = PortState::armed; }},
      {"a switch port armed", [](TwoLeaves& t) { t.f.nodes[t.l1].ports[1].state = PortState::armed; }},
      {"a LID", [](TwoLeaves& t) { t.f.nodes[t.h[2]].ports[1].base_lid = 20; }},
      {"a GUID", [](TwoLeaves& t) { t.f.nodes[t.h[3]].guid = 0x999; }},
      {"a table not read", [](TwoLeaves& t) { t.f.nodes[t.s2].lft_read = false; }},
  };
  for (auto& [what, change] : changes) {
    TwoLeaves a, b;
    change(b);
    const bool empty = diff_fabrics(a.f, resolve_routes(a.f), b.f, resolve_routes(b.f)).empty();
    EXPECT_EQ(same_tables(a.f, b.f), empty && b.f.nodes[b.s2].lft_read) << what;
    EXPECT_EQ(same_tables(b.f, a.f), same_tables(a.f, b.f)) << what;
  }
}
