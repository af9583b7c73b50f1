// The paths read from the switch table (SwitchPaths) wherever the hosts are most of the fabric:
// the planner's options, the tables' least time and the lower bound must be what walking the LFTs
// gives, broken and looping routes included; and round-robin measured on a sample of its shifts.
#include <gtest/gtest.h>

#include <cmath>

#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/lower_bound.hpp"
#include "ibroute/schedule/planner.hpp"
#include "plan_pipeline.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::World;

namespace {

// 64 hosts on 8 leaves of 4 up-links, LMC 2, names shuffled; some routes damaged where the code
// under test cannot see it: dropped at a leaf, and sent down the wrong leaf by a spine.
Fabric damaged_two_level() {
  FatTreeSpec t;
  t.leaves = 8, t.hosts_per_leaf = 8, t.uplinks = t.spines = 4, t.lmc = 2, t.shuffle_names = true;
  Fabric f = build_fat_tree(t);
  std::vector<int32_t> leaves, spines;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (!f.nodes[i].is_switch()) continue;
    bool host_below = false;
    for (const Port& p : f.nodes[i].ports)
      host_below = host_below || (p.connected() && !f.nodes[p.peer_node].is_switch());
    (host_below ? leaves : spines).push_back(static_cast<int32_t>(i));
  }
  const std::vector<Host> hosts = all_hosts(f);
  auto lid = [&](size_t h, int o) {
    return static_cast<uint16_t>(f.nodes[hosts[h].node].ports[hosts[h].port].base_lid + o);
  };
  ibroute::test::route(f, leaves[0], lid(5, 0), kNoRoute);
  ibroute::test::route(f, leaves[1], lid(9, 1), kNoRoute);
  for (int o = 0; o < 4; ++o) ibroute::test::route(f, leaves[2], lid(17, o), kNoRoute);  // no LID of it from there
  // The spine sends host 30's LID 2 down the first port leading to another leaf than its own.
  const int32_t home = f.nodes[hosts[30].node].ports[hosts[30].port].peer_node;
  for (size_t p = 1; p < f.nodes[spines[0]].ports.size(); ++p) {
    const Port& port = f.nodes[spines[0]].ports[p];
    if (port.connected() && port.peer_node != home) {
      ibroute::test::route(f, spines[0], lid(30, 2), static_cast<uint8_t>(p));
      break;
    }
  }
  return f;
}

}  // namespace

TEST(SwitchTable, ReadPathsAreTheWalkedOnes) {
  World table(damaged_two_level()), walked(damaged_two_level());
  walked.ctx.walk_only = true;
  const std::vector<Host> hosts = all_hosts(table.f);
  ASSERT_EQ(hosts.size(), 64u);
  ASSERT_NE(table.ctx.switch_paths_for(hosts.size()), nullptr);
  ASSERT_EQ(walked.ctx.switch_paths_for(hosts.size()), nullptr);

  const LeastTimes a = least_times(table.ctx, hosts, {}, {}), b = least_times(walked.ctx, hosts, {}, {});
  EXPECT_EQ(a.tables.time, b.tables.time);
  EXPECT_EQ(a.tables.limited_by, b.tables.limited_by);

  const Schedule pa = plan_all_to_all(table.ctx, hosts, {}), pb = plan_all_to_all(walked.ctx, hosts, {});
  EXPECT_EQ(pa.phases, pb.phases);
  const LoadReport la = evaluate(table.ctx, hosts, pa.phases, false),
                   lb = evaluate(walked.ctx, hosts, pb.phases, false);
  EXPECT_GT(la.broken, 0u);  // the damage is seen
  EXPECT_EQ(la.broken, lb.broken);
  EXPECT_EQ(la.link_total, lb.link_total);
  EXPECT_EQ(la.phase_max, lb.phase_max);

  const LowerBound ba = worst_load_lower_bound(table.ctx, hosts, pa.phases),
                   bb = worst_load_lower_bound(walked.ctx, hosts, pb.phases);
  EXPECT_EQ(ba.worst, bb.worst);
  EXPECT_EQ(ba.where, bb.where);
}

// Round-robin on a big exchange is estimated from evenly spaced shifts, said so; the plan returned
// is the same, and the estimate is near the whole measure.
TEST(SwitchTable, RoundRobinOnASampleOfItsShifts) {
  FatTreeSpec t;
  t.leaves = 20, t.hosts_per_leaf = 10, t.uplinks = t.spines = 5, t.shuffle_names = true;
  World w(build_fat_tree(t));
  ibroute::workflow::Exchange x;
  x.hosts = all_hosts(w.f);  // name order: round-robin congests
  ibroute::workflow::PlanRequest whole, sampled;
  sampled.baseline_sample = 100;  // fewer than one phase: the least sample, 64 shifts
  const auto a = ibroute::workflow::plan_exchange(w.ctx, x, whole);
  const auto b = ibroute::workflow::plan_exchange(w.ctx, x, sampled);
  EXPECT_EQ(a.round_robin_sampled, 0u);
  EXPECT_EQ(b.round_robin_sampled, 64u);
  EXPECT_EQ(b.round_robin_phases, 199u);
  EXPECT_EQ(b.round_robin.phases, 64u);
  EXPECT_EQ(a.schedule.phases, b.schedule.phases);
  ASSERT_LT(a.round_robin_efficiency.value, a.figures.efficiency.value * 0.9);  // clearly slower: not measured whole
  EXPECT_NEAR(b.round_robin_efficiency.value, a.round_robin_efficiency.value, 0.1 * a.round_robin_efficiency.value);
  EXPECT_NEAR(b.round_robin_efficiency.planned, a.round_robin_efficiency.planned,
              0.1 * a.round_robin_efficiency.planned);
}
