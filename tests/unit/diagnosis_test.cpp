// The run's diagnosis against faults it cannot see: an emulated run of the 864-host half fat-tree
// whose pair rates come from the stored paths and a fault list the diagnosis never reads (each
// transfer at the least factor of the links it crosses, with noise), then the suspects it names.
#include "ibroute/schedule/diagnosis.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"

namespace {

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::World;

World half_fat_tree_864() {
  FatTreeSpec t;
  t.leaves = 36, t.hosts_per_leaf = 24, t.uplinks = 12, t.spines = 12, t.lmc = 2, t.shuffle_names = true;
  return World(build_fat_tree(t));
}

Schedule round_robin_spread(const World& w) {
  Schedule s;
  s.hosts = all_hosts(w.f);
  s.phases = shift_phases(s.hosts.size());
  apply_lid_policy(w.f, s.hosts, s.phases, LidPolicy::spread);
  return s;
}

// The emulated run: planned rate x the least fault factor on the path x noise; `random_slow`
// pairs slowed to a third whatever their path.
std::vector<float> emulate(const World& w, const Schedule& s, const std::map<int32_t, double>& faults, double noise,
                           size_t random_slow, uint32_t seed) {
  const size_t n = s.hosts.size();
  std::vector<float> out = planned_pair_gbps(w.ctx, s);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  PathFinder finder(w.f, w.links);
  std::vector<int32_t> path;
  for (const Phase& ph : s.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      float& g = out[i * n + static_cast<size_t>(ph.dst[i])];
      if (g < 0) continue;
      finder.path(s.hosts[i].node, s.hosts[i].port, ph.dlid[i], path);
      double f = 1;
      for (int32_t l : path)
        if (auto it = faults.find(l); it != faults.end()) f = std::min(f, it->second);
      g = static_cast<float>(g * f * jitter(rng));
    }
  std::uniform_int_distribution<size_t> any(0, n * n - 1);
  for (size_t k = 0; k < random_slow; ++k)
    if (size_t at = any(rng); out[at] > 0) out[at] /= 3;
  return out;
}

// A leaf's up-link (leaf `leaf`, its `k`-th switch-to-switch port), one direction.
int32_t leaf_up_link(const World& w, size_t leaf, int k) {
  const int32_t node = w.s.leaves[leaf];
  int seen = 0;
  for (int p = 1; p <= w.f.nodes[node].num_ports(); ++p) {
    const Port& port = w.f.nodes[node].ports[p];
    if (port.connected() && w.f.nodes[port.peer_node].is_switch() && seen++ == k) return w.links.id(node, p);
  }
  return -1;
}
// The same cable the other way: spine to leaf.
int32_t reverse(const World& w, int32_t link) {
  const Port& p = w.f.nodes[w.links.node(link)].ports[w.links.port(link)];
  return w.links.id(p.peer_node, p.peer_port);
}

size_t place_of(const RunDiagnosis& d, int32_t link) {
  for (size_t i = 0; i < d.suspects.size(); ++i)
    if (d.suspects[i].link == link) return i;
  return SIZE_MAX;
}

TEST(Diagnosis, ACleanRunWithNoiseAndAFewSlowPairsNamesNoSuspect) {
  const World w = half_fat_tree_864();
  const Schedule s = round_robin_spread(w);
  const RunDiagnosis d = diagnose_run(w.ctx, s, emulate(w, s, {}, 0.08, 200, 1));
  EXPECT_GT(d.pairs, 700000u);
  for (const RunSuspect& x : d.suspects)
    EXPECT_LT(x.confidence, 0.5) << w.links.id(0, 0) << " link " << x.link << " factor " << x.factor;
}

TEST(Diagnosis, ACableAt40PercentIsNamedFirstOrSecond) {
  const World w = half_fat_tree_864();
  const Schedule s = round_robin_spread(w);
  const int32_t bad = leaf_up_link(w, 7, 3);
  const RunDiagnosis d = diagnose_run(w.ctx, s, emulate(w, s, {{bad, 0.4}}, 0.05, 50, 2));
  const size_t at = place_of(d, bad);
  ASSERT_LT(at, 2u);
  EXPECT_EQ(d.suspects[at].rank, -1);  // between switches: a cable, not a host
  EXPECT_NEAR(d.suspects[at].factor, 0.4, 0.05);
  EXPECT_GE(d.suspects[at].confidence, 0.5);
  EXPECT_GT(d.suspects[at].others, 0.9);  // the same hosts run at plan over their other links
}

TEST(Diagnosis, AHostAPortAndThreeMildCablesAreTold) {
  const World w = half_fat_tree_864();
  const Schedule s = round_robin_spread(w);
  const size_t slow_rank = 123;
  const int32_t host_link = w.links.id(s.hosts[slow_rank].node, s.hosts[slow_rank].port);  // sends at 30 %
  const int32_t port = reverse(w, leaf_up_link(w, 20, 5));  // a spine's port towards a leaf at 60 %
  const int32_t m1 = leaf_up_link(w, 2, 0), m2 = leaf_up_link(w, 11, 7), m3 = reverse(w, leaf_up_link(w, 30, 11));
  const RunDiagnosis d = diagnose_run(
      w.ctx, s, emulate(w, s, {{host_link, 0.3}, {port, 0.6}, {m1, 0.7}, {m2, 0.7}, {m3, 0.7}}, 0.05, 100, 3));
  const size_t host_at = place_of(d, host_link), port_at = place_of(d, port);
  ASSERT_LT(host_at, 2u);
  EXPECT_EQ(d.suspects[host_at].rank, static_cast<int32_t>(slow_rank));
  EXPECT_FALSE(d.suspects[host_at].receive);
  EXPECT_LT(port_at, 3u);
  for (int32_t m : {m1, m2, m3}) EXPECT_LT(place_of(d, m), 5u) << "mild cable " << m;
  for (size_t i = 0; i < d.suspects.size(); ++i) {
    const int32_t l = d.suspects[i].link;
    const bool real = l == host_link || l == port || l == m1 || l == m2 || l == m3;
    if (!real) {
      EXPECT_LT(d.suspects[i].confidence, 0.5) << "not a fault: link " << l;
    }
  }
}

// Parsimony, on the schedules users run (the planner's, its DLIDs chosen): the fewest parts that
// explain the slow transfers. At LMC 0 every spine port towards a leaf carries all the transfers
// into a few of its hosts (d-mod-k: 2 of 24 here), so a slow port and its hosts' own links are
// equally slow, and only what each explains tells them apart. The tree of 864 hosts at LMC 0 and
// 2, and a three-level tree at LMC 0.
struct Planned {
  World w;
  Schedule s;
  explicit Planned(Fabric f) : w(std::move(f)), s(plan_all_to_all(w.ctx, all_hosts(w.f), PlanOptions{})) {}
};
Fabric hft864(uint8_t lmc) {
  FatTreeSpec t;
  t.leaves = 36, t.hosts_per_leaf = 24, t.uplinks = 12, t.spines = 12, t.lmc = lmc, t.shuffle_names = true;
  return build_fat_tree(t);
}
// Each fabric planned on first use only: ctest runs every test in its own process, and planning
// all three there for the one it needs took most of the sanitizer pass's time.
const Planned& planned(int which) {
  if (which == 0) {
    static const Planned lmc0(hft864(0));
    return lmc0;
  }
  if (which == 1) {
    static const Planned lmc2(hft864(2));
    return lmc2;
  }
  static const Planned three([] {
    FatTreeSpec t;
    t.levels = 3, t.pods = 4, t.leaves = 8, t.hosts_per_leaf = 8, t.aggs = 8, t.cores = 32, t.lmc = 0,
    t.shuffle_names = true;
    return build_fat_tree(t);
  }());
  return three;
}
int32_t host_receive_link(const World& w, const Schedule& s, size_t rank) {
  const Port& p = w.f.nodes[s.hosts[rank].node].ports[s.hosts[rank].port];
  return w.links.id(p.peer_node, p.peer_port);
}

class Parsimony : public ::testing::TestWithParam<int> {
 protected:
  const Planned& p() const { return planned(GetParam()); }
};

TEST_P(Parsimony, ACleanPlannedRunNamesNoSuspect) {
  const Planned& x = p();
  const RunDiagnosis d = diagnose_run(x.w.ctx, x.s, emulate(x.w, x.s, {}, 0.08, 200, 11));
  for (const RunSuspect& r : d.suspects) EXPECT_LT(r.confidence, 0.5) << "link " << r.link << " factor " << r.factor;
}

TEST_P(Parsimony, ASpinePortAt60PercentIsNamedFirstNotTheHostsBehindIt) {
  const Planned& x = p();
  const int32_t port = reverse(x.w, leaf_up_link(x.w, 5, 2));
  const RunDiagnosis d = diagnose_run(x.w.ctx, x.s, emulate(x.w, x.s, {{port, 0.6}}, 0.05, 50, 12));
  ASSERT_FALSE(d.suspects.empty());
  EXPECT_EQ(d.suspects[0].link, port) << "named first: link " << d.suspects[0].link << " rank " << d.suspects[0].rank;
  EXPECT_GE(d.suspects[0].confidence, 0.5);
  EXPECT_NEAR(d.suspects[0].factor, 0.6, 0.06);
  for (size_t i = 1; i < d.suspects.size(); ++i)
    EXPECT_LT(d.suspects[i].confidence, 0.5) << "link " << d.suspects[i].link;
}

TEST_P(Parsimony, AHostReceivingAt50PercentIsNamedFirst) {
  const Planned& x = p();
  const size_t rank = 77;
  const int32_t into = host_receive_link(x.w, x.s, rank);
  const RunDiagnosis d = diagnose_run(x.w.ctx, x.s, emulate(x.w, x.s, {{into, 0.5}}, 0.05, 50, 13));
  ASSERT_FALSE(d.suspects.empty());
  EXPECT_EQ(d.suspects[0].link, into) << "named first: link " << d.suspects[0].link;
  EXPECT_EQ(d.suspects[0].rank, static_cast<int32_t>(rank));
  EXPECT_TRUE(d.suspects[0].receive);
  EXPECT_GE(d.suspects[0].confidence, 0.5);
  for (size_t i = 1; i < d.suspects.size(); ++i)
    EXPECT_LT(d.suspects[i].confidence, 0.5) << "link " << d.suspects[i].link;
}

TEST_P(Parsimony, APortAt60AndAHostAt30AreTheFirstTwo) {
  const Planned& x = p();
  const int32_t port = reverse(x.w, leaf_up_link(x.w, 3, 1));
  const int32_t host = host_receive_link(x.w, x.s, 40);
  const RunDiagnosis d = diagnose_run(x.w.ctx, x.s, emulate(x.w, x.s, {{port, 0.6}, {host, 0.3}}, 0.05, 50, 14));
  ASSERT_GE(d.suspects.size(), 2u);
  EXPECT_LT(place_of(d, port), 2u);
  EXPECT_LT(place_of(d, host), 2u);
  for (size_t i = 2; i < d.suspects.size(); ++i)
    EXPECT_LT(d.suspects[i].confidence, 0.5) << "link " << d.suspects[i].link;
}

INSTANTIATE_TEST_SUITE_P(Trees, Parsimony, ::testing::Values(0, 1, 2), [](const auto& i) {
  return i.param == 0 ? "Hft864Lmc0" : i.param == 1 ? "Hft864Lmc2" : "ThreeLevel256Lmc0";
});

// A host's receiving link and the one spine port every one of its planned transfers crosses: the
// run cannot tell them apart, the confirmation run's DLIDs can (its transfers into the host
// avoid the port).
TEST(Diagnosis, TheConfirmationRunTellsAHostFromThePortItsPlannedTransfersCross) {
  const Planned& x = planned(1);
  const size_t rank = 200;
  const int32_t into = host_receive_link(x.w, x.s, rank);
  PathFinder finder(x.w.f, x.w.links);
  std::vector<int32_t> path;
  std::map<int32_t, size_t> last_hop;  // the spine ports the planned transfers into it cross
  for (const Phase& ph : x.s.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] == static_cast<int32_t>(rank) &&
          finder.path(x.s.hosts[i].node, x.s.hosts[i].port, ph.dlid[i], path) == RouteStatus::ok && path.size() >= 3)
        ++last_hop[path[path.size() - 2]];
  ASSERT_FALSE(last_hop.empty());
  const int32_t port =
      std::max_element(last_hop.begin(), last_hop.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  const Confirmation c = confirmation_schedule(x.w.ctx, x.s, {into, port}, 16);
  size_t apart = 0;
  for (const Phase& ph : c.schedule.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] == static_cast<int32_t>(rank)) {
        ASSERT_EQ(finder.path(x.s.hosts[i].node, x.s.hosts[i].port, ph.dlid[i], path), RouteStatus::ok);
        apart += std::find(path.begin(), path.end(), port) == path.end();
      }
  EXPECT_GE(apart, 16u);
  const std::vector<Verdict> v = judge_confirmation(x.w.ctx, c, emulate(x.w, c.schedule, {{into, 0.5}}, 0.05, 0, 5));
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(v[0].confirmed);
  EXPECT_TRUE(v[1].cleared);
}

// The confirmation run: the suspects' transfers and controls from the same senders, one more run
// (emulated, the fault list unseen) confirms the faulty cable and clears the innocent one.
TEST(Diagnosis, AConfirmationRunTellsTheFaultyCableFromAnInnocentOne) {
  const World w = half_fat_tree_864();
  const Schedule s = round_robin_spread(w);
  const int32_t bad = leaf_up_link(w, 7, 3), innocent = leaf_up_link(w, 9, 2);
  const Confirmation c = confirmation_schedule(w.ctx, s, {bad, innocent}, 16);
  ASSERT_EQ(c.over.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(c.over[k].size(), 16u);
    EXPECT_EQ(c.controls[k].size(), 16u);
  }
  // No host sends or receives twice in a phase, every chosen pair is in it once.
  size_t transfers = 0;
  for (const Phase& ph : c.schedule.phases) {
    std::vector<int> got(s.hosts.size(), 0);
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] >= 0) {
        ++transfers;
        EXPECT_EQ(got[static_cast<size_t>(ph.dst[i])]++, 0);
      }
  }
  EXPECT_EQ(transfers, 64u);
  const std::vector<Verdict> v = judge_confirmation(w.ctx, c, emulate(w, c.schedule, {{bad, 0.4}}, 0.05, 0, 4));
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(v[0].confirmed) << v[0].share << " vs " << v[0].controls;
  EXPECT_NEAR(v[0].share, 0.4, 0.05);
  EXPECT_TRUE(v[1].cleared) << v[1].share << " vs " << v[1].controls;
}

}  // namespace
