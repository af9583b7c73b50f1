// Playing a schedule by max-min fair sharing: known answers on the two-leaf fabric.
#include <gtest/gtest.h>

#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/simulate.hpp"

using namespace ibroute::test;
namespace sch = ibroute::schedule;

namespace {

// One phase: h1 -> h3 and h2 -> h4 (leaf L1 to leaf L2), h3 -> h1 and h4 -> h2 back; the DLID
// offsets pick the spines (offset 0: S1, offset 1: S2).
sch::Schedule cross(const World& w, int off_a, int off_b) {
  sch::Schedule s;
  s.hosts = sch::all_hosts(w.f);
  sch::Phase ph;
  ph.dst = {2, 3, 0, 1};
  ph.dlid.resize(4);
  for (size_t i = 0; i < 4; ++i) {
    uint16_t base = w.f.nodes[s.hosts[ph.dst[i]].node].ports[1].base_lid;
    ph.dlid[i] = static_cast<uint16_t>(base + (i % 2 ? off_b : off_a));
  }
  s.phases = {ph};
  return s;
}

}  // namespace

TEST(Simulate, DisjointSpinesGiveEveryTransferTheFullLinkRate) {
  World w{TwoLeaves().f};
  const double link = w.links.gbps(w.links.id(w.s.hosts[0], 1));
  sch::Simulation sim = sch::simulate(w.ctx, cross(w, 0, 1), 1'000'000);
  EXPECT_EQ(sim.n, 4u);
  EXPECT_FLOAT_EQ(sim.pair_gbps[0 * 4 + 2], static_cast<float>(link));
  EXPECT_FLOAT_EQ(sim.pair_gbps[1 * 4 + 3], static_cast<float>(link));
  EXPECT_EQ(sim.pair_gbps[0 * 4 + 1], 0.f);  // no transfer h1 -> h2 in this schedule
  EXPECT_NEAR(sim.seconds, 8e6 / (link * 1e9), 1e-12);
  EXPECT_NEAR(sim.node_bytes_per_s, link * 1e9 / 8, 1.0);
  EXPECT_EQ(sim.broken, 0u);
}

TEST(Simulate, SharedSpineHalvesTheRateAndARateCapHolds) {
  World w{TwoLeaves().f};
  const double link = w.links.gbps(w.links.id(w.s.hosts[0], 1));
  sch::Simulation shared = sch::simulate(w.ctx, cross(w, 0, 0), 1'000'000);
  EXPECT_FLOAT_EQ(shared.pair_gbps[0 * 4 + 2], static_cast<float>(link / 2));
  EXPECT_NEAR(shared.node_bytes_per_s, link / 2 * 1e9 / 8, 1.0);
  sch::Schedule capped = cross(w, 0, 1);
  capped.timing.rate = 1e9;  // 8 Gb/s per node
  sch::Simulation c = sch::simulate(w.ctx, capped, 1'000'000);
  EXPECT_FLOAT_EQ(c.pair_gbps[0 * 4 + 2], 8.f);
}

TEST(Simulate, AnAllToAllOfHostsThroughThePathTableAsWalkedFromTheLfts) {
  // 96 hosts, LMC 2, every shift at a random DLID offset: congested phases, played on all cores
  // from the table of (ingress switch, DLID) paths. Each pair's rate and each phase's length must
  // be what the routes walked from the LFTs, shared max-min phase by phase, give.
  ibroute::fabric::FatTreeSpec t;
  t.leaves = 12, t.hosts_per_leaf = 8, t.uplinks = 4, t.spines = 4, t.lmc = 2, t.shuffle_names = true;
  World w(ibroute::fabric::build_fat_tree(t));
  sch::Schedule s;
  s.hosts = sch::all_hosts(w.f);
  const size_t n = s.hosts.size();
  ASSERT_NE(w.ctx.switch_paths_for(n), nullptr) << "the table is what this test is about";
  s.phases = sch::shift_phases(n);
  uint32_t x = 7;
  for (sch::Phase& ph : s.phases)
    for (size_t i = 0; i < n; ++i)
      ph.dlid[i] = static_cast<uint16_t>(w.f.nodes[s.hosts[ph.dst[i]].node].ports[s.hosts[ph.dst[i]].port].base_lid + (x = x * 1103515245 + 12345) % 4);
  const sch::Simulation sim = sch::simulate(w.ctx, s, 1 << 20);
  ASSERT_EQ(sim.phase_seconds.size(), s.phases.size());
  PathFinder finder(w.f, w.links);
  size_t slower = 0;
  for (size_t k = 0; k < s.phases.size(); ++k) {
    const sch::Phase& ph = s.phases[k];
    std::vector<std::vector<int32_t>> flows(n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(finder.path(s.hosts[i].node, s.hosts[i].port, ph.dlid[i], flows[i]), RouteStatus::ok);
    const std::vector<double> rate = max_min_rates(flows, w.ctx.gbps);
    double slowest = 0;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_FLOAT_EQ(sim.pair_gbps[i * n + static_cast<size_t>(ph.dst[i])], static_cast<float>(rate[i])) << "phase " << k << " rank " << i;
      slowest = std::max(slowest, (1 << 20) * 8 / (rate[i] * 1e9));
      slower += rate[i] < 99.9;
    }
    EXPECT_DOUBLE_EQ(sim.phase_seconds[k], slowest) << "phase " << k;
  }
  EXPECT_GT(slower, n) << "congested phases: the sharing is what is compared, not only full rates";
  EXPECT_EQ(sim.broken, 0u);
}
