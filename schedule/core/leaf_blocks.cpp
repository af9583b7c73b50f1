#include "leaf_blocks.hpp"

#include <algorithm>

#include "leaf_pairs.hpp"
#include "leaf_shop.hpp"
#include "open_shop.hpp"

namespace ibroute::schedule {

bool leaf_blocks_may_help(const Leaves& leaves) {
  std::vector<int> hosts(leaves.up.size(), 0);
  for (int l : leaves.of_rank)
    if (l >= 0 && ++hosts[static_cast<size_t>(l)] > std::max(1, leaves.up[static_cast<size_t>(l)])) return true;
  return false;
}

namespace {

// Phases of the blocks (block s: leaf x sends to leaf x + s, the block as long as its largest pair).
size_t block_phase_count(const std::vector<LeafGroup>& groups) {
  const size_t g = groups.size();
  const std::vector<std::vector<uint64_t>> length = pair_durations(groups);
  size_t count = 0;
  for (size_t s = 1; s < g; ++s) {
    uint64_t longest = 0;
    for (size_t x = 0; x < g; ++x) longest = std::max(longest, length[x][(x + s) % g]);
    count += longest;
  }
  return count;
}

// The open shop holds a state per pair of leaves (every rank on no leaf is a leaf of its own).
constexpr size_t kMaxShopLeaves = 1024;
constexpr double kOpenShopGain = 0.96;  // leaf_pairs_plan

}  // namespace

LeafPairsPlan leaf_pairs_plan(const Ring& ring, const Leaves& leaves, const LeafSlots* slots) {
  const std::vector<LeafGroup> groups = leaf_groups(ring, leaves, 1);
  const size_t blocks = block_phase_count(groups);
  LeafPairsPlan out{LeafPairsWay::blocks, own_exchange_phases(groups) + blocks};
  if (slots) {
    const std::vector<LeafGroup> at_ports = leaf_groups(ring, leaves, 1, slots);
    if (const size_t b = block_phase_count(at_ports); b <= blocks)
      out = {LeafPairsWay::blocks_at_ports, own_exchange_phases(at_ports) + b};
  }
  if (groups.size() <= kMaxShopLeaves) {
    const size_t shop = open_shop_length(pair_durations(groups));
    if (static_cast<double>(shop) < kOpenShopGain * static_cast<double>(blocks))
      out = {LeafPairsWay::open_shop, own_exchange_phases(groups) + shop};
  }
  return out;
}

size_t leaf_block_phase_count(const Ring& ring, const Leaves& leaves, const LeafSlots* slots) {
  return leaf_pairs_plan(ring, leaves, slots).phases;
}

bool leaf_blocks_as_open_shop(const Ring& ring, const Leaves& leaves, const LeafSlots* slots) {
  return leaf_pairs_plan(ring, leaves, slots).way == LeafPairsWay::open_shop;
}

std::vector<Phase> leaf_block_phases(const Ring& ring, const Leaves& leaves, size_t period, const LeafSlots* slots,
                                     const LeafPaths* paths, std::vector<Transfer>* leftover) {
  const size_t n = ring.place.size();
  const LeafPairsWay way = leaf_pairs_plan(ring, leaves, slots).way;
  const std::vector<LeafGroup> groups =
      leaf_groups(ring, leaves, period, way == LeafPairsWay::blocks_at_ports ? slots : nullptr);
  const size_t g = groups.size();
  std::vector<Phase> out;
  auto fresh = [&] {
    out.push_back({});
    out.back().dst.assign(n, -1), out.back().dlid.assign(n, 0);
    return &out.back();
  };
  // Block 0: every leaf's own exchange, its shifts; no up-link carries any of it.
  for (size_t k = 1; k <= own_exchange_phases(groups); ++k) {
    Phase* ph = fresh();
    for (const LeafGroup& gr : groups)
      for (size_t x = 0; k < gr.ranks.size() && x < gr.ranks.size(); ++x)
        if (gr.ranks[x] >= 0) ph->dst[static_cast<size_t>(gr.ranks[x])] = gr.ranks[(x + k) % gr.ranks.size()];
  }
  if (way == LeafPairsWay::open_shop) {
    leaf_shop_phases(groups, n, paths, out, leftover);
    return out;
  }
  std::vector<size_t> sent(n, SIZE_MAX), received(n, SIZE_MAX);  // the phase a rank last sent / received in
  auto pair = [&](size_t x, size_t s) {
    const LeafGroup& a = groups[x];
    const LeafGroup& b = groups[(x + s) % g];
    const size_t width = pair_width(a, b);
    return LeafPair{&a, &b, 0, width, pair_offset(b, width, s)};
  };
  // A pair's next `width` transfers into the newest phase, up to one that would send or receive twice.
  auto emit = [&](LeafPair& pr) {
    const size_t p = out.size() - 1;
    for (size_t taken = 0; taken < pr.width && pr.next < pr.total(); ++taken, ++pr.next) {
      const auto [src, dst] = pr.at(pr.next);
      if (src < 0 || dst < 0) continue;  // an empty slot: its place in the window kept
      if (sent[static_cast<size_t>(src)] == p || received[static_cast<size_t>(dst)] == p)
        break;  // the next phase takes it
      sent[static_cast<size_t>(src)] = received[static_cast<size_t>(dst)] = p;
      out.back().dst[static_cast<size_t>(src)] = dst;
    }
    return pr.next < pr.total();
  };
  // Blocks 1 .. g-1: leaf x sends to leaf x+s, every pair `width` transfers per phase.
  std::vector<LeafPair> pairs(g);
  for (size_t s = 1; s < g; ++s) {
    for (size_t x = 0; x < g; ++x) pairs[x] = pair(x, s);
    for (bool left = true; left;) {
      left = false;
      fresh();
      for (LeafPair& pr : pairs) left = emit(pr) || left;
    }
  }
  return out;
}

}  // namespace ibroute::schedule
