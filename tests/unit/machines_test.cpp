// Machines and rails from the hosts' descriptions: what names a machine, what does not, the
// rails in device order, and the counts on the ndr-lab fixture (counted by hand from the file).
#include "ibroute/fabric/machines.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ibroute/fabric/text_import.hpp"

using namespace ibroute::fabric;

namespace {
Fabric hosts(const std::vector<std::string>& descs) {
  Fabric f;
  for (size_t i = 0; i < descs.size(); ++i) {
    Node n;
    n.guid = 0x100 + i;
    n.desc = descs[i];
    n.ports.resize(2);
    f.nodes.push_back(n);
  }
  return f;
}
}  // namespace

TEST(Machines, WhatNamesAMachine) {
  std::string m, d;
  EXPECT_TRUE(split_machine_name("dgx-a01 mlx5_7", m, d));
  EXPECT_EQ(m, "dgx-a01");
  EXPECT_EQ(d, "mlx5_7");
  EXPECT_TRUE(split_machine_name("node0270 HCA-1", m, d));
  EXPECT_TRUE(split_machine_name("login02", m, d));  // one word: a name from a node-name map
  EXPECT_EQ(d, "");
  EXPECT_FALSE(split_machine_name("MT4129 ConnectX7   Mellanox Technologies", m, d));  // the adapter's default
  EXPECT_FALSE(split_machine_name("localhost HCA-6", m, d));
  EXPECT_FALSE(split_machine_name("node1 HCA", m, d));  // a device name ends in its number
  EXPECT_FALSE(split_machine_name("", m, d));
}

TEST(Machines, RailsInDeviceOrderAndUnnamedHcasApart) {
  const Fabric f = hosts({"b HCA-10", "a mlx5_1", "b HCA-2", "a mlx5_0", "MT4129 ConnectX7   Mellanox Technologies",
                          "localhost HCA-1", "c HCA-1"});
  const Machines m = group_machines(f);
  ASSERT_EQ(m.machines.size(), 3u);
  EXPECT_EQ(m.machines[0].name, "a");
  EXPECT_EQ(m.machines[0].hcas, (std::vector<int32_t>{3, 1}));  // mlx5_0 is rail 0
  EXPECT_EQ(m.machines[1].hcas, (std::vector<int32_t>{2, 0}));  // HCA-2 before HCA-10
  EXPECT_EQ(m.rail_of[0], 1);
  EXPECT_EQ(m.unnamed, (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(m.max_rails(), 2);
  // The same description twice tells no machine apart.
  const Machines twice = group_machines(hosts({"h1", "h1", "n1 HCA-1", "n1 HCA-1", "n2 HCA-1"}));
  EXPECT_EQ(twice.machines.size(), 1u);
  EXPECT_EQ(twice.unnamed, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(m.machines_by_hcas(), (std::vector<int>{1, 2}));
  EXPECT_EQ(
      describe_machines(f, m),
      "3 machines (2 rails at most): 2 with 2 HCAs, 1 with 1 HCA; 2 HCAs name no machine (e.g. 'MT4129 ConnectX7   "
      "Mellanox Technologies')");
}

TEST(Machines, TheNdrLabFixture) {
  std::ifstream in(std::string(IBROUTE_FIXTURES) + "/ndr-lab.db_csv");
  std::stringstream ss;
  ss << in.rdbuf();
  const Fabric f = parse_topology(ss.str(), "ndr-lab.db_csv");
  const Machines m = group_machines(f);
  // gpu-a (mlx5_0, mlx5_1) and gpu-b (mlx5_0); the SHARP node is no host.
  ASSERT_EQ(m.machines.size(), 2u);
  EXPECT_EQ(m.machines[0].name, "gpu-a");
  EXPECT_EQ(m.machines[0].hcas.size(), 2u);
  EXPECT_TRUE(m.unnamed.empty());
  EXPECT_EQ(describe_machines(f, m), "2 machines (2 rails at most): 1 with 2 HCAs, 1 with 1 HCA");
}

// Rail groups from the cabling alone: machines on one set of switches, one HCA to each; the rail
// order most of them follow, the others counted as crossed; a set that shares a switch with
// another set is no group.
TEST(Machines, RailGroupsFromTheCabling) {
  Fabric f = hosts({"m1 mlx5_0", "m1 mlx5_1", "m2 mlx5_0", "m2 mlx5_1", "m3 mlx5_0", "m3 mlx5_1", "x1 mlx5_0",
                    "x1 mlx5_1", "x2 mlx5_0", "x2 mlx5_1", "y1 mlx5_0", "y1 mlx5_1", "y2 mlx5_0", "y2 mlx5_1"});
  for (int s = 0; s < 5; ++s) {
    Node sw;
    sw.type = NodeType::sw;
    sw.guid = 0x900 + s;
    sw.ports.resize(9);
    f.nodes.push_back(sw);
  }
  const int s0 = 14;
  std::vector<int> port(5, 1);
  auto cable = [&](int hca, int sw) { f.link(hca, 1, s0 + sw, port[sw]++); };
  cable(0, 0), cable(1, 1), cable(2, 0), cable(3, 1), cable(4, 1), cable(5, 0);  // m3 crossed
  cable(6, 2), cable(7, 3), cable(8, 2), cable(9, 3);                            // x: switches 2, 3
  cable(10, 3), cable(11, 4), cable(12, 3), cable(13, 4);                        // y shares switch 3 with x
  const Machines m = group_machines(f);
  const std::vector<RailGroup> g = rail_groups(f, m);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].leaves, (std::vector<int32_t>{s0, s0 + 1}));
  EXPECT_EQ(g[0].machines.size(), 3u);
  EXPECT_EQ(g[0].crossed, 1);
}
