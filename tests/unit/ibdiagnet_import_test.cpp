// ibdiagnet's files (its labelled ibnetdiscover form, .lst, db_csv) and ibnetdiscover output as
// admins keep it (a terminal capture): hand-written fixtures in tests/fixtures, counted here by
// the test's own reading, and the three forms of one fabric compared field by field.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "fabrics.hpp"
#include "ibroute/fabric/text_import.hpp"

using namespace ibroute::fabric;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(IBROUTE_FIXTURES) + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

const Problem* problem(const Fabric& f, const std::string& kind) {
  for (const Problem& p : f.problems)
    if (p.kind == kind) return &p;
  return nullptr;
}

// What a fabric is, independent of node order: nodes, and links as unordered pairs of ends with
// their rate.
using NodeFacts = std::tuple<uint64_t, NodeType, std::string, uint64_t, int, uint16_t>;
using LinkFacts = std::tuple<uint64_t, int, uint64_t, int, int, std::string>;

std::set<NodeFacts> nodes_of(const Fabric& f) {
  std::set<NodeFacts> out;
  for (const Node& n : f.nodes) {
    const uint16_t lid = n.is_switch() ? n.ports[0].base_lid : n.ports.at(1).base_lid;
    out.emplace(n.guid, n.type, n.desc, n.sysimg_guid, n.num_ports(), lid);
  }
  return out;
}
std::set<LinkFacts> links_of(const Fabric& f) {
  std::set<LinkFacts> out;
  for (const Node& n : f.nodes)
    for (int p = 1; p <= n.num_ports(); ++p) {
      const Port& port = n.ports[p];
      if (!port.connected()) continue;
      const Node& m = f.nodes[port.peer_node];
      if (std::make_pair(n.guid, p) > std::make_pair(m.guid, int(port.peer_port))) continue;
      out.emplace(n.guid, p, m.guid, port.peer_port, port.width, port.speed);
    }
  return out;
}

constexpr uint64_t kLeaf = 0xfc6a1c0300aa0000, kSpine = 0xfc6a1c0300bb0000;

}  // namespace

TEST(IbdiagnetImport, LabelledIbnetdiscoverReadsLabelsAsLabelsAndGuidsAsGuids) {
  const Fabric f = parse_topology(fixture("ndr-lab.ibnetdiscover"), "ndr-lab.ibnetdiscover");
  ASSERT_EQ(f.nodes.size(), 6u);
  EXPECT_TRUE(f.complete);
  EXPECT_EQ(links_of(f).size(), 6u);
  for (const Node& n : f.nodes) {
    if (n.guid == 0x5c25730300010010) {  // "[1](B9D0F0/0/0/1)(5c25730300010011)": label, then the port GUID
      EXPECT_EQ(n.ports[1].guid, 0x5c25730300010011u);
      EXPECT_EQ(n.ports[1].base_lid, 10);
    }
    if (n.guid == 0xfc6a1c0300aa0008) {
      EXPECT_EQ(n.ports[1].guid, 0xfc6a1c0300aa0008u);  // "[1](1)(guid)"
    }
    if (n.guid == kLeaf) {
      EXPECT_EQ(n.ports[63].guid, kLeaf);  // "[63](1/32/1/1)": a switch port's GUID is the switch's
      EXPECT_EQ(n.ports[63].width, 2);
      EXPECT_EQ(n.ports[65].guid, kLeaf);  // "[65](65)": a label, though it reads as hex
    }
  }
}

TEST(IbdiagnetImport, TheThreeFormsOfOneFabricAreTheSameFabric) {
  const Fabric topo = parse_topology(fixture("ndr-lab.ibnetdiscover"), "ndr-lab.ibnetdiscover");
  const Fabric lst = parse_topology(fixture("ndr-lab.lst"), "ndr-lab.lst");
  const Fabric csv = parse_topology(fixture("ndr-lab.db_csv"), "ndr-lab.db_csv");
  EXPECT_EQ(nodes_of(lst), nodes_of(topo));
  EXPECT_EQ(nodes_of(csv), nodes_of(topo));
  EXPECT_EQ(links_of(lst), links_of(topo));
  EXPECT_EQ(links_of(csv), links_of(topo));
  // Counted by hand from the fixture: 2 switches, 4 CAs, 6 cables; the reduced links as written.
  const std::set<LinkFacts> links = links_of(csv);
  EXPECT_EQ(links.size(), 6u);
  EXPECT_TRUE(links.count({kLeaf, 61, kSpine, 61, 4, "HDR"}));
  EXPECT_TRUE(links.count({kLeaf, 63, kSpine, 63, 2, "NDR"}));
  // db_csv alone knows uncabled ports' states; .lst alone knows no LMC and says so.
  for (const Node& n : csv.nodes)
    if (n.guid == kLeaf) {
      EXPECT_EQ(n.ports[3].state, PortState::down);
    }
  ASSERT_NE(problem(lst, "no_lmc"), nullptr);
  EXPECT_EQ(problem(csv, "no_lmc"), nullptr);
}

TEST(IbdiagnetImport, ATerminalCaptureIsReadWithOneProblemPerOddity) {
  const Fabric f = parse_topology(fixture("terminal-capture.topo"), "capture.topo");
  ASSERT_EQ(f.nodes.size(), 5u);
  EXPECT_EQ(links_of(f).size(), 4u);
  for (const char* kind : {"file_crlf", "file_banner", "file_trailer", "file_glued_keyword", "unassigned_lid"})
    EXPECT_NE(problem(f, kind), nullptr) << kind;
  EXPECT_NE(problem(f, "file_banner")->detail.find("4 line(s)"), std::string::npos)
      << problem(f, "file_banner")->detail;
  EXPECT_NE(problem(f, "file_banner")->detail.find("capture.topo:1 "), std::string::npos);
  EXPECT_NE(problem(f, "file_trailer")->detail.find("1 line(s)"), std::string::npos);
  EXPECT_NE(problem(f, "file_glued_keyword")->detail.find("5 node record(s)"), std::string::npos);
  EXPECT_NE(problem(f, "unassigned_lid")->detail.find("1 port(s)"), std::string::npos);
  for (const Node& n : f.nodes)
    if (n.guid == 0x1070fd0300cc0020) {
      EXPECT_EQ(n.ports[1].base_lid, 0);  // 65535: no LID, never 65535
    }
  EXPECT_TRUE(f.complete);  // nothing is missing: the oddities are how the file was kept
}

TEST(IbdiagnetImport, WhatIsNotABannerOrPromptStaysAnError) {
  const std::string capture = fixture("terminal-capture.topo");
  // Garbage between records: an error naming its line, whatever follows.
  std::string mid = capture;
  mid.insert(mid.find("vendid=0x2c9\r\ndevid=0xd2f0\r\nsysimgguid=0x1070fd0300bb0000"), "some words\r\n");
  ibroute::test::expect_input_error([&] { parse_topology(mid, "t"); }, "t:21: cannot parse: some words");
  // A line after the last record that starts like a record but is broken.
  ibroute::test::expect_input_error([&] { parse_topology(capture + "\r\n[2](x)\t\"S-1\"[1]\r\n", "t"); }, "t:50:");
  // A banner line that only begins like a keyword ("Cannot …", "Rtt …") is a banner still.
  const Fabric f = parse_topology("Cannot resolve host: ufm-2\r\nRtt 0.2 ms\r\n" + capture, "t");
  EXPECT_NE(problem(f, "file_banner")->detail.find("6 line(s)"), std::string::npos)
      << problem(f, "file_banner")->detail;
  // A LID out of range that is not 65535.
  std::string bad = capture;
  bad.replace(bad.find("lid 9 lmc 0"), 5, "lid 65534");
  ibroute::test::expect_input_error([&] { parse_topology(bad, "t"); }, "LID 65534 out of range");
}

TEST(IbdiagnetImport, BadLstAndCsvNameTheFileAndLine) {
  const std::string lst = fixture("ndr-lab.lst");
  std::string l = lst;
  l.replace(l.find("LID:000c"), 8, "LID:c000");
  ibroute::test::expect_input_error([&] { parse_topology(l, "x.lst"); }, "x.lst:7: LID c000 out of range");
  l = lst;
  l.replace(l.find("PN:02"), 5, "PN:42");
  ibroute::test::expect_input_error([&] { parse_topology(l, "x.lst"); }, "x.lst:7: port 66 of a node with 65 ports");
  ibroute::test::expect_input_error([&] { parse_topology("{ CA Ports:01 NodeGUID:1 LID:1 PN:01 }\n", "x.lst"); },
                                    "x.lst:1: a link end in braces expected");

  const std::string csv = fixture("ndr-lab.db_csv");
  std::string c = csv;
  c.replace(c.find(",65,2,1,1"), 9, ",65,2,1");
  ibroute::test::expect_input_error([&] { parse_topology(c, "x.db_csv"); },
                                    "x.db_csv:13: 12 fields where NODES's header has 13");
  c = csv;
  c.replace(c.find("NodeGuid1"), 9, "NodeGuidA");
  ibroute::test::expect_input_error([&] { parse_topology(c, "x.db_csv"); }, "LINKS has no column NodeGuid1");
  c = csv;
  c.replace(c.find(",61,0xfc6a1c0300bb0000,61"), 25, ",66,0xfc6a1c0300bb0000,61");
  ibroute::test::expect_input_error([&] { parse_topology(c, "x.db_csv"); }, "PortNum1 66 out of range (1..65)");
  c = csv;
  c.replace(c.find("\"gpu-b mlx5_0\""), 14, "\"gpu-b mlx5_0");
  ibroute::test::expect_input_error([&] { parse_topology(c, "x.db_csv"); }, "a quote that does not close");
}

TEST(IbdiagnetImport, ACutDatabaseIsIncompleteAndUnassignedLidsAreNoLids) {
  std::string csv = fixture("ndr-lab.db_csv");
  const Fabric cut = parse_topology(csv.substr(0, csv.find("0xfc6a1c0300bb0000,63,0xfc6a")), "cut.db_csv");
  EXPECT_FALSE(cut.complete);
  ASSERT_NE(problem(cut, "topology_cut"), nullptr);
  EXPECT_NE(problem(cut, "topology_cut")->detail.find("LINKS has no END_ line"), std::string::npos);
  EXPECT_EQ(links_of(cut).size(), 5u);

  csv.replace(csv.find(",0x5c25730300010031,1,0x0000000000000000,12,"), 44,
              ",0x5c25730300010031,1,0x0000000000000000,65535,");
  const Fabric f = parse_topology(csv, "x.db_csv");
  ASSERT_NE(problem(f, "unassigned_lid"), nullptr);
  for (const Node& n : f.nodes)
    if (n.guid == 0x5c25730300010030) {
      EXPECT_EQ(n.ports[1].base_lid, 0);
    }
}

// PM_INFO as a counters snapshot: the Extended columns where present (hex or decimal), a port
// whose counters say N/A listed as unanswered, never read as 0; a run without PM_INFO has none.
TEST(IbdiagnetImport, PmInfoIsACountersSnapshot) {
  const std::string csv = fixture("ndr-lab.db_csv");
  const Fabric f = parse_topology(csv, "x.db_csv");
  const auto snap = parse_ibdiagnet_counters(csv, f, "x.db_csv");
  ASSERT_TRUE(snap.has_value());
  ASSERT_EQ(snap->ports.size(), 2u);
  const PortSample& p = snap->ports[0];
  EXPECT_EQ(f.nodes[p.node].guid, kLeaf);
  EXPECT_EQ(p.port, 1);
  EXPECT_TRUE(p.extended);
  EXPECT_EQ(p.v[static_cast<size_t>(Counter::xmit_data)],
            0x12a05f2000u);  // PortXmitDataExtended, not the saturated 32 bits
  EXPECT_EQ(p.v[static_cast<size_t>(Counter::rcv_data)], 80000000000u);
  EXPECT_EQ(p.v[static_cast<size_t>(Counter::xmit_wait)], 77u);
  EXPECT_EQ(p.v[static_cast<size_t>(Counter::symbol_errors)], 3u);
  EXPECT_EQ(p.v[static_cast<size_t>(Counter::link_downed)], 1u);
  ASSERT_EQ(snap->unanswered.size(), 1u);
  EXPECT_EQ(f.nodes[snap->unanswered[0].first].guid, 0x5c25730300010010u);

  std::string cut = csv.substr(0, csv.find("START_PM_INFO")) + csv.substr(csv.find("START_LINKS"));
  EXPECT_FALSE(parse_ibdiagnet_counters(cut, parse_topology(cut, "y"), "y").has_value());
  std::string bad = csv;
  bad.replace(bad.find(",77,"), 4, ",4294967296,");
  ibroute::test::expect_input_error([&] { parse_ibdiagnet_counters(bad, f, "x.db_csv"); },
                                    "PortXmitWait 4294967296 does not fit its 32 bits");
}
