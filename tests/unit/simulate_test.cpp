// Playing a schedule by max-min fair sharing: known answers on the two-leaf fabric.
#include <gtest/gtest.h>

#include "fabrics.hpp"
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
