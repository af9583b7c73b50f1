#include <gtest/gtest.h>

#include "fabrics.hpp"
#include "ibroute/fabric/dot.hpp"

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
  EXPECT_NE(dot.find("n" + std::to_string(t.l2) + " -- n" + std::to_string(t.s2) + " [color=red, style=dashed, label=\"missing\""), std::string::npos);
  EXPECT_NE(dot.find("a suspect of the diagnosis"), std::string::npos);
}
