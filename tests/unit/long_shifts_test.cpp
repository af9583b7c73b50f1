// The shifts in long phases apart from the planner (docs/planner.md#long-shifts): each shift
// solved at what its links carry in s slots, what exceeds that waiting, the waiting brought back
// along augmenting paths where they make room. Checked by walking the LFTs here: every transfer is
// in its shift or waits, once; no link carries more than s transfers in a phase.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "option_table.hpp"
#include "planner/solve_phases.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::lft_path;
using ibroute::test::World;

namespace {

// The most transfers on one directed link of the phase (host links and the switch links the LFTs take).
int walked_worst(const World& w, const std::vector<Host>& hosts, const Phase& ph) {
  std::map<std::pair<int, int>, int> load;
  for (size_t i = 0; i < ph.dst.size(); ++i) {
    if (ph.dst[i] < 0) continue;
    const Host& a = hosts[i];
    const Port& pa = w.f.nodes[a.node].ports[a.port];
    const Port& pb =
        w.f.nodes[hosts[static_cast<size_t>(ph.dst[i])].node].ports[hosts[static_cast<size_t>(ph.dst[i])].port];
    ++load[{a.node, a.port}];
    ++load[{pb.peer_node, pb.peer_port}];
    if (pa.peer_node == pb.peer_node) continue;
    const auto path = lft_path(w.f, pa.peer_node, ph.dlid[i]);
    EXPECT_FALSE(path.empty()) << a.name << " to LID " << ph.dlid[i];
    for (const auto& hop : path) ++load[hop];
  }
  int worst = 0;
  for (const auto& [link, n] : load) worst = std::max(worst, n);
  return worst;
}

}  // namespace

TEST(LongShifts, EveryTransferIsInItsShiftOrWaitsAndNoLinkCarriesMoreThanThePhaseLength) {
  // 4 pods of 4 leaves of 6 hosts, 2 aggregation switches per pod, 4 cores, minhop-like tables at
  // LMC 2: a shift brings a pod up to 18 transfers over the 4 links into it.
  Fabric f = ibroute::test::three_level(4, 4, 6, 2, 4);
  route_minhop(f);
  World w(std::move(f));
  const std::vector<Host> hosts = all_hosts(w.f);
  const OptionTable table(w.ctx, hosts);
  const size_t n = hosts.size();
  for (int slots : {2, 3}) {
    SCOPED_TRACE(slots);
    const Leaves leaves(w.ctx, hosts, slots);
    std::vector<Transfer> waiting, unreadmitted;
    const Planned out = solve_phases(w.ctx, table, hosts, leaves, shift_phases(n), PlanOptions{}, Method::free,
                                     Method::free, 0, 0, &waiting, nullptr, slots);
    solve_phases(w.ctx, table, hosts, leaves, shift_phases(n), PlanOptions{.readmit = false}, Method::free,
                 Method::free, 0, 0, &unreadmitted, nullptr, slots);
    EXPECT_LT(waiting.size(), unreadmitted.size()) << "the augmenting paths bring some back";
    ASSERT_EQ(out.phases.size(), n - 1);
    std::set<std::pair<int32_t, int32_t>> seen;
    for (size_t p = 0; p < out.phases.size(); ++p) {
      const Phase& ph = out.phases[p];
      for (size_t i = 0; i < n; ++i) {
        if (ph.dst[i] < 0) continue;
        EXPECT_EQ(static_cast<size_t>(ph.dst[i]), (i + p + 1) % n) << "a transfer out of its shift";
        EXPECT_TRUE(seen.insert({static_cast<int32_t>(i), ph.dst[i]}).second);
      }
      EXPECT_LE(walked_worst(w, hosts, ph), slots) << "phase " << p;
    }
    for (const Transfer& t : waiting) EXPECT_TRUE(seen.insert({t.src, t.dst}).second) << "waits and is sent";
    EXPECT_EQ(seen.size(), n * (n - 1));
    EXPECT_FALSE(waiting.empty()) << "the tables leave more than the phases hold: some must wait";
  }
}
