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
