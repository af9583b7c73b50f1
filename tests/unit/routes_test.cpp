#include "ibroute/fabric/routes.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string_view>

#include "fabrics.hpp"
#include "ibroute/fabric/enum_names.hpp"
#include "ibroute/fabric/synthetic.hpp"

using namespace ibroute::test;

namespace {
PortRoute from(const TwoLeaves& t, int host, uint16_t dlid) {
  RouteSet r = resolve_routes(t.f);
  return route_from_port(t.f, r, t.h[host], 1, dlid);
}
std::vector<Hop> hops(std::initializer_list<std::pair<int, int>> l) {
  std::vector<Hop> v;
  for (auto [n, p] : l) v.push_back({n, static_cast<uint8_t>(p)});
  return v;
}
}  // namespace

TEST(Routes, OneRowPerIngressAndDlid) {
  TwoLeaves t;
  RouteSet r = resolve_routes(t.f);
  EXPECT_EQ(r.ingress, (std::vector<int32_t>{t.l1, t.l2}));  // spines have no hosts
  EXPECT_EQ(r.dlids.size(), 12u);
  EXPECT_EQ(r.size(), 24u);
  RouteCounts c = count_routes(r);
  EXPECT_EQ(c.ok, 24u);
}

TEST(Routes, LmcOffsetChoosesTheSpine) {
  TwoLeaves t;
  PortRoute a = from(t, 0, 12);  // h1 -> h3 base LID: over S1
  EXPECT_EQ(a.status, RouteStatus::ok);
  EXPECT_EQ(a.hops, hops({{t.h[0], 1}, {t.l1, 3}, {t.s1, 2}, {t.l2, 1}}));
  PortRoute b = from(t, 0, 13);  // offset 1: over S2
  EXPECT_EQ(b.hops, hops({{t.h[0], 1}, {t.l1, 4}, {t.s2, 2}, {t.l2, 1}}));
}

TEST(Routes, SameLeafAndSelfAndSwitchLid) {
  TwoLeaves t;
  EXPECT_EQ(from(t, 0, 10).hops, hops({{t.h[0], 1}, {t.l1, 2}}));
  PortRoute self = from(t, 0, 9);
  EXPECT_EQ(self.status, RouteStatus::ok);
  EXPECT_EQ(self.hops, hops({{t.h[0], 0}}));
  PortRoute sw = from(t, 0, 4);  // to spine S2's LID: ends at S2 with port 0
  EXPECT_EQ(sw.status, RouteStatus::ok);
  EXPECT_EQ(sw.hops, hops({{t.h[0], 1}, {t.l1, 4}, {t.s2, 0}}));
}

TEST(Routes, DropWhenNoEntry) {
  TwoLeaves t;
  t.f.nodes[t.s1].lft[12] = kNoRoute;
  PortRoute r = from(t, 0, 12);
  EXPECT_EQ(r.status, RouteStatus::drop);
  EXPECT_EQ(r.hops.back(), (Hop{t.s1, kNoRoute}));
  t.f.nodes[t.s1].lft.resize(10);  // DLID beyond LinearFDBTop
  EXPECT_EQ(from(t, 0, 12).status, RouteStatus::drop);
}

TEST(Routes, LoopDetected) {
  TwoLeaves t;
  t.f.nodes[t.s1].lft[12] = 1;  // S1 sends h3's LID back down to L1, which sends it up again
  PortRoute r = from(t, 0, 12);
  EXPECT_EQ(r.status, RouteStatus::loop);
  EXPECT_EQ(r.hops, hops({{t.h[0], 1}, {t.l1, 3}, {t.s1, 1}}));
}

TEST(Routes, DeadEndAtPortDown) {
  TwoLeaves t;
  t.f.nodes[t.s1].ports[2].state = PortState::down;
  t.f.nodes[t.l2].ports[3].state = PortState::down;
  EXPECT_EQ(from(t, 0, 12).status, RouteStatus::dead_end);
  EXPECT_EQ(from(t, 0, 13).status, RouteStatus::ok);  // the other LID goes around over S2
}

TEST(Routes, UnknownWhenLftUnreadOrPeerUnexplored) {
  TwoLeaves t;
  t.f.nodes[t.s2].lft_read = false;
  EXPECT_EQ(from(t, 0, 13).status, RouteStatus::unknown);
  EXPECT_EQ(from(t, 0, 12).status, RouteStatus::ok);
  TwoLeaves u;  // the scan never reached S1: L1's port 3 is active with no peer
  u.f.nodes[u.l1].ports[3].peer_node = -1;
  EXPECT_EQ(from(u, 0, 12).status, RouteStatus::unknown);
}

TEST(Routes, MisdeliveredAtWrongCa) {
  TwoLeaves t;
  t.f.nodes[t.l2].lft[12] = 2;  // h3's LID goes out to h4
  EXPECT_EQ(from(t, 0, 12).status, RouteStatus::misdelivered);
}

TEST(Routes, SourceDownAndUnknownLid) {
  TwoLeaves t;
  t.f.nodes[t.h[0]].ports[1].state = PortState::down;
  EXPECT_EQ(from(t, 0, 12).status, RouteStatus::dead_end);
  TwoLeaves u;
  EXPECT_EQ(from(u, 0, 99).status, RouteStatus::drop);
}

TEST(Routes, StatusNamesRoundTrip) {
  for (int s = 0; s <= static_cast<int>(RouteStatus::unknown); ++s) {
    RouteStatus out;
    ASSERT_TRUE(route_status_from(to_string(static_cast<RouteStatus>(s)), out));
    EXPECT_EQ(static_cast<int>(out), s);
  }
  // A value from outside (a damaged row) has no name; a word that is none is refused, `out` kept.
  EXPECT_EQ(to_string(static_cast<RouteStatus>(9)), "?");
  RouteStatus kept = RouteStatus::loop;
  EXPECT_FALSE(route_status_from("Ok", kept));
  EXPECT_FALSE(route_status_from("", kept));
  EXPECT_EQ(kept, RouteStatus::loop);
}

TEST(Routes, EveryEnumNameHelperAgreesWithItsTable) {
  constexpr std::array<std::string_view, 3> names{"a", "b", "c"};
  enum class E { a, b, c };
  static_assert(enum_name(names, E::c) == "c");
  static_assert(enum_name(names, static_cast<E>(3)) == "?");
  E out = E::a;
  EXPECT_TRUE(enum_from(names, "b", out));
  EXPECT_EQ(out, E::b);
  EXPECT_FALSE(enum_from(names, "?", out));
  EXPECT_EQ(out, E::b);
}

namespace {
// Every (switch, DLID) answer of the table, compared with a walk through the LFTs.
void expect_table_equals_walks(const Fabric& f, unsigned threads) {
  LinkIndex links(f);
  std::vector<int32_t> switches;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch()) switches.push_back(static_cast<int32_t>(i));
  SwitchPaths table(f, links, switches, threads);
  ASSERT_GT(table.bytes(), 0u);
  PathFinder finder(f, links);
  std::vector<int32_t> walked, looked_up;
  size_t lids = 0;  // every LID some table or port has
  for (const Node& n : f.nodes) lids = std::max(lids, n.lft.size());
  for (int32_t sw : switches) {
    ASSERT_TRUE(table.has(sw));
    for (uint32_t lid = 0; lid < lids; ++lid) {
      walked.clear(), looked_up.assign(1, -7);  // append() keeps what is there
      const RouteStatus a = finder.from_switch(sw, static_cast<uint16_t>(lid), walked);
      const RouteStatus b = table.append(sw, static_cast<uint16_t>(lid), looked_up);
      ASSERT_EQ(a, b) << "switch " << f.nodes[sw].desc << " LID " << lid;
      walked.insert(walked.begin(), -7);
      ASSERT_EQ(walked, looked_up) << "switch " << f.nodes[sw].desc << " LID " << lid;
    }
  }
}
}  // namespace

TEST(SwitchPaths, EveryCellIsTheWalkedPathOnThreeLevelsAndBrokenTables) {
  FatTreeSpec t;
  t.levels = 3, t.hosts = 96, t.pods = 3, t.leaves = 4, t.hosts_per_leaf = 8, t.aggs = 4, t.cores = 8, t.lmc = 1,
  t.shuffle_names = true;
  Fabric f = build_fat_tree(t);
  expect_table_equals_walks(f, 1);
  expect_table_equals_walks(f, 2);
  TwoLeaves broken;  // a loop, a dropped LID and a port down: statuses other than ok are kept too
  broken.f.nodes[broken.s1].lft[12] = 1;
  broken.f.nodes[broken.s2].lft.resize(10);
  broken.f.nodes[broken.l2].ports[2].state = PortState::down;
  expect_table_equals_walks(broken.f, 2);
}

TEST(SwitchPaths, ATableBeyondItsMemoryIsNotBuiltAndAnswersByWalking) {
  TwoLeaves t;
  LinkIndex links(t.f);
  const std::vector<int32_t> switches{t.l1, t.l2, t.s1, t.s2};
  SwitchPaths small(t.f, links, switches, 1, 64);  // 64 bytes: not even one row
  EXPECT_EQ(small.bytes(), 0u);
  EXPECT_FALSE(small.has(t.l1));
  EXPECT_FALSE(SwitchPaths::may_fit(648, 40000, SwitchPaths::kMaxBytes / 4));
  EXPECT_TRUE(SwitchPaths::may_fit(648, 40000));  // 10 000 hosts, three levels, LMC 2
}
