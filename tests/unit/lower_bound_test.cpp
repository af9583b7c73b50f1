// The lower bound on the worst link load: known answers, and never above what the planner reaches.
#include "ibroute/schedule/lower_bound.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "fabrics.hpp"
#include "ibroute/fabric/routes.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::kShiftsOnly;
using ibroute::test::TwoLeaves;
using ibroute::test::unplug;
using ibroute::test::World;

namespace {

// h1 -> h3 and h2 -> h4 at once: both leave L1 towards L2.
std::vector<Phase> across(size_t n) {
  Phase p{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)};
  p.dst[0] = 2, p.dst[1] = 3;
  return {p};
}

// Two-level trees of a few shapes and LMCs by seed, every odd one with a leaf-spine link down.
Fabric various_tree(uint32_t seed) {
  FatTreeSpec spec;
  spec.leaves = 6, spec.hosts_per_leaf = 4 + static_cast<int>(seed % 3), spec.uplinks = 2 + static_cast<int>(seed % 2);
  spec.spines = spec.uplinks, spec.lmc = static_cast<uint8_t>(seed % 3), spec.shuffle_names = true, spec.seed = seed;
  Fabric f = build_fat_tree(spec);
  if (seed % 2) unplug(f, "leaf002", "spine01"), route_dmodk(f);
  return f;
}

// Round-robin with base LIDs over every host: phases of many different worst loads, the pruning's
// hard case; its load as evaluated.
struct RoundRobin {
  World w;
  std::vector<Host> hosts;
  std::vector<Phase> phases;
  LoadReport load;
  explicit RoundRobin(uint32_t seed)
      : w(various_tree(seed)), hosts(all_hosts(w.f)), phases(shift_phases(hosts.size())) {
    apply_lid_policy(w.f, hosts, phases, LidPolicy::base);
    load = evaluate(w.ctx, hosts, phases, false);
  }
};

}  // namespace

TEST(LowerBound, TwoPathsLetTwoTransfersGoApart) {
  TwoLeaves t;  // LMC 1: offset 0 over S1, offset 1 over S2
  World w(t.f);
  std::vector<Host> hosts = all_hosts(w.f);
  LowerBound lb = worst_load_lower_bound(w.ctx, hosts, across(hosts.size()));
  EXPECT_EQ(lb.worst, 1);
}

TEST(LowerBound, LmcZeroForcesTwoTransfersOntoOneLink) {
  TwoLeaves t;
  for (int h : t.h) t.f.nodes[h].ports[1].lmc = 0;  // one LID each: every route over S1
  World w(t.f);
  std::vector<Host> hosts = all_hosts(w.f);
  LowerBound lb = worst_load_lower_bound(w.ctx, hosts, across(hosts.size()));
  EXPECT_EQ(lb.worst, 2);
  EXPECT_EQ(lb.phase, 0);
  EXPECT_NE(lb.where.find("the only route of 2 transfers"), std::string::npos) << lb.where;
}

TEST(LowerBound, LeafMissingAnUpLinkNeedsThree) {
  FatTreeSpec spec;
  spec.leaves = 4, spec.hosts_per_leaf = 6, spec.uplinks = 3, spec.spines = 3, spec.lmc = 2, spec.seed = 4;
  Fabric f = build_fat_tree(spec);
  unplug(f, "leaf001", "spine02");
  route_dmodk(f);
  World w(f);
  std::vector<Host> hosts = topology_order(w.f, all_hosts(w.f));
  const std::vector<Phase> phases = shift_phases(hosts.size());
  LowerBound lb = worst_load_lower_bound(w.ctx, hosts, phases);
  EXPECT_EQ(lb.worst, 3);  // 5 or 6 of its hosts leave leaf001 at once over its 2 remaining up-links
  EXPECT_EQ(lb.where.rfind("leaf001: ", 0), 0u) << lb.where;
  EXPECT_NE(lb.where.find("transfers leave over 2 links"), std::string::npos) << lb.where;
  // The planner cannot do better, and here it reaches the bound.
  Schedule s = plan_all_to_all(w.ctx, hosts, kShiftsOnly);
  EXPECT_EQ(evaluate(w.ctx, s.hosts, s.phases, false).max_load, 3);
}

TEST(LowerBound, NeverAbovePlannedOnVariousTrees) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    World w(various_tree(seed));
    std::vector<Host> hosts = all_hosts(w.f);
    Schedule s = plan_all_to_all(w.ctx, hosts, kShiftsOnly);
    const int planned = evaluate(w.ctx, s.hosts, s.phases, false).max_load;
    LowerBound lb = worst_load_lower_bound(w.ctx, hosts, s.phases);
    EXPECT_LE(lb.worst, planned) << "seed " << seed;
    EXPECT_GE(lb.worst, 1) << "seed " << seed;
    // Round-robin with base LIDs is one choice among those the bound covers.
    std::vector<Phase> rr = shift_phases(hosts.size());
    apply_lid_policy(w.f, hosts, rr, LidPolicy::base);
    EXPECT_LE(worst_load_lower_bound(w.ctx, hosts, rr).worst, evaluate(w.ctx, hosts, rr, false).max_load);
  }
}

TEST(LowerBound, APlansOwnLoadsAsCeilingsGiveTheSameWorstAndANamedPhaseThatReachesIt) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const RoundRobin r(seed);
    const World& w = r.w;
    const std::vector<Host>& hosts = r.hosts;
    const std::vector<Phase>& rr = r.phases;
    const LoadReport& load = r.load;
    ASSERT_EQ(load.broken, 0u);
    const LowerBound all = worst_load_lower_bound(w.ctx, hosts, rr);
    const LowerBound pruned = worst_load_lower_bound(w.ctx, hosts, rr, 0, &load.phase_max);
    EXPECT_EQ(pruned.worst, all.worst) << "seed " << seed;
    EXPECT_EQ(pruned.phases, all.phases);
    ASSERT_GE(pruned.phase, 0);
    EXPECT_EQ(worst_load_lower_bound(w.ctx, hosts, {rr[static_cast<size_t>(pruned.phase)]}).worst, pruned.worst)
        << "seed " << seed;
    EXPECT_EQ(pruned.phase, worst_load_lower_bound(w.ctx, hosts, rr, 0, &load.phase_max).phase)
        << "the same phase every time";
  }
}

TEST(LowerBound, AWorkBudgetBoundsTheMostLoadedPhasesFirstAndStaysABound) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const RoundRobin r(seed);
    const auto& [w, hosts, rr, load] = r;
    const size_t n = hosts.size();
    const LowerBound all = worst_load_lower_bound(w.ctx, hosts, rr, 0, &load.phase_max);
    ASSERT_EQ(all.phases, rr.size());
    // A budget of three phases' transfers: three phases bounded, those of the highest ceilings.
    const LowerBound some = worst_load_lower_bound(w.ctx, hosts, rr, 0, &load.phase_max, {}, 3 * n - 1);
    EXPECT_EQ(some.phases, 3u) << "seed " << seed;
    EXPECT_LE(some.worst, all.worst) << "seed " << seed;
    ASSERT_GE(some.phase, 0);
    std::vector<int> ceilings = load.phase_max;
    std::sort(ceilings.rbegin(), ceilings.rend());
    EXPECT_GE(load.phase_max[static_cast<size_t>(some.phase)], ceilings[2]) << "one of the three highest ceilings";
    // Without ceilings the budget spreads the phases bounded evenly, and it is still a bound.
    const LowerBound spread = worst_load_lower_bound(w.ctx, hosts, rr, 0, nullptr, {}, 2 * n);
    EXPECT_EQ(spread.phases, 2u);
    EXPECT_LE(spread.worst, all.worst);
    // The smallest budget bounds one phase, never none.
    EXPECT_EQ(worst_load_lower_bound(w.ctx, hosts, rr, 0, &load.phase_max, {}, 1).phases, 1u);
  }
}

// A phase's transfers into a pod can only enter over the down-links their routes use, whatever the
// rest of the level carries: 128 transfers into one pod over its 8 such links need 16 on one,
// although with 8 more into another pod the level as a whole would allow 136 over 16, 9. The
// links and the transfers are recomputed here from the LFTs.
TEST(LowerBound, APodsDownLinksBoundWhatEntersItWhateverTheLevelCarries) {
  const ibroute::test::PodsEnteringOverFewLinks t;
  const World& w = t.w;
  const std::vector<Host>& hosts = t.hosts;
  const std::vector<int>& pod = t.pod;
  auto pod_of = [&](size_t rank) {
    return pod[static_cast<size_t>(w.f.nodes[hosts[rank].node].ports[hosts[rank].port].peer_node)];
  };
  std::vector<std::vector<int32_t>> by_pod;
  std::map<int, size_t> slot;
  for (size_t r = 0; r < hosts.size(); ++r) {
    auto [it, fresh] = slot.emplace(pod_of(r), by_pod.size());
    if (fresh) by_pod.emplace_back();
    by_pod[it->second].push_back(static_cast<int32_t>(r));
  }
  ASSERT_EQ(by_pod.size(), 4u);
  Phase ph{std::vector<int32_t>(hosts.size(), -1), std::vector<uint16_t>(hosts.size(), 0)};
  std::vector<int32_t> senders = by_pod[2];
  senders.insert(senders.end(), by_pod[3].begin(), by_pod[3].end());
  for (size_t k = 0; k < by_pod[0].size(); ++k) ph.dst[static_cast<size_t>(senders[k])] = by_pod[0][k];
  for (size_t k = 0; k < 8; ++k) ph.dst[static_cast<size_t>(senders[by_pod[0].size() + k])] = by_pod[1][k];
  // Per receiving pod: its transfers and the down-links into it their routes (any LID) take.
  std::map<int, std::set<std::pair<int, int>>> down;
  std::map<int, size_t> into;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (ph.dst[i] < 0) continue;
    const Port& d =
        w.f.nodes[hosts[static_cast<size_t>(ph.dst[i])].node].ports[hosts[static_cast<size_t>(ph.dst[i])].port];
    const int to = pod_of(static_cast<size_t>(ph.dst[i]));
    ++into[to];
    for (uint16_t o = 0; o < d.lid_count(); ++o)
      for (auto [node, out] : ibroute::test::lft_path(w.f, w.f.nodes[hosts[i].node].ports[hosts[i].port].peer_node,
                                                      static_cast<uint16_t>(d.base_lid + o)))
        if (pod[static_cast<size_t>(node)] < 0 &&
            pod[static_cast<size_t>(w.f.nodes[static_cast<size_t>(node)].ports[out].peer_node)] == to)
          down[to].insert({node, out});
  }
  size_t worst_pod = 0, all_in = 0, all_links = 0;
  for (auto [p, n] : into) {
    worst_pod = std::max(worst_pod, (n + down[p].size() - 1) / down[p].size());
    all_in += n, all_links += down[p].size();
  }
  const size_t level = (all_in + all_links - 1) / all_links;
  ASSERT_EQ(worst_pod, 16u);
  ASSERT_EQ(level, 9u);
  const LowerBound lb = worst_load_lower_bound(w.ctx, hosts, {ph});
  EXPECT_EQ(lb.worst, 16) << lb.where;
  EXPECT_NE(lb.where.find("transfers enter over 8 links"), std::string::npos) << lb.where;
}
