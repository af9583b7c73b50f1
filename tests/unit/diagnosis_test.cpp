// The run's diagnosis against faults it cannot see: an emulated run of the 864-host half fat-tree
// whose pair rates come from the stored paths and a fault list the diagnosis never reads (each
// transfer at the least factor of the links it crosses, with noise), then the suspects it names.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/diagnosis.hpp"
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
std::vector<float> emulate(const World& w, const Schedule& s, const std::map<int32_t, double>& faults, double noise, size_t random_slow,
                           uint32_t seed) {
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
  for (const RunSuspect& x : d.suspects) EXPECT_LT(x.confidence, 0.5) << w.links.id(0, 0) << " link " << x.link << " factor " << x.factor;
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
  const RunDiagnosis d =
      diagnose_run(w.ctx, s, emulate(w, s, {{host_link, 0.3}, {port, 0.6}, {m1, 0.7}, {m2, 0.7}, {m3, 0.7}}, 0.05, 100, 3));
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
