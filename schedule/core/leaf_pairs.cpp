#include "leaf_pairs.hpp"

#include <algorithm>
#include <numeric>

namespace ibroute::schedule {

LeafSlots leaf_slots(const EvalContext& ctx, const std::vector<Host>& hosts, const Leaves& leaves) {
  const fabric::Fabric& f = ctx.fabric;
  LeafSlots out{std::vector<int32_t>(hosts.size(), -1), std::vector<int32_t>(leaves.up.size(), 0)};
  std::vector<std::vector<int>> ports(leaves.up.size());  // per leaf: its host ports, in order
  for (size_t r = 0; r < hosts.size(); ++r) {
    const int l = leaves.of_rank[r];
    if (l < 0) continue;
    const fabric::Port& p = f.nodes[hosts[r].node].ports[hosts[r].port];
    std::vector<int>& list = ports[static_cast<size_t>(l)];
    if (list.empty()) {
      const fabric::Node& sw = f.nodes[p.peer_node];
      for (int q = 1; q <= sw.num_ports(); ++q)
        if (sw.ports[q].connected() && !f.nodes[sw.ports[q].peer_node].is_switch()) list.push_back(q);
      out.count[static_cast<size_t>(l)] = static_cast<int32_t>(list.size());
    }
    out.slot[r] = static_cast<int32_t>(std::lower_bound(list.begin(), list.end(), p.peer_port) - list.begin());
  }
  return out;
}

std::vector<LeafGroup> leaf_groups(const Ring& ring, const Leaves& leaves, size_t period, const LeafSlots* slots) {
  std::vector<int32_t> ranks = ranks_at(ring);
  std::erase(ranks, -1);
  std::vector<LeafGroup> out;
  std::vector<int> group(leaves.up.size(), -1);
  std::vector<size_t> twins(std::max<size_t>(period, 1), 0);  // groups so far whose first place has this residue
  size_t places = 0;                                          // with slots: those of the groups so far
  for (int32_t r : ranks) {
    const int l = leaves.of_rank[static_cast<size_t>(r)];
    int* s = l < 0 ? nullptr : &group[static_cast<size_t>(l)];
    if (!s || *s < 0) {
      const size_t first = slots ? places : ring.place[static_cast<size_t>(r)];
      out.push_back({{},
                     l < 0 ? 1 : std::max(1, leaves.up[static_cast<size_t>(l)]),
                     period > 1 && twins[first % period]++ % 2 == 1});
      if (s) *s = static_cast<int>(out.size() - 1);
      if (slots && l >= 0) out.back().ranks.assign(static_cast<size_t>(slots->count[static_cast<size_t>(l)]), -1);
      places += slots && l >= 0 ? out.back().ranks.size() : 1;
    }
    LeafGroup& gr = out[s ? static_cast<size_t>(*s) : out.size() - 1];
    if (slots && l >= 0)
      gr.ranks[static_cast<size_t>(slots->slot[static_cast<size_t>(r)])] = r;
    else
      gr.ranks.push_back(r);
  }
  return out;
}

size_t pair_width(const LeafGroup& a, const LeafGroup& b) {
  return std::max<size_t>(1, std::min({static_cast<size_t>(std::min(a.up, b.up)), a.ranks.size(), b.ranks.size()}));
}

// Each block moves its pairs' windows on from the block before by a step prime to the receiving
// leaf's host count, so that over the blocks every receiver comes where a window wraps round the
// leaf (two receivers on one up-link: one waits) about as often, and the transfers left to pack are
// spread over the receivers (the 3 456-host tree: 8 230 phases, 0.940, against 8 343 without; a
// step of 1: 0.934, 3: 0.940, 5: 0.936).
size_t pair_offset(const LeafGroup& to, size_t width, size_t s) {
  size_t step = 1;
  for (size_t prime : {7, 11, 13, 5, 3})
    if (std::gcd(prime, to.ranks.size()) == 1) {
      step = prime;
      break;
    }
  return (to.later ? width : 0) + s * step;
}

std::vector<std::vector<uint64_t>> pair_durations(const std::vector<LeafGroup>& groups) {
  const size_t g = groups.size();
  std::vector<std::vector<uint64_t>> out(g, std::vector<uint64_t>(g, 0));
  for (size_t x = 0; x < g; ++x)
    for (size_t y = 0; y < g; ++y)
      if (x != y) {
        const size_t width = pair_width(groups[x], groups[y]);
        out[x][y] = (groups[x].ranks.size() * groups[y].ranks.size() + width - 1) / width;
      }
  return out;
}

size_t own_exchange_phases(const std::vector<LeafGroup>& groups) {
  size_t fullest = 0;
  for (const LeafGroup& gr : groups) fullest = std::max(fullest, gr.ranks.size());
  return fullest > 0 ? fullest - 1 : 0;
}

}  // namespace ibroute::schedule
