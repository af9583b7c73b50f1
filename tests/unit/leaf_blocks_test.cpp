// The leaf pairs' blocks (schedule/core/leaf_blocks.hpp) as a composition, apart from the planner:
// every transfer once, no leaf sending or receiving more across leaves per phase than its up-links
// carry, the phase count of the blocks, and the twin leaves' windows apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/validate.hpp"
#include "leaf_blocks.hpp"
#include "rings.hpp"

using namespace ibroute;
using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::World;

namespace {

// A three-level tree of `pods` pods x 4 leaves x `per_leaf` hosts, 2 aggregation switches per pod
// (2 up-links per leaf), 4 cores; LMC 1; names shuffled, so rank order does not follow the leaves.
Fabric tree(int pods, int per_leaf) {
  FatTreeSpec t;
  t.levels = 3, t.pods = pods, t.leaves = 4, t.hosts_per_leaf = per_leaf, t.aggs = t.uplinks = 2, t.cores = 4, t.lmc = 1;
  t.shuffle_names = true, t.seed = 3;
  return build_fat_tree(t);
}

// The ring in topology order (the leaves' hosts together), as the planner would choose it.
Ring topology_ring(const World& w, const std::vector<Host>& hosts) {
  std::vector<size_t> order(hosts.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto key = [&](size_t r) {
    const Port& p = w.f.nodes[hosts[r].node].ports[hosts[r].port];
    return std::pair(w.f.nodes[p.peer_node].guid, p.peer_port);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  Ring r;
  r.size = hosts.size();
  r.place.resize(hosts.size());
  for (size_t x = 0; x < order.size(); ++x) r.place[order[x]] = static_cast<uint32_t>(x);
  return r;
}

}  // namespace

TEST(LeafBlocks, EveryTransferOnceAndNoLeafAboveItsUpLinksInAnyPhase) {
  World w(tree(3, 5));  // 60 hosts, 12 leaves of 5 hosts over 2 up-links each
  const std::vector<Host> hosts = all_hosts(w.f);
  const Leaves leaves(w.ctx, hosts);
  ASSERT_TRUE(leaf_blocks_may_help(leaves));
  const std::vector<Phase> phases = leaf_block_phases(topology_ring(w, hosts), leaves, 2 * 2);
  EXPECT_EQ(check_all_to_all(hosts.size(), phases), "");
  // Block 0: 4 shifts within each leaf; blocks 1..11: each pair's 25 transfers 2 at a time.
  EXPECT_EQ(phases.size(), 4u + 11u * 13u);
  EXPECT_EQ(leaf_block_phase_count(topology_ring(w, hosts), leaves), phases.size());
  for (size_t p = 0; p < phases.size(); ++p) {
    std::map<int, int> out, in;
    for (size_t i = 0; i < hosts.size(); ++i) {
      const int32_t d = phases[p].dst[i];
      if (d < 0) continue;
      const int a = leaves.of_rank[i], b = leaves.of_rank[static_cast<size_t>(d)];
      if (a != b) ++out[a], ++in[b];
    }
    for (auto [leaf, count] : out) EXPECT_LE(count, leaves.up[static_cast<size_t>(leaf)]) << "phase " << p << " leaf " << leaf;
    for (auto [leaf, count] : in) EXPECT_LE(count, leaves.up[static_cast<size_t>(leaf)]) << "phase " << p << " leaf " << leaf;
  }
}

TEST(LeafBlocks, TwinLeavesReceiveOnDifferentHostsInEveryPhase) {
  // Period 2 x 2 = 4 places, 5 hosts per leaf: leaves 0 and 4 start at places 0 and 20, both
  // multiples of 4, and would receive on the same hosts (the same link on d-mod-k) in every
  // phase; the second takes its windows one later.
  World w(tree(2, 5));
  const std::vector<Host> hosts = all_hosts(w.f);
  const Leaves leaves(w.ctx, hosts);
  const Ring ring = topology_ring(w, hosts);
  std::vector<int32_t> at = ranks_at(ring);
  const std::vector<Phase> phases = leaf_block_phases(ring, leaves, 4);
  EXPECT_EQ(check_all_to_all(hosts.size(), phases), "");
  size_t apart = 0, same = 0;
  for (const Phase& ph : phases) {
    std::vector<int> first(5, -1), second(5, -1);  // receiving host's index within leaf 0 and leaf 4
    bool cross = false;
    for (size_t x = 0; x < 5; ++x) {
      const size_t r0 = static_cast<size_t>(at[x]), r4 = static_cast<size_t>(at[20 + x]);
      for (size_t i = 0; i < hosts.size(); ++i) {
        if (ph.dst[i] < 0 || leaves.of_rank[i] == leaves.of_rank[static_cast<size_t>(ph.dst[i])]) continue;
        cross = true;
        if (static_cast<size_t>(ph.dst[i]) == r0) first[x] = 1;
        if (static_cast<size_t>(ph.dst[i]) == r4) second[x] = 1;
      }
    }
    if (!cross) continue;
    bool overlap = false, both = false;
    for (size_t x = 0; x < 5; ++x) overlap = overlap || (first[x] > 0 && second[x] > 0);
    for (size_t x = 0; x < 5; ++x) both = both || first[x] > 0;
    if (!both) continue;
    ++(overlap ? same : apart);
  }
  EXPECT_GT(apart, 0u);
  EXPECT_LT(same * 4, apart) << "twin leaves received on the same host index in " << same << " phases of " << same + apart;
}

TEST(LeafBlocks, LeavesOfUnequalHostCountsAreCountedAsTheirLargestPairsLast) {
  // Two leaves keep 2 of their 5 hosts: a block lasts as long as its largest pair needs (5 x 5 over
  // 2 up-links: 13 phases) whatever its smaller pairs; the planner skips the blocks where that
  // count alone misses the least time.
  World w(tree(3, 5));
  std::vector<Host> hosts = all_hosts(w.f);
  const Leaves all(w.ctx, hosts);
  std::map<int, int> dropped;
  std::erase_if(hosts, [&, i = size_t{0}](const Host&) mutable {
    const int leaf = all.of_rank[i++];
    return (leaf == 0 || leaf == 1) && ++dropped[leaf] <= 3;
  });
  ASSERT_EQ(hosts.size(), 54u);
  const Leaves leaves(w.ctx, hosts);
  const Ring ring = topology_ring(w, hosts);
  const std::vector<Phase> phases = leaf_block_phases(ring, leaves, 4);
  EXPECT_EQ(check_all_to_all(hosts.size(), phases), "");
  EXPECT_EQ(leaf_block_phase_count(ring, leaves), phases.size());
  // Every block holds a pair of two 5-host leaves (10 leaves of 5 among 12): 4 + 11 x 13.
  EXPECT_EQ(phases.size(), 4u + 11u * 13u);
}
