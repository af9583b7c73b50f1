#include <gtest/gtest.h>

#include <atomic>

#include "fabrics.hpp"
#include "ibroute/fabric/parallel.hpp"

using namespace ibroute::test;

TEST(LidMap, EveryLidOfEveryPortWithLmc) {
  TwoLeaves t;
  LidMap m(t.f);
  // 4 switch LIDs + 4 hosts x 2 LIDs.
  EXPECT_EQ(m.lids().size(), 12u);
  ASSERT_NE(m.owner(9), nullptr);
  EXPECT_EQ(m.owner(9)->node, t.h[0]);
  EXPECT_EQ(m.owner(9)->port, 1);
  EXPECT_EQ(m.owner(3)->node, t.s1);
  EXPECT_EQ(m.owner(3)->port, 0);
  EXPECT_EQ(m.owner(7), nullptr);
  EXPECT_EQ(m.owner(60000), nullptr);
  EXPECT_TRUE(m.conflicts().empty());
}

TEST(LidMap, ReportsConflicts) {
  TwoLeaves t;
  set_lid(t.f, t.h[1], 1, 9, 0);  // h2 claims h1's second LID
  LidMap m(t.f);
  ASSERT_EQ(m.conflicts().size(), 1u);
  EXPECT_EQ(m.conflicts()[0].lid, 9);
  EXPECT_EQ(m.owner(9)->node, t.h[0]);  // first claimant keeps it
}

TEST(Model, WidthSpeed) {
  auto ws = parse_width_speed("4xEDR");
  ASSERT_TRUE(ws);
  EXPECT_EQ(ws->width, 4);
  EXPECT_EQ(ws->speed, "EDR");
  EXPECT_EQ(parse_width_speed("12xFDR10")->width, 12);
  EXPECT_FALSE(parse_width_speed("4xFOO"));
  EXPECT_FALSE(parse_width_speed("xEDR"));
  EXPECT_FALSE(parse_width_speed("40xEDR"));
  EXPECT_EQ(format_width_speed(1, "QDR"), "1xQDR");
  EXPECT_DOUBLE_EQ(lane_gbps("EDR"), 25.0);
  EXPECT_EQ(lane_gbps("nope"), 0);
}

TEST(Model, GuidsAndLookups) {
  TwoLeaves t;
  EXPECT_EQ(guid_hex(0x2c90200421930ULL), "0x0002c90200421930");
  EXPECT_EQ(t.f.find_guid(0x3000), t.s1);
  EXPECT_EQ(t.f.find_guid(0x101), t.h[0]);  // a port GUID finds its node
  EXPECT_FALSE(t.f.find_guid(0x9999));
  EXPECT_EQ(t.f.max_lmc(), 1);
  EXPECT_EQ(to_string(NodeType::sw), "switch");
  EXPECT_EQ(node_type_from("ca"), NodeType::ca);
  EXPECT_EQ(port_state_from("active"), PortState::active);
}

TEST(RunParallel, EveryJobRunsAndTheFirstThrowReachesTheCaller) {
  std::vector<int> ran(4, 0);
  ibroute::fabric::run_parallel(4, [&](unsigned t) { ran[t] = 1; });
  EXPECT_EQ(ran, std::vector<int>(4, 1));
  std::atomic<int> ended{0};
  EXPECT_THROW(ibroute::fabric::run_parallel(3,
                                             [&](unsigned t) {
                                               ++ended;
                                               if (t == 2) throw std::bad_alloc();
                                             }),
               std::bad_alloc);
  EXPECT_EQ(ended.load(), 3) << "every job ended before the throw reached the caller";
}
