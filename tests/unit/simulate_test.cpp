// Playing a schedule by max-min fair sharing: known answers on the two-leaf fabric.
#include "ibroute/schedule/simulate.hpp"

#include <gtest/gtest.h>

#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"

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
      ph.dlid[i] = static_cast<uint16_t>(w.f.nodes[s.hosts[ph.dst[i]].node].ports[s.hosts[ph.dst[i]].port].base_lid +
                                         (x = x * 1103515245 + 12345) % 4);
  const sch::Simulation sim = sch::simulate(w.ctx, s, 1 << 20);
  ASSERT_EQ(sim.phase_seconds.size(), s.phases.size());
  PathFinder finder(w.f, w.links);
  size_t slower = 0;
  for (size_t k = 0; k < s.phases.size(); ++k) {
    const sch::Phase& ph = s.phases[k];
    std::vector<std::vector<int32_t>> flows(n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(finder.path(s.hosts[i].node, s.hosts[i].port, ph.dlid[i], flows[i]), RouteStatus::ok);
    const std::vector<double> rate = max_min_rates(flows, w.ctx.gbps);
    double slowest = 0;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_FLOAT_EQ(sim.pair_gbps[i * n + static_cast<size_t>(ph.dst[i])], static_cast<float>(rate[i]))
          << "phase " << k << " rank " << i;
      slowest = std::max(slowest, (1 << 20) * 8 / (rate[i] * 1e9));
      slower += rate[i] < 99.9;
    }
    EXPECT_DOUBLE_EQ(sim.phase_seconds[k], slowest) << "phase " << k;
  }
  EXPECT_GT(slower, n) << "congested phases: the sharing is what is compared, not only full rates";
  EXPECT_EQ(sim.broken, 0u);
}

TEST(Simulate, PhasesWithinEveryLinksRateArePlayedFromTheEvaluationAsTheWalkPlaysThem) {
  // The evaluation's phase times stand in for the walk where a phase is within every link's rate
  // and none of its transfers runs between two hosts on links faster than the host rate. One leaf-spine cable narrowed
  // to 1x (the phases that cross it walked), two hosts of one leaf on HDR links where the rest are EDR (between the two
  // a transfer runs at 200 Gb/s, not at the host rate: walked), a planned all-to-all and a congested one with random
  // DLIDs, timed and not: the same figures, pair by pair and phase by phase, with and without the evaluation.
  ibroute::fabric::FatTreeSpec t;
  t.leaves = 12, t.hosts_per_leaf = 8, t.uplinks = 8, t.spines = 8, t.lmc = 2,
  t.shuffle_names = true;  // not oversubscribed
  Fabric f = ibroute::fabric::build_fat_tree(t);
  std::vector<sch::Host> hosts = sch::all_hosts(f);
  std::vector<int> fast;  // two hosts' nodes behind the first host's leaf
  const int leaf = f.nodes[hosts[0].node].ports[hosts[0].port].peer_node;
  for (const sch::Host& h : hosts) {
    Port& p = f.nodes[h.node].ports[h.port];
    if (p.peer_node != leaf || fast.size() == 2) continue;
    p.speed = f.nodes[p.peer_node].ports[p.peer_port].speed = "HDR";
    fast.push_back(h.node);
  }
  for (Port& p : f.nodes[leaf].ports)
    if (p.peer_node >= 0 && f.nodes[p.peer_node].is_switch()) {
      p.width = f.nodes[p.peer_node].ports[p.peer_port].width = 1;
      break;
    }
  World w(std::move(f));
  const size_t n = hosts.size();
  ASSERT_EQ(w.s.host_gbps, 100.0) << "EDR hosts, two on HDR";
  sch::Schedule planned = sch::plan_all_to_all(w.ctx, hosts, {});
  sch::Schedule congested;
  congested.hosts = hosts, congested.phases = sch::shift_phases(n);
  uint32_t x = 11;
  for (sch::Phase& ph : congested.phases)
    for (size_t i = 0; i < n; ++i)
      ph.dlid[i] = static_cast<uint16_t>(w.f.nodes[hosts[ph.dst[i]].node].ports[hosts[ph.dst[i]].port].base_lid +
                                         (x = x * 1103515245 + 12345) % 4);
  auto is_fast = [&](size_t r) { return std::find(fast.begin(), fast.end(), hosts[r].node) != fast.end(); };
  size_t covered = 0, phases = 0, over_host_rate = 0;
  for (sch::Schedule* s : {&planned, &congested})
    for (const bool timed : {false, true}) {
      const sch::LoadReport load = sch::evaluate(w.ctx, s->hosts, s->phases, false);
      if (timed) sch::time_schedule(w.ctx, load, 1 << 20, 0, *s);
      const sch::Simulation walked = sch::simulate(w.ctx, *s, 1 << 20), read = sch::simulate(w.ctx, *s, 1 << 20, &load);
      ASSERT_EQ(read.pair_gbps, walked.pair_gbps) << (s == &planned ? "planned" : "congested") << ", timed " << timed;
      ASSERT_EQ(read.phase_seconds, walked.phase_seconds);
      EXPECT_EQ(read.seconds, walked.seconds);
      EXPECT_EQ(read.broken, walked.broken);
      for (float g : walked.pair_gbps) over_host_rate += g > 100.5f;
      for (size_t k = 0; k < s->phases.size(); ++k) {
        bool plain = load.phase_time[k] <= 1.0;
        for (size_t i = 0; i < n && plain; ++i)
          plain = s->phases[k].dst[i] < 0 || !(is_fast(i) && is_fast(static_cast<size_t>(s->phases[k].dst[i])));
        covered += plain, ++phases;
      }
    }
  EXPECT_GT(covered, 0u) << "some phases are read from the evaluation";
  EXPECT_LT(covered, phases) << "and some walked";
  EXPECT_GT(over_host_rate, 0u) << "the two HDR hosts' transfers between them run above the host rate";
}
