// The cabling checked against a plan (cabling.hpp): the fabric's own cables are all as planned;
// a plan with two cables' far ends exchanged, one cable at another port, one cable the fabric
// lacks and one node it does not have gives exactly those findings, each by both ends.
#include "ibroute/fabric/cabling.hpp"

#include <gtest/gtest.h>

#include <set>

#include "ibroute/fabric/synthetic.hpp"

using namespace ibroute::fabric;

namespace {

Fabric tree() {
  FatTreeSpec t;
  t.leaves = 3, t.hosts_per_leaf = 3, t.uplinks = 2, t.spines = 2, t.hosts = 7, t.shuffle_names = true,
  t.seed = 9;  // a free port or two
  return build_fat_tree(t);
}

std::string text(const Cable& c) {
  return c.a.node + "[" + std::to_string(c.a.port) + "]-" + c.b.node + "[" + std::to_string(c.b.port) + "]";
}

}  // namespace

TEST(Cabling, TheFabricsOwnCablesAreAsPlannedByGuidAndByName) {
  const Fabric f = tree();
  std::vector<Cable> plan = cables_of(f);
  CablingCheck c = check_cabling(f, plan);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.as_planned, plan.size());
  for (Cable& k : plan) k.a.guid = 0, k.b.guid = 0;  // by name
  c = check_cabling(f, plan);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.as_planned, plan.size());
}

TEST(Cabling, SwapsMovesMissingExtraAndUnknownNodesAreNamedByBothEnds) {
  const Fabric f = tree();
  const std::vector<Cable> real = cables_of(f);
  std::vector<Cable> plan = real;
  // Two host cables of one leaf with their host ends exchanged in the plan: the fabric has them swapped.
  auto is_switch = [&](const CableEnd& e) {
    for (const Node& n : f.nodes)
      if (n.guid == e.guid) return n.is_switch();
    return false;
  };
  // Each cable with its switch end first.
  for (Cable& k : plan)
    if (!is_switch(k.a)) std::swap(k.a, k.b);
  size_t s1 = SIZE_MAX, s2 = SIZE_MAX;
  for (size_t i = 0; i < plan.size() && s2 == SIZE_MAX; ++i)
    for (size_t j = i + 1; j < plan.size(); ++j)
      if (plan[i].a.guid == plan[j].a.guid && !is_switch(plan[i].b) && !is_switch(plan[j].b)) {
        s1 = i, s2 = j;
        break;
      }
  ASSERT_NE(s2, SIZE_MAX);
  std::swap(plan[s1].b, plan[s2].b);
  // A cable planned at another port of its switch: the fabric has it one port off, which is free.
  size_t moved = SIZE_MAX;
  int free_port = 0;
  for (size_t i = 0; i < plan.size() && moved == SIZE_MAX; ++i) {
    if (i == s1 || i == s2) continue;
    for (const Node& n : f.nodes)
      if (n.guid == plan[i].a.guid)
        for (size_t p = 1; p < n.ports.size(); ++p)
          if (!n.ports[p].connected()) {
            moved = i, free_port = static_cast<int>(p);
            break;
          }
  }
  ASSERT_NE(moved, SIZE_MAX);
  const Cable found_moved = plan[moved];
  plan[moved].a.port = free_port;
  // One cable left out of the plan (extra), one planned the fabric lacks, one node it does not have.
  size_t dropped = 0;
  while (dropped == s1 || dropped == s2 || dropped == moved) ++dropped;
  Cable extra = plan[dropped];
  plan.erase(plan.begin() + static_cast<long>(dropped));
  const Cable absent{{plan[0].a.node, plan[0].a.guid, 40},
                     {plan[1].b.node, plan[1].b.guid, 41}};  // ports the fabric has not
  plan.push_back(absent);
  plan.push_back({{"no-such-switch", 0, 1}, {plan[0].b.node, 0, 1}});
  const CablingCheck c = check_cabling(f, plan);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.as_planned, real.size() - 4);
  ASSERT_EQ(c.swapped.size(), 1u);
  std::set<std::string> swapped{text(c.swapped[0].first), text(c.swapped[0].second)};
  EXPECT_EQ(swapped,
            (std::set<std::string>{text(plan[s1 < dropped ? s1 : s1 - 1]), text(plan[s2 < dropped ? s2 : s2 - 1])}));
  ASSERT_EQ(c.moved.size(), 1u);
  EXPECT_EQ(c.moved[0].first.a.port, free_port);
  EXPECT_TRUE(
      (std::set<std::string>{text(found_moved), text({found_moved.b, found_moved.a})}.count(text(c.moved[0].second))));
  ASSERT_EQ(c.missing.size(), 1u);
  EXPECT_EQ(text(c.missing[0]), text(absent));
  ASSERT_EQ(c.extra.size(), 1u);
  const std::set<std::string> either{text(extra), text({extra.b, extra.a})};
  EXPECT_TRUE(either.count(text(c.extra[0]))) << text(c.extra[0]);
  ASSERT_EQ(c.unresolved.size(), 1u);
  EXPECT_NE(c.unresolved[0].find("no-such-switch"), std::string::npos);
}

TEST(Cabling, APortPlannedTwiceIsSaidAndEveryPlannedCableCountedOnce) {
  const Fabric f = tree();
  std::vector<Cable> plan = cables_of(f);
  const size_t n = plan.size();
  plan.push_back({plan[0].a, plan[1].b});  // plan[0].a's port a second time
  const CablingCheck c = check_cabling(f, plan);
  ASSERT_EQ(c.unresolved.size(), 1u);
  EXPECT_NE(c.unresolved[0].find("a second cable planned at this port"), std::string::npos) << c.unresolved[0];
  EXPECT_EQ(c.as_planned, n);
  EXPECT_EQ(c.as_planned + 2 * c.swapped.size() + c.moved.size() + c.missing.size() + c.unresolved.size(), c.planned);
}
