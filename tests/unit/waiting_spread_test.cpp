// Who waits where phases are long (docs/planner.md#who-waits): the shifts of a three-level tree
// with one path per pair, over a scrambled order, solved in phases of 12 slots; the transfers that
// do not fit are listed. Counted here from that list: every rank sends and receives about as many
// of them as the others, and the phases and the list are the same on one thread and on two.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "fabrics.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "option_table.hpp"
#include "phase_packing.hpp"
#include "planner/policy.hpp"
#include "planner/solve_phases.hpp"
#include "rings.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::hashed_three_level;
using ibroute::test::World;

namespace {

struct Solved {
  Planned plan;
  std::vector<Transfer> waiting;
};

Solved solve_in_long_phases(const World& w, const std::vector<Host>& hosts, unsigned threads, bool spread) {
  constexpr int kSlots = 12;  // the average load of the busiest link per shift rounded down: it overflows
  const OptionTable table(w.ctx, hosts);
  const Leaves leaves(w.ctx, hosts, kSlots);
  const NamedRing order = scrambled_ring(hosts.size(), kPlannerPolicy.scramble_seed);
  PlanOptions opt;
  opt.threads = threads;
  Solved s;
  s.plan = solve_phases(w.ctx, table, hosts, leaves, ring_phases(order.ring), opt, Method::free, Method::free, 0, 0,
                        &s.waiting, &order.ring, kSlots, spread);
  return s;
}

}  // namespace

TEST(WaitingSpread, EveryRankWaitsAboutAsOftenOnAnyNumberOfThreads) {
  const World w(hashed_three_level(6));
  const std::vector<Host> hosts = all_hosts(w.f);
  const Solved one = solve_in_long_phases(w, hosts, 1, true), two = solve_in_long_phases(w, hosts, 2, true);
  const Solved unspread = solve_in_long_phases(w, hosts, 2, false);

  // Per rank, the most transfers it sent or received among those that waited, and the mean.
  auto most = [&](const std::vector<Transfer>& waiting) {
    std::vector<int> sent(hosts.size(), 0), received(hosts.size(), 0);
    for (const Transfer& t : waiting) ++sent[static_cast<size_t>(t.src)], ++received[static_cast<size_t>(t.dst)];
    return std::max(*std::max_element(sent.begin(), sent.end()), *std::max_element(received.begin(), received.end()));
  };
  const double mean = static_cast<double>(one.waiting.size()) / static_cast<double>(hosts.size());
  ASSERT_GT(mean, 10) << "the phases are short enough that transfers wait";
  // Packed later, one transfer per sender and receiver per phase: the rank that waits most sets
  // how many phases the packing needs at least. Left to the visiting order (who waits chosen
  // without the counts), 58 at most, 1.56 times the mean; spread, 42, 1.12.
  EXPECT_LE(most(one.waiting), 1.25 * mean) << "mean " << mean;
  EXPECT_GT(most(unspread.waiting), 1.4 * mean) << "mean " << mean << ": the counts are what spreads them";

  ASSERT_EQ(one.waiting.size(), two.waiting.size());
  for (size_t x = 0; x < one.waiting.size(); ++x) {
    EXPECT_EQ(one.waiting[x].src, two.waiting[x].src) << x;
    EXPECT_EQ(one.waiting[x].dst, two.waiting[x].dst) << x;
  }
  ASSERT_EQ(one.plan.phases.size(), two.plan.phases.size());
  for (size_t p = 0; p < one.plan.phases.size(); ++p) {
    EXPECT_EQ(one.plan.phases[p].dst, two.plan.phases[p].dst) << "phase " << p;
    EXPECT_EQ(one.plan.phases[p].dlid, two.plan.phases[p].dlid) << "phase " << p;
  }
}
