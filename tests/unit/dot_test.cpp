#include "ibroute/fabric/dot.hpp"

#include <gtest/gtest.h>

#include <set>

#include "fabrics.hpp"

using namespace ibroute::test;

TEST(Dot, FoldsHostsAndMarksProblems) {
  TwoLeaves t;
  t.f.nodes[t.l1].ports[4].width = 1;                // slow link: orange, labelled
  t.f.nodes[t.l2].ports[3].state = PortState::down;  // down: red dashed
  t.f.nodes[t.s2].lft_read = false;                  // unread LFT: red box
  std::string dot = to_dot(t.f);
  EXPECT_NE(dot.find("\"2 hosts\""), std::string::npos);
  EXPECT_EQ(dot.find("\"h1\""), std::string::npos);
  EXPECT_NE(dot.find("label=\"1xEDR\""), std::string::npos);
  EXPECT_NE(dot.find("style=dashed"), std::string::npos);
  EXPECT_NE(dot.find("color=red, penwidth=2"), std::string::npos);
  std::string all = to_dot(t.f, {.fold_hosts = false});
  EXPECT_NE(all.find("\"h1\""), std::string::npos);
}

TEST(Dot, RendersSvgThroughGraphviz) {
  TwoLeaves t;
  std::string svg = render_svg(to_dot(t.f));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("S1"), std::string::npos);
}

// With loads (accept's picture) a slow link stays orange, a missing cable is drawn, and the
// diagnosis' suspects stand out.
TEST(Dot, LoadedPicturesKeepSlowMissingAndSuspectLinks) {
  TwoLeaves t;
  t.f.nodes[t.l1].ports[4].width = 1;  // L1[4] - S2: 1x
  DotOptions d;
  d.load[{t.l1, 3}] = {1, 2};
  d.load[{t.l1, 4}] = {1, 2};
  d.missing.emplace_back(t.l2, t.s2);
  d.suspects.insert({t.l1, 3});
  const std::string dot = to_dot(t.f, d);
  auto edge = [&](int a, int b) {
    const std::string head = "n" + std::to_string(a) + " -- n" + std::to_string(b) + " [";
    const size_t at = dot.find(head);
    return at == std::string::npos ? std::string() : dot.substr(at, dot.find('\n', at) - at);
  };
  EXPECT_NE(edge(t.l1, t.s2).find("color=\"#e07000\""), std::string::npos) << edge(t.l1, t.s2);
  EXPECT_NE(edge(t.l1, t.s1).find("color=\"#8e24aa\", penwidth=5"), std::string::npos) << edge(t.l1, t.s1);
  EXPECT_NE(dot.find("n" + std::to_string(t.l2) + " -- n" + std::to_string(t.s2) +
                     " [color=red, style=dashed, label=\"missing\""),
            std::string::npos);
  EXPECT_NE(dot.find("a suspect of the diagnosis"), std::string::npos);
}

// Real fabrics' names: all alike but for a GUID, a chassis ASIC at the end, or nothing at all.
TEST(PictureLabels, KeepWhatSetsNamesApartAndStayDistinct) {
  const std::vector<std::string> edges = {"Infiniscale-IV Mellanox Technologies (0x0002c90200000123)",
                                          "Infiniscale-IV Mellanox Technologies (0x0002c90200000456)",
                                          "Infiniscale-IV Mellanox Technologies (0x0002c9020000a789)"};
  const auto e = picture_labels(edges, 34);
  for (const std::string& l : e) EXPECT_LE(l.size(), 34u + 2) << l;  // the ellipsis is 3 bytes, one character
  EXPECT_EQ(std::set<std::string>(e.begin(), e.end()).size(), 3u);
  EXPECT_TRUE(e[0].starts_with("Infiniscale-IV")) << e[0];
  EXPECT_TRUE(
      e[0].ends_with("\xE2\x80\xA6"
                     "0000123)"))
      << e[0];
  EXPECT_TRUE(e[2].ends_with("000a789)")) << e[2];

  const std::vector<std::string> qlogic = {"QLogic 12800-180 GUID=0x00066a00e8001310 L112",
                                           "QLogic 12800-180 GUID=0x00066a00e8001310 L113",
                                           "QLogic 12800-180 GUID=0x00066a00e8001310 S201"};
  const auto q = picture_labels(qlogic, 28);
  EXPECT_TRUE(q[0].ends_with("\xE2\x80\xA6L112")) << q[0];  // the ASIC whole after the ellipsis
  EXPECT_TRUE(q[2].ends_with("\xE2\x80\xA6S201")) << q[2];
  EXPECT_TRUE(q[1].starts_with("QLogic 12800-180 GUID=")) << q[1];

  // Short names stay as they are; names that are equal are numbered, within the room.
  const auto s = picture_labels({"MF0;director1:IS5600/L05/U1", "MF0;director1:IS5600/S12/U1"}, 28);
  EXPECT_EQ(s[0], "MF0;director1:IS5600/L05/U1");
  const auto same =
      picture_labels({"MT25408 ConnectX Mellanox Technologies", "MT25408 ConnectX Mellanox Technologies", "x"}, 20);
  EXPECT_NE(same[0], same[1]);
  EXPECT_TRUE(same[1].ends_with(" #2")) << same[1];
  EXPECT_EQ(same[2], "x");
  EXPECT_TRUE(picture_labels({}, 10).empty());
}
