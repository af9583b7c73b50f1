// Files of the kinds admins keep, in the variants real clusters produce (written for this project
// from the formats' grammar: tests/fixtures/): mixed vendors, descriptions with '=' and '#',
// SHARP aggregation nodes, routers, loopback cables, XDR and 2x links, unknown rates, progress
// and MAD error lines, a director chassis with edge switches.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ibroute/fabric/routes.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/text_import.hpp"

using namespace ibroute::fabric;

namespace {
std::string fixture(const std::string& name) {
  std::ifstream in(std::string(IBROUTE_FIXTURES) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}
int node_by_guid(const Fabric& f, uint64_t g) {
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].guid == g) return static_cast<int>(i);
  ADD_FAILURE() << "no node " << guid_hex(g);
  return 0;
}
bool has_problem(const Fabric& f, const std::string& kind, const std::string& needle = "") {
  for (const Problem& p : f.problems)
    if (p.kind == kind && p.detail.find(needle) != std::string::npos) return true;
  return false;
}
constexpr uint64_t kQLogic = 0x00066a00e3000100, kVoltaire = 0x0008f10400411a00;
}  // namespace

TEST(RealDumps, MixedVendorsTopology) {
  Fabric f = parse_topology(fixture("mixed-vendors.topo"), "mixed");
  ASSERT_EQ(f.nodes.size(), 6u);
  const Node& ql = f.nodes[node_by_guid(f, kQLogic)];
  const Node& vo = f.nodes[node_by_guid(f, kVoltaire)];
  EXPECT_EQ(ql.desc, "QLogic 12800-180 GUID=0x00066a00e3000100 L112");  // '=' in a description
  EXPECT_EQ(vo.desc, "ISR9024D-M Voltaire # lab-a");                    // '#' in a description
  EXPECT_EQ(ql.ports[0].base_lid, 2);
  EXPECT_EQ(ql.sysimg_guid, kQLogic);
  // The loopback cable: port 20 to port 21 of the same switch.
  EXPECT_EQ(ql.ports[20].peer_node, node_by_guid(f, kQLogic));
  EXPECT_EQ(ql.ports[20].peer_port, 21);
  // Rates: XDR, 2x, an -f suffix, and unknown ones reported rather than guessed.
  EXPECT_EQ(ql.ports[13].width, 4);
  EXPECT_EQ(ql.ports[13].speed, "XDR");
  EXPECT_EQ(lane_gbps("XDR"), 200.0);
  EXPECT_EQ(ql.ports[14].width, 2);
  EXPECT_EQ(ql.ports[14].speed, "HDR");
  EXPECT_EQ(ql.ports[1].speed, "EDR");
  EXPECT_EQ(ql.ports[15].width, 0);
  EXPECT_EQ(vo.ports[15].width, 4);
  EXPECT_EQ(vo.ports[15].speed, "");
  EXPECT_TRUE(has_problem(f, "unknown_rate", "2 port(s)"));
  // Kinds: the aggregation node and the router are not hosts.
  int hosts = 0, aggregation = 0, routers = 0;
  for (const Node& n : f.nodes) {
    hosts += node_kind(n) == NodeKind::host;
    aggregation += node_kind(n) == NodeKind::aggregation;
    routers += node_kind(n) == NodeKind::router;
  }
  EXPECT_EQ(hosts, 2);
  EXPECT_EQ(aggregation, 1);
  EXPECT_EQ(routers, 1);
  const Node& n01 = f.nodes[node_by_guid(f, 0x0002c90300a10010)];
  EXPECT_EQ(n01.ports[1].base_lid, 10);
  EXPECT_EQ(n01.ports[1].lmc, 1);
  // MAD errors are problems that make the scan incomplete; -s progress lines are skipped.
  EXPECT_FALSE(f.complete);
  EXPECT_TRUE(has_problem(f, "tool_message", "bad status 110"));
  EXPECT_TRUE(has_problem(f, "tool_message", "ibwarn"));
  EXPECT_FALSE(has_problem(f, "tool_message", "DR path slid 0; dlid 0; 0 ->"));

  FabricStructure s = analyze_structure(f);
  EXPECT_EQ(s.hosts.size(), 2u);
  EXPECT_EQ(s.not_hosts.size(), 2u);
  ASSERT_EQ(s.loopbacks.size(), 1u);  // once, not twice
  for (const LinkRef& l : s.slow) EXPECT_NE(l.a_node, l.b_node) << "a loopback listed as a slow link";
}

TEST(RealDumps, TablesFromIbrouteAndFdbsAgree) {
  Fabric a = parse_topology(fixture("mixed-vendors.topo"), "mixed");
  Fabric b = a;
  apply_lft_dump(a, fixture("mixed-vendors.lfts"), "lfts");
  apply_lft_dump(b, fixture("mixed-vendors.fdbs"), "fdbs");
  int ql = node_by_guid(a, kQLogic), vo = node_by_guid(a, kVoltaire);
  for (int sw : {ql, vo}) {
    ASSERT_TRUE(a.nodes[sw].lft_read);
    ASSERT_TRUE(b.nodes[sw].lft_read);
    EXPECT_EQ(a.nodes[sw].lft, b.nodes[sw].lft) << a.nodes[sw].desc;
  }
  EXPECT_EQ(a.nodes[ql].lft[0x0d], 14);
  EXPECT_EQ(b.nodes[ql].lft[1], kNoRoute);  // UNREACHABLE
  RouteSet r = resolve_routes(a);
  int n01 = node_by_guid(a, 0x0002c90300a10010);
  for (uint16_t dlid : {12, 13, 20, 22}) {
    PortRoute p = route_from_port(a, r, n01, 1, dlid);
    EXPECT_EQ(p.status, RouteStatus::ok) << dlid;
  }
}

TEST(RealDumps, PortsReport) {
  Fabric f = parse_topology(fixture("mixed-vendors.ports"), "ports");
  ASSERT_EQ(f.nodes.size(), 6u);
  const Node& ql = f.nodes[node_by_guid(f, kQLogic)];
  EXPECT_EQ(ql.desc, "QLogic 12800-180 GUID=0x00066a00e3000100 L112");
  EXPECT_EQ(ql.ports[0].base_lid, 2);
  EXPECT_EQ(ql.ports[13].speed, "XDR");
  EXPECT_EQ(ql.ports[22].state, PortState::down);
  EXPECT_FALSE(ql.ports[22].connected());
  EXPECT_EQ(ql.ports[20].peer_port, 21);
  const Node& rt = f.nodes[node_by_guid(f, 0x0002c90300b00001)];
  EXPECT_EQ(rt.type, NodeType::router);
  EXPECT_EQ(rt.ports[1].base_lid, 22);
  EXPECT_TRUE(has_problem(f, "no_lmc"));
}

// Gatherers keep `ibnetdiscover -s -v -p`: the discovery's progress lines ("DR path slid 0; dlid 0;
// 0,1 -> new Switch {...} portnum 0 lid 0-0 \"\"", by the thousand) before the ports report. They are
// skipped, and the report is the same fabric.
TEST(RealDumps, PortsReportAfterProgressLines) {
  const std::string report = fixture("mixed-vendors.ports");
  std::string progress;
  for (int i = 0; i < 3000; ++i)
    progress += "DR path slid 0; dlid 0; 0,1," + std::to_string(i % 36 + 1) +
                " -> new Channel Adapter {00000000001000" + std::to_string(10 + i % 80) + "} portnum 1 lid 0-0 \"\"\n";
  progress += "DR path slid 0; dlid 0; 0,1 -> new Switch {0002c90300a00000} portnum 0 lid 0-0 \"\"\n";
  const Fabric plain = parse_topology(report, "ports");
  const Fabric with = parse_topology(progress + report, "ports-s");
  ASSERT_EQ(with.nodes.size(), plain.nodes.size());
  for (size_t i = 0; i < plain.nodes.size(); ++i) {
    EXPECT_EQ(with.nodes[i].guid, plain.nodes[i].guid);
    EXPECT_EQ(with.nodes[i].desc, plain.nodes[i].desc);
    ASSERT_EQ(with.nodes[i].ports.size(), plain.nodes[i].ports.size());
    for (size_t p = 0; p < plain.nodes[i].ports.size(); ++p) {
      EXPECT_EQ(with.nodes[i].ports[p].peer_node, plain.nodes[i].ports[p].peer_node);
      EXPECT_EQ(with.nodes[i].ports[p].peer_port, plain.nodes[i].ports[p].peer_port);
    }
  }
}

TEST(RealDumps, NodeNameMapNamesAndRepeatedDescriptions) {
  NodeNameMap m = parse_node_name_map(fixture("site.map"), "site.map");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].second, "volt-a");
  Fabric f = parse_topology(fixture("mixed-vendors.topo"), "mixed");
  assign_display_names(f, m);
  const Node& ql = f.nodes[node_by_guid(f, kQLogic)];
  EXPECT_EQ(ql.desc, "core-ql-1");
  EXPECT_EQ(ql.reported_desc(), "QLogic 12800-180 GUID=0x00066a00e3000100 L112");

  Fabric d = parse_topology(fixture("director-grouped.topo"), "director");
  assign_display_names(d, {});
  std::set<std::string> names;
  int edges = 0;
  for (const Node& n : d.nodes)
    if (n.is_switch()) {
      EXPECT_TRUE(names.insert(n.desc).second) << "repeated name " << n.desc;
      edges += n.reported_desc() == "Infiniscale-IV Mellanox Technologies";
    }
  EXPECT_EQ(edges, 3);
}

TEST(RealDumps, DirectorWithEdgeSwitchesHasThreeLevels) {
  Fabric f = parse_topology(fixture("director-grouped.topo"), "director");
  FabricStructure s = analyze_structure(f);
  EXPECT_EQ(s.levels, 3);
  ASSERT_EQ(s.chassis.size(), 1u);
  EXPECT_EQ(s.chassis[0].model, "IS5600");
  EXPECT_EQ(s.chassis[0].line_asics, 3);
  EXPECT_EQ(s.chassis[0].spine_asics, 2);
  EXPECT_EQ(s.standalone_switches, 3);
  EXPECT_EQ(describe_chassis(s), "1 IS5600 director (5 ASICs) + 3 edge switches, 3 switch levels");
  EXPECT_EQ(s.leaves.size(), 3u);       // the edge switches
  EXPECT_EQ(s.top.size(), 2u);          // the spine ASICs
  EXPECT_EQ(s.hosts_above.size(), 6u);  // two hosts on each line card
  EXPECT_TRUE(s.tree);
  ASSERT_EQ(s.per_level.size(), 3u);
  EXPECT_EQ(s.per_level[0].hosts, 72);
  EXPECT_EQ(s.per_level[1].hosts, 6);
}
