#include "ibroute/fabric/text_import.hpp"

#include <gtest/gtest.h>

#include "fabrics.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/routes.hpp"

using namespace ibroute::fabric;

namespace {
// A leaf with two hosts (one at 1x) and a spine, in ibnetdiscover's own format.
const char* kTopo = R"(#
# Topology file: generated on Sat Nov 21 23:07:59 2026
#
vendid=0x0
devid=0x0
sysimgguid=0x200000
switchguid=0x200000(200000)
Switch	4 "S-0000000000200000"		# "leaf01" base port 0 lid 1 lmc 0
[1]	"H-0000000000100000"[1](100001) 		# "hostB" lid 4 4xEDR
[2]	"H-0000000000100002"[1](100003) 		# "hostA" lid 8 1xEDR
[3]	"S-0000000000200001"[1]		# "spine01" lid 2 4xEDR

vendid=0x0
devid=0x0
sysimgguid=0x200001
switchguid=0x200001(200001)
Switch	4 "S-0000000000200001"		# "spine01" enhanced port 0 lid 2 lmc 0
[1]	"S-0000000000200000"[3]		# "leaf01" lid 1 4xEDR

vendid=0x0
devid=0x0
sysimgguid=0x100000
caguid=0x100000
Ca	1 "H-0000000000100000"		# "hostB"
[1](100001) 	"S-0000000000200000"[1]		# lid 4 lmc 2 "leaf01" lid 1 4xEDR

vendid=0x0
devid=0x0
sysimgguid=0x100002
caguid=0x100002
Ca	1 "H-0000000000100002"		# "hostA"
[1](100003) 	"S-0000000000200000"[2]		# lid 8 lmc 2 "leaf01" lid 1 1xEDR
)";

std::string lfts() {
  std::string s =
      "Unicast lids [0x0-0xb] of switch DR path slid 0; dlid 0; 0 guid 0x0000000000200000 (leaf01):\n"
      "  Lid  Out   Destination\n       Port     Info \n"
      "0x0001 000 : (Switch portguid 0x0000000000200000: 'leaf01')\n"
      "0x0002 003 : (Switch portguid 0x0000000000200001: 'spine01')\n";
  for (int l = 4; l < 8; ++l) s += "0x000" + std::to_string(l) + " 001 : (path)\n";
  for (int l = 8; l < 12; ++l) s += "0x000" + std::string(1, "89ab"[l - 8]) + " 002 : (path)\n";
  s += "10 valid lids dumped \n";
  s += "Unicast lids [0x0-0xb] of switch Lid 2 guid 0x0000000000200001 (spine01):\n"
       "  Lid  Out   Destination\n       Port     Info \n"
       "0x0001 001 : (Switch portguid 0x0000000000200000: 'leaf01')\n"
       "0x0002 000 : (Switch portguid 0x0000000000200001: 'spine01')\n"
       "0x0004 001 : (Channel Adapter portguid 0x0000000000100001: 'hostB')\n"
       "3 valid lids dumped \n";
  return s;
}
}  // namespace

TEST(IbnetdiscoverParser, NodesPortsLidsLinks) {
  Fabric f = parse_ibnetdiscover(kTopo);
  ASSERT_EQ(f.nodes.size(), 4u);
  const Node& leaf = f.nodes[0];
  EXPECT_TRUE(leaf.is_switch());
  EXPECT_EQ(leaf.desc, "leaf01");
  EXPECT_EQ(leaf.guid, 0x200000u);
  EXPECT_EQ(leaf.num_ports(), 4);
  EXPECT_EQ(leaf.ports[0].base_lid, 1);
  EXPECT_EQ(f.nodes[1].ports[0].base_lid, 2);  // "enhanced port 0" form
  const Node& a = f.nodes[3];
  EXPECT_EQ(a.desc, "hostA");
  EXPECT_EQ(a.ports[1].guid, 0x100003u);
  EXPECT_EQ(a.ports[1].base_lid, 8);
  EXPECT_EQ(a.ports[1].lmc, 2);
  EXPECT_EQ(a.ports[1].width, 1);
  EXPECT_EQ(a.ports[1].speed, "EDR");
  EXPECT_EQ(a.ports[1].peer_node, 0);
  EXPECT_EQ(a.ports[1].peer_port, 2);
  EXPECT_EQ(leaf.ports[3].peer_node, 1);
  EXPECT_FALSE(leaf.ports[4].connected());
}

TEST(LftDumpParser, FillsTablesAndRoutesResolve) {
  Fabric f = parse_ibnetdiscover(kTopo);
  apply_lft_dump(f, lfts());
  EXPECT_TRUE(f.complete);
  EXPECT_EQ(f.nodes[0].lft.size(), 12u);
  EXPECT_EQ(f.nodes[0].lft[9], 2);
  EXPECT_EQ(f.nodes[0].lft[3], kNoRoute);
  RouteSet r = resolve_routes(f);
  PortRoute p = route_from_port(f, r, 2, 1, 9);  // hostB -> hostA +1
  EXPECT_EQ(p.status, RouteStatus::ok);
  EXPECT_EQ(p.hops.size(), 2u);
  PortRoute s = route_from_port(f, r, 3, 1, 2);  // hostA -> spine
  EXPECT_EQ(s.status, RouteStatus::ok);
  EXPECT_EQ(s.hops.back(), (Hop{1, 0}));
}

TEST(LftDumpParser, MissingSwitchMakesScanIncomplete) {
  Fabric f = parse_ibnetdiscover(kTopo);
  std::string only_leaf = lfts().substr(0, lfts().find("Unicast lids", 10));
  apply_lft_dump(f, only_leaf);
  EXPECT_FALSE(f.complete);
  ASSERT_EQ(f.problems.size(), 1u);
  EXPECT_EQ(f.problems[0].kind, "lft_missing");
  EXPECT_FALSE(f.nodes[1].lft_read);
}

TEST(LftDumpParser, RejectsBadInput) {
  auto fails = [](const std::string& text, const std::string& needle) {
    Fabric f = parse_ibnetdiscover(kTopo);
    ibroute::test::expect_input_error([&] { apply_lft_dump(f, text, "dump"); }, needle);
  };
  std::string good = lfts();
  std::string wrong_count = good;
  wrong_count.replace(wrong_count.find("10 valid"), 2, "11");
  fails(wrong_count, "says 11 LIDs but has 10");
  std::string other = good;
  other.replace(other.find("0x0000000000200001 (spine01)"), 18, "0x0000000000999999");
  fails(other, "not in the topology");
  std::string bad_port = good;
  bad_port.replace(bad_port.find("0x0004 001"), 10, "0x0004 009");
  fails(bad_port, "port 9 does not exist");
  fails("hello\n", "cannot parse");
  fails("", "no forwarding tables");
  fails("Unicast lids [0x0-0xffff] of switch Lid 1 guid 0x200000 (leaf01):\n", "top LID 0xffff out of range");
  std::string lid_too_big = good;
  lid_too_big.replace(lid_too_big.find("0x0004 001"), 6, "0x10004");
  fails(lid_too_big, "LID 0x10004 out of range");
}

// A table cut before its top LID (dump_lfts.sh files end so when ibroute fails): that switch is
// unread and the scan incomplete, the others are kept. One whose rows reach the top LID of its
// header's range is whole whatever follows (QLogic directors' dumps end every table with
// ibroute's error line): kept, the line noted, the scan complete.
TEST(LftDumpParser, CutTablesKeepTheirRowsAndNothingMore) {
  std::string good = lfts();
  const std::string error = "ibroute: iberror: [pid 77] main: linear forwarding table get failed\n";
  for (const std::string& text : {good.substr(0, good.find("10 valid")) + error + good.substr(good.find("Unicast", 10)),
                                  good.substr(0, good.find("10 valid")) + good.substr(good.find("Unicast", 10))}) {
    Fabric f = parse_ibnetdiscover(kTopo);
    apply_lft_dump(f, text, "dump");
    EXPECT_TRUE(f.complete);
    EXPECT_TRUE(f.nodes[0].lft_read);
    EXPECT_EQ(f.nodes[0].lft[0xb], 2);
    ASSERT_EQ(f.problems.size(), 1u);
    EXPECT_TRUE(f.problems[0].kind == "tool_message" || f.problems[0].kind == "lft_unterminated") << f.problems[0].kind;
    EXPECT_NE(f.problems[0].detail.find("kept"), std::string::npos) << f.problems[0].detail;
  }
  // Cut before its last rows (the next table starts, or the tool's error line): the rows read
  // stand, the LIDs after the last of them are unknown, those before known.
  for (const auto& [text, rows_to] :
       {std::pair{good.substr(0, good.find("0x000b")) + good.substr(good.find("Unicast", 10)), 0xbu},
        std::pair{good.substr(0, good.find("0x0009")) + error + good.substr(good.find("Unicast", 10)), 0x9u}}) {
    Fabric f = parse_ibnetdiscover(kTopo);
    apply_lft_dump(f, text, "dump");
    EXPECT_FALSE(f.complete);
    EXPECT_TRUE(f.nodes[0].lft_read);
    EXPECT_EQ(f.nodes[0].lft_rows_to, rows_to);
    EXPECT_TRUE(f.nodes[0].lft_known(rows_to - 1));
    EXPECT_FALSE(f.nodes[0].lft_known(rows_to));
    EXPECT_TRUE(f.nodes[1].lft_read);
    EXPECT_EQ(f.nodes[1].lft_rows_to, Node::kAllRows);
    ASSERT_FALSE(f.problems.empty());
    EXPECT_EQ(f.problems[0].kind, "lft_cut");
    EXPECT_NE(f.problems[0].detail.find("leaf01"), std::string::npos) << f.problems[0].detail;
    // hostB -> hostA's LIDs 8..b cross leaf01: below the cut a working route, from it on unknown.
    const RouteSet r = resolve_routes(f);
    for (uint16_t lid = 8; lid < 12; ++lid)
      EXPECT_EQ(route_from_port(f, r, 2, 1, lid).status, lid < rows_to ? RouteStatus::ok : RouteStatus::unknown) << lid;
  }
  // A table cut before its first row: unread.
  {
    Fabric f = parse_ibnetdiscover(kTopo);
    apply_lft_dump(f, good.substr(0, good.find("0x0001")) + error + good.substr(good.find("Unicast", 10)), "dump");
    EXPECT_FALSE(f.nodes[0].lft_read);
  }
  // Rows out of LID order: which LIDs are missing is not known, the table unread.
  {
    std::string swapped = good;
    const size_t a = swapped.find("0x0004 001"), b = swapped.find("0x0005 001");
    std::swap_ranges(swapped.begin() + static_cast<std::ptrdiff_t>(a),
                     swapped.begin() + static_cast<std::ptrdiff_t>(a + 6),
                     swapped.begin() + static_cast<std::ptrdiff_t>(b));
    Fabric f = parse_ibnetdiscover(kTopo);
    apply_lft_dump(f, swapped.substr(0, swapped.find("0x0009")) + error + swapped.substr(swapped.find("Unicast", 10)),
                   "dump");
    EXPECT_FALSE(f.nodes[0].lft_read);
  }
  // The last table stops mid-line: its rows before the broken line stand.
  Fabric f = parse_ibnetdiscover(kTopo);
  apply_lft_dump(f, good.substr(0, good.rfind("0x0004 0") + 8), "dump");
  EXPECT_FALSE(f.complete);
  EXPECT_TRUE(f.nodes[0].lft_read);
  EXPECT_TRUE(f.nodes[1].lft_read);
  EXPECT_EQ(f.nodes[1].lft_rows_to, 3u);
}

TEST(IbnetdiscoverParser, RejectsBadInput) {
  auto fails = [](const std::string& text, const std::string& needle) {
    ibroute::test::expect_input_error([&] { parse_ibnetdiscover(text, "topo"); }, needle);
  };
  fails("Switch 4 \"S-0000000000200000\"\n[9]\t\"S-1\"[1]\n", "port 9 out of range");
  fails("[1]\t\"S-1\"[1]\n", "outside a node record");
  fails("garbage\n", "topo:1: cannot parse");
  fails("", "no nodes");
  std::string twice = std::string(kTopo) + "\nSwitch\t4 \"S-0000000000200000\"\t\t# \"x\"\n";
  fails(twice, "defined twice");
  fails("Switch 4 \"S-0000000000200000\" # \"x\" base port 0 lid 65538 lmc 0\n", "LID 65538 out of range");
  fails("Switch 4 \"S-0000000000200000\" # \"x\" base port 0 lid 5 lmc 40\n", "LMC 40 out of range");
  fails("Switch 300 \"S-0000000000200000\"\n", "port count 300 out of range");
  // A 50 KB line is an error, not a stack overflow.
  fails("Switch 4 \"S-0000000000200000\"\n" + std::string(50000, '[') + "\n", "bad port line");
  fails("Switch 4 \"" + std::string(60000, 'x') + "\n", "without a quoted node id");
}

// A file cut off mid-record imports what it has and says so.
TEST(IbnetdiscoverParser, CutFileIsIncomplete) {
  std::string t = kTopo;
  Fabric f = parse_ibnetdiscover(t.substr(0, t.find("caguid=0x100002")), "topo");
  EXPECT_FALSE(f.complete);
  ASSERT_FALSE(f.problems.empty());
  EXPECT_EQ(f.problems[0].kind, "topology_cut");
  Fabric g = parse_ibnetdiscover(t.substr(0, t.rfind("lid 8 lmc 2") + 6), "topo");
  EXPECT_FALSE(g.complete);
}
