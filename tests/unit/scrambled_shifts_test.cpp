// Scrambled shifts in short phases (docs/planner.md#scrambled-shifts), the strategy table's entry
// run beside the shifts in long phases on a three-level tree with one path per pair, whose paths
// cluster by destination as OpenSM's minhop tables do over three levels at LMC 0. Both plans are
// walked here through the LFTs, every pair sent once, and set against the tables' least time
// counted here as the busiest link's transfers over all pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "fabrics.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/planner.hpp"
#include "option_table.hpp"
#include "planner/policy.hpp"
#include "planner/strategies.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::hashed_three_level;
using ibroute::test::World;

namespace {

using Loads = ibroute::test::LinkLoads;
using ibroute::test::walk_transfer;

int worst(const Loads& load) {
  int w = 0;
  for (const auto& [link, n] : load) w = std::max(w, n);
  return w;
}

// The transfers of `plan`, each pair once, walked: the time in slots (per phase its most loaded link).
double walked_once(const Fabric& f, const std::vector<Host>& hosts, const Planned& plan) {
  double total = 0;
  std::set<std::pair<int32_t, int32_t>> seen;
  for (const Phase& ph : plan.phases) {
    Loads load;
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      EXPECT_TRUE(seen.insert({static_cast<int32_t>(i), ph.dst[i]}).second) << "sent twice";
      walk_transfer(f, hosts[i], hosts[static_cast<size_t>(ph.dst[i])], ph.dlid[i], load);
    }
    if (!load.empty()) total += worst(load);
  }
  EXPECT_EQ(seen.size(), hosts.size() * (hosts.size() - 1)) << "every pair sent";
  return total;
}

const Strategy& entry(const std::string& name) {
  const auto& t = strategy_table();
  const auto it = std::find_if(t.begin(), t.end(), [&](const Strategy& s) { return s.name == name; });
  EXPECT_NE(it, t.end()) << name;
  return *it;
}

}  // namespace

TEST(ScrambledShiftsAtScale, BeatTheShiftsInLongPhasesWhereTheTablesAlignWithTheRankOrder) {
  World w(hashed_three_level(6));
  const std::vector<Host> hosts = all_hosts(w.f);
  Loads all;
  for (const Host& a : hosts)
    for (const Host& b : hosts)
      if (&a != &b) walk_transfer(w.f, a, b, w.f.nodes[b.node].ports[b.port].base_lid, all);
  const double least = worst(all);

  const OptionTable table(w.ctx, hosts);
  const Leaves leaves(w.ctx, hosts);
  const PlanOptions opt;
  PlannerPolicy policy = kPlannerPolicy;
  policy.gain = 1.0;  // every entry applies whatever the best so far
  PlanInputs in(w.ctx, table, hosts, leaves, {}, {}, opt, policy);
  EXPECT_DOUBLE_EQ(in.least, least) << "the planner's least time is the busiest link's, as walked here";
  PlanSearch search(in, opt.work_max);
  std::string why;
  const Strategy& long_shifts = entry("shifts packed, long phases");
  const Strategy& scrambled = entry("scrambled shifts, short phases");
  ASSERT_EQ(scrambled.skip(search), "");
  std::optional<Candidate> a = long_shifts.build(search, why);
  ASSERT_TRUE(a) << why;
  compact_pending(search, *a);  // as the search does for the packing it keeps
  search.best = a;
  std::optional<Candidate> b = scrambled.build(search, why);
  ASSERT_TRUE(b) << why;
  compact_pending(search, *b);
  const double ta = walked_once(w.f, hosts, a->plan), tb = walked_once(w.f, hosts, b->plan);
  EXPECT_DOUBLE_EQ(ta, a->plan.total());
  EXPECT_DOUBLE_EQ(tb, b->plan.total());
  EXPECT_LT(tb, ta) << b->composition;
  EXPECT_GE(least / tb, 0.95) << b->composition;
}

// Where the average rounded down would leave more waiting than a packing's budget places, the
// entry runs at the long shifts' length instead (the average rounded up) over the scrambled order.
TEST(ScrambledShifts, RunAtTheLongShiftsLengthWhereShorterPhasesWouldLeaveTooMuchWaiting) {
  World w(hashed_three_level(6));
  const std::vector<Host> hosts = all_hosts(w.f);
  const OptionTable table(w.ctx, hosts);
  const Leaves leaves(w.ctx, hosts);
  PlanOptions opt;
  // 575 shifts, 12.27 slots each at the least: in phases of 12 about 7 300 transfers would wait.
  opt.packing_work_max = opt.packing_work_base + opt.packing_work_per_transfer * 5'000;
  PlannerPolicy policy = kPlannerPolicy;
  policy.gain = 1.0;
  PlanInputs in(w.ctx, table, hosts, leaves, {}, {}, opt, policy);
  PlanSearch search(in, opt.work_max);
  const Strategy& scrambled = entry("scrambled shifts, short phases");
  ASSERT_EQ(scrambled.skip(search), "");
  std::string why;
  std::optional<Candidate> c = scrambled.build(search, why);
  ASSERT_TRUE(c) << why;
  compact_pending(search, *c);
  EXPECT_NE(c->composition.find("in phases of 13 slots"), std::string::npos) << c->composition;
  const double t = walked_once(w.f, hosts, c->plan);
  EXPECT_DOUBLE_EQ(t, c->plan.total());
  EXPECT_GE(in.least / t, 0.9) << c->composition;

  opt.packing_work_max = opt.packing_work_base - 1;  // no packing fits: skipped, and why
  PlanInputs none(w.ctx, table, hosts, leaves, {}, {}, opt, policy);
  PlanSearch nothing(none, opt.work_max);
  EXPECT_NE(scrambled.skip(nothing).find("phases of 13 slot(s)"), std::string::npos) << scrambled.skip(nothing);
}
