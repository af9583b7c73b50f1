// A packing stops as soon as the slots it is sure to need pass the best so far
// (phase_packing.cpp: least_slots_left). Over the base LIDs every transfer has one route, so the
// waiting transfers that cross a link need that many slots of it wherever they go. The bound is
// counted here again through the LFTs; a packing asked to beat it stops having spent little, one
// asked to beat what it achieves unbounded still achieves it (the stop never costs a plan).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "fabrics.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "option_table.hpp"
#include "phase_packing.hpp"
#include "planner/solve_phases.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::hashed_three_level;
using ibroute::test::LinkLoads;
using ibroute::test::World;

namespace {

struct Packed {
  bool done = false;
  size_t phases = 0;
  uint64_t work = 0;
};

}  // namespace

TEST(PackingBound, StopsAtOnceWhereTheRoutesOfWhatWaitsCannotBeatTheBest) {
  // Three levels whose up-links are hashed per destination LID (as under dfsssp): some down-links
  // carry far more than others, more than the shifts' phases hold.
  const World w(hashed_three_level(2, 1, 8, 12, 4, 8));
  const std::vector<Host> hosts = all_hosts(w.f);
  const size_t n = hosts.size();
  const OptionTable table(w.ctx, hosts, 0, 1);  // the base LIDs: one route per pair
  const Leaves leaves(w.ctx, hosts);
  const std::vector<int> cap = unit_capacities(w.ctx, 1);
  std::vector<Transfer> waiting;
  const Planned shifts = solve_phases(w.ctx, table, hosts, leaves, shift_phases(n), PlanOptions{}, Method::free,
                                      Method::free, 0, 0, &waiting, nullptr);
  const size_t existing = shifts.phases.size();
  ASSERT_GT(waiting.size(), n) << "transfers wait";

  // The bound again: per link the waiting transfers its LFT path crosses (every link here carries
  // one transfer per one-slot phase), against the phases there are.
  LinkLoads crossing;
  for (const Transfer& t : waiting) {
    const Host& b = hosts[static_cast<size_t>(t.dst)];
    ibroute::test::walk_transfer(w.f, hosts[static_cast<size_t>(t.src)], b, w.f.nodes[b.node].ports[b.port].base_lid,
                                 crossing, false);
  }
  int busiest = 0;
  for (const auto& [link, count] : crossing) busiest = std::max(busiest, count);
  ASSERT_GT(static_cast<size_t>(busiest), existing) << "the busiest link's waiting transfers outlast the shifts";
  const auto sure = static_cast<size_t>(busiest);  // phases at least, whatever the packing

  auto pack = [&](size_t max_slots) {
    std::vector<Phase> phases = shifts.phases;
    PackWork work;
    Packed p;
    p.done = pack_phases(w.ctx, table, hosts, leaves, cap, waiting, phases, max_slots, &work);
    p.phases = phases.size(), p.work = work.work;
    return p;
  };
  const Packed free = pack(SIZE_MAX);
  ASSERT_TRUE(free.done);
  EXPECT_GE(free.phases, sure) << "a packing below the bound: the test's count or the packer is wrong";

  // Asked for one slot less than the bound: stopped before it packed most of what waits.
  const Packed short_of = pack(sure - 1);
  EXPECT_FALSE(short_of.done);
  EXPECT_LT(short_of.work * 4, free.work) << "spent " << short_of.work << " of an unbounded packing's " << free.work;

  // Asked for what it reaches unbounded: the same packing, never stopped by the bound.
  const Packed exact = pack(free.phases);
  EXPECT_TRUE(exact.done);
  EXPECT_EQ(exact.phases, free.phases);
  EXPECT_EQ(exact.work, free.work);
}
