// The planner's strategy table (docs/planner.md#the-strategy-table): the plan returned is the best
// of those its entries made, every entry says how it went, the packings share one work budget,
// and over 2^LMC LIDs the plan is never longer than over the base LIDs alone — each time walked
// here through the LFTs, apart from the planner's own evaluation.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/planner.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::World;

namespace {

// The plan's time in message-times, walked here: per phase the most transfers on one directed link
// (the sender's host link, the switch links lft_path walks, the receiver's host link; every link of
// these fabrics at the host rate), at least 1 for a phase that sends. Fails on a transfer whose
// walk does not reach its destination's switch.
double walked_slots(const Fabric& f, const Schedule& s) {
  double total = 0;
  for (const Phase& ph : s.phases) {
    std::map<std::pair<int, int>, int> load;
    bool any = false;
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      any = true;
      const Host& a = s.hosts[i];
      const Host& b = s.hosts[static_cast<size_t>(ph.dst[i])];
      const Port& pa = f.nodes[a.node].ports[a.port];
      const Port& pb = f.nodes[b.node].ports[b.port];
      ++load[{a.node, a.port}];
      ++load[{pb.peer_node, pb.peer_port}];
      if (pa.peer_node == pb.peer_node) continue;  // within a leaf
      const auto path = ibroute::test::lft_path(f, pa.peer_node, ph.dlid[i]);
      EXPECT_FALSE(path.empty()) << "no route from " << a.name << " to LID " << ph.dlid[i];
      if (!path.empty()) {
        EXPECT_EQ(f.nodes[path.back().first].ports[path.back().second].peer_node, pb.peer_node);
      }
      for (const auto& hop : path) ++load[hop];
    }
    int worst = 0;
    for (const auto& [link, n] : load) worst = std::max(worst, n);
    if (any) total += std::max(1, worst);
  }
  return total;
}

// The same fabric with one LID per port: its base LIDs, the same tables.
Fabric at_lmc0(Fabric f) {
  for (Node& n : f.nodes)
    for (Port& p : n.ports) p.lmc = 0;
  return f;
}

// Leaves of 10 hosts over 4 up-links (leaf pairs apply), LMC 2, OpenSM-minhop-like tables, two
// cables missing.
Fabric uneven_two_level() {
  FatTreeSpec t;
  t.leaves = 12, t.hosts_per_leaf = 10, t.uplinks = t.spines = 4, t.lmc = 2, t.shuffle_names = true;
  Fabric f = build_fat_tree(t);
  ibroute::test::unplug(f, "leaf003", "spine02");
  ibroute::test::unplug(f, "leaf008", "spine04");
  route_minhop(f);
  return f;
}

// The scale tests' 18-hosts-per-8-up-links tree, one pod, d-mod-k at LMC 2.
Fabric eighteen_per_eight() { return ibroute::test::eighteen_per_eight(1, 3); }

// A three-level tree at LMC 2 under minhop, 4 pods of 4 leaves of 6 hosts.
Fabric three_level_minhop() {
  Fabric f = ibroute::test::three_level(4, 4, 6, 4, 8);
  route_minhop(f);
  return f;
}

// The full 864-host half fat-tree at LMC 4, d-mod-k: over sixteen LIDs the shifts miss the
// alignment the base LIDs keep on a ring of their LID order.
Fabric full_half_fat_tree() {
  FatTreeSpec t;
  t.leaves = 36, t.hosts_per_leaf = 24, t.uplinks = t.spines = 12, t.lmc = 4, t.shuffle_names = true;
  return build_fat_tree(t);
}

size_t count_outcome(const PlanStats& st, const std::string& outcome) {
  return static_cast<size_t>(
      std::count_if(st.tried.begin(), st.tried.end(), [&](const StrategyOutcome& o) { return o.outcome == outcome; }));
}

}  // namespace

TEST(StrategyTable, ReturnsTheBestPlanItsEntriesMadeAndSaysHowEachWent) {
  for (Fabric (*make)() : {uneven_two_level, eighteen_per_eight, three_level_minhop}) {
    World w(make());
    PlanStats st;
    const Schedule s = plan_all_to_all(w.ctx, all_hosts(w.f), {}, &st);
    ASSERT_FALSE(st.tried.empty());
    EXPECT_EQ(st.tried.front().name, "shifts");
    EXPECT_EQ(count_outcome(st, "chosen"), 1u);
    const auto chosen =
        std::find_if(st.tried.begin(), st.tried.end(), [](const StrategyOutcome& o) { return o.outcome == "chosen"; });
    size_t plans = 0;
    for (const StrategyOutcome& o : st.tried) {
      EXPECT_TRUE(o.outcome == "chosen" || o.outcome == "lost" || o.outcome == "stopped" || o.outcome == "skipped")
          << o.outcome;
      if (o.outcome == "skipped" || o.outcome == "stopped") {
        EXPECT_FALSE(o.why.empty()) << o.name;
        EXPECT_EQ(o.slots, 0) << o.name;
      }
      if (o.slots > 0) {
        ++plans;
        EXPECT_TRUE(o.unroutable > chosen->unroutable ||
                    (o.unroutable == chosen->unroutable && o.slots >= chosen->slots))
            << o.name << " " << o.slots << " beats the chosen " << chosen->name << " " << chosen->slots;
      }
    }
    EXPECT_GE(plans, 2u) << "these fabrics make more than one entry plan";
    // The chosen entry's figure is the returned plan's time, walked through the LFTs.
    EXPECT_DOUBLE_EQ(walked_slots(w.f, s), chosen->slots) << chosen->name;
    // The top-level entries' work adds up to what the plan spent, within its budget.
    uint64_t work = 0;
    for (const StrategyOutcome& o : st.tried)
      if (o.name.rfind("base LIDs: ", 0) != 0) work += o.work;
    EXPECT_EQ(work, st.work_spent);
    EXPECT_LE(st.work_spent, st.work_budget);
    EXPECT_EQ(st.work_budget, PlanOptions{}.work_max);
  }
}

TEST(StrategyTable, PackingsStopWhenTheOneWorkBudgetIsSpent) {
  World w(uneven_two_level());
  PlanStats st;
  plan_all_to_all(w.ctx, all_hosts(w.f), {.work_max = 0}, &st);
  EXPECT_EQ(st.work_spent, 0u);
  EXPECT_EQ(st.packings, 0u);
  size_t spent = 0;
  for (const StrategyOutcome& o : st.tried) {
    EXPECT_EQ(o.name.find("packed") != std::string::npos && o.outcome != "skipped", false)
        << o.name << ": " << o.outcome;
    spent += o.why == "the work budget is spent";
  }
  EXPECT_GE(spent, 1u) << "some packing applied and was skipped for the budget";
  EXPECT_EQ(count_outcome(st, "chosen"), 1u);
}

TEST(StrategyTableAtScale, ManyLidsNeverPlanLongerThanTheBaseLidsAlone) {
  for (Fabric (*make)() : {uneven_two_level, eighteen_per_eight, three_level_minhop, full_half_fat_tree}) {
    World many(make());
    World base(at_lmc0(make()));
    PlanStats st;
    const Schedule s = plan_all_to_all(many.ctx, all_hosts(many.f), {}, &st);
    const Schedule b = plan_all_to_all(base.ctx, all_hosts(base.f), {});
    const Schedule b1 = plan_all_to_all(many.ctx, all_hosts(many.f), {.max_lids = 1});
    const double t = walked_slots(many.f, s), tb = walked_slots(base.f, b), tb1 = walked_slots(many.f, b1);
    EXPECT_LE(t, tb) << st.method;
    EXPECT_LE(t, tb1) << st.method;
    for (const Phase& ph : b1.phases)
      for (size_t i = 0; i < ph.dst.size(); ++i)
        if (ph.dst[i] >= 0) {
          const Host& d = b1.hosts[static_cast<size_t>(ph.dst[i])];
          ASSERT_EQ(ph.dlid[i], many.f.nodes[d.node].ports[d.port].base_lid);
        }
  }
}
