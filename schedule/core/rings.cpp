#include "rings.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

#include "ibroute/fabric/tree_routing.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

NamedRing given_ring(size_t ranks) {
  NamedRing r;
  r.ring.place.resize(ranks);
  std::iota(r.ring.place.begin(), r.ring.place.end(), 0u);
  r.ring.size = ranks;
  r.name = "the given order";
  return r;
}

NamedRing scrambled_ring(size_t ranks, uint64_t seed) {
  NamedRing r = given_ring(ranks);
  auto next = [&seed] {
    uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  for (size_t i = ranks; i > 1; --i) std::swap(r.ring.place[i - 1], r.ring.place[next() % i]);
  r.name = "a scrambled order";
  return r;
}

namespace {

// Places for `order` (ranks), each leaf's hosts together: one after the other (compact), or each
// leaf given `width` places of which its hosts take the first (padded; width 0: compact).
std::pair<std::vector<uint32_t>, size_t> places(const std::vector<size_t>& order, const Leaves& leaves, size_t width) {
  std::vector<uint32_t> place(order.size());
  if (width == 0) {
    for (size_t x = 0; x < order.size(); ++x) place[order[x]] = static_cast<uint32_t>(x);
    return {place, order.size()};
  }
  // Leaves numbered as the order first meets them; a rank on no leaf is a leaf of its own.
  std::vector<int> slot(leaves.up.size(), -1), used(leaves.up.size(), 0);
  size_t next = 0;
  for (size_t r : order) {
    const int l = leaves.of_rank[r];
    if (l < 0) {
      place[r] = static_cast<uint32_t>(next++ * width);
      continue;
    }
    if (slot[static_cast<size_t>(l)] < 0) slot[static_cast<size_t>(l)] = static_cast<int>(next++);
    place[r] = static_cast<uint32_t>(static_cast<size_t>(slot[static_cast<size_t>(l)]) * width +
                                     static_cast<size_t>(used[static_cast<size_t>(l)]++));
  }
  return {place, next * width};
}

// The ranks in the order `ibroute routing` numbers its destinations (fabric::tree_order: by the
// switches above each leaf, then leaf, then port). Its hub routing makes the shifts in that order
// congestion-free; once a leaf has lost an up-link, that order is no longer the leaves' GUID order
// (the leaf's group changes) and the GUID order's shifts collide in every phase (10 000 hosts: 0.5).
// Empty where the fabric has no levels to order by.
std::vector<size_t> tree_ranks(const EvalContext& ctx, const std::vector<Host>& hosts) {
  if (ctx.structure.level.empty()) return {};
  std::vector<CaPort> ports;
  ports.reserve(hosts.size());
  std::unordered_map<uint64_t, size_t> rank_of;
  auto key = [](int32_t node, uint8_t port) { return static_cast<uint64_t>(static_cast<uint32_t>(node)) << 8 | port; };
  for (size_t r = 0; r < hosts.size(); ++r) {
    ports.push_back({hosts[r].node, hosts[r].port});
    rank_of.emplace(key(hosts[r].node, hosts[r].port), r);
  }
  std::vector<size_t> out;
  out.reserve(hosts.size());
  for (const CaPort& p : tree_order(ctx.fabric, ctx.structure, std::move(ports)))
    out.push_back(rank_of.at(key(p.node, p.port)));
  return out;
}

}  // namespace

std::vector<NamedRing> candidate_rings(const EvalContext& ctx, const std::vector<Host>& hosts, const Leaves& leaves,
                                       size_t most) {
  const Fabric& f = ctx.fabric;
  const size_t n = hosts.size();
  auto port_of = [&](size_t r) -> const Port& { return f.nodes[hosts[r].node].ports[hosts[r].port]; };
  std::vector<size_t> topology(n), by_lid(n);
  std::iota(topology.begin(), topology.end(), size_t{0});
  by_lid = topology;
  // As routers number the hosts: by leaf and port, or by LID.
  auto leaf_key = [&](size_t r) {
    const Port& p = port_of(r);
    return std::tuple<uint64_t, int, size_t>(p.connected() ? f.nodes[p.peer_node].guid : 0, p.peer_port, r);
  };
  std::sort(topology.begin(), topology.end(), [&](size_t a, size_t b) { return leaf_key(a) < leaf_key(b); });
  const std::vector<size_t> tree = tree_ranks(ctx, hosts);
  std::sort(by_lid.begin(), by_lid.end(),
            [&](size_t a, size_t b) { return std::pair(port_of(a).base_lid, a) < std::pair(port_of(b).base_lid, b); });
  size_t fullest = 0;
  {
    std::vector<size_t> count(leaves.up.size(), 0);
    for (int l : leaves.of_rank)
      if (l >= 0) fullest = std::max(fullest, ++count[static_cast<size_t>(l)]);
  }
  // Sizes the routing's divisions may align with: the up-link counts of the levels below the top,
  // multiplied up (d-mod-k divides by each level's up-degree in turn).
  std::vector<size_t> moduli;
  size_t product = 1;
  const auto& lv = ctx.structure.per_level;
  for (size_t l = 0; l + 1 < lv.size(); ++l) {
    if (lv[l].common_up <= 1) break;
    product *= static_cast<size_t>(lv[l].common_up);
    if (product > most) break;
    moduli.push_back(product);
  }
  std::vector<NamedRing> out;
  std::set<std::tuple<int, size_t, size_t>> seen;  // (order, leaf width, size)
  const std::pair<const char*, const std::vector<size_t>*> orders[] = {
      {"topology order", &topology}, {"LID order", &by_lid}, {"tree order", &tree}};
  for (int o = 0; o < 3; ++o) {
    // The same rings again: no need to sample them twice.
    if ((o == 1 && by_lid == topology) || (o == 2 && (tree.empty() || tree == topology || tree == by_lid))) continue;
    for (size_t width : {size_t{0}, fullest}) {
      auto [place, base] = places(*orders[o].second, leaves, width);
      std::vector<size_t> sizes{base};
      for (size_t m : moduli) sizes.push_back((base + m - 1) / m * m);
      for (size_t size : sizes) {
        if (size > most || size < n || !seen.emplace(o, width, size).second) continue;
        NamedRing r;
        r.ring.place = place;
        r.ring.size = size;
        r.name = std::string(orders[o].first) + (width ? ", leaves padded to " + std::to_string(width) : "") + ", " +
                 std::to_string(size) + " places";
        out.push_back(std::move(r));
      }
    }
  }
  return out;
}

std::vector<Phase> ring_phases(const Ring& ring, const std::vector<size_t>& shifts) {
  const std::vector<int32_t> at = ranks_at(ring);
  std::vector<Phase> out;
  out.reserve(shifts.size());
  for (size_t k : shifts) {
    Phase p = ring_phase(ring, at, k);
    if (std::any_of(p.dst.begin(), p.dst.end(), [](int32_t d) { return d >= 0; })) out.push_back(std::move(p));
  }
  return out;
}

std::vector<Phase> ring_phases(const Ring& ring) {
  std::vector<size_t> all(ring.size > 0 ? ring.size - 1 : 0);
  std::iota(all.begin(), all.end(), size_t{1});
  return ring_phases(ring, all);
}

std::vector<size_t> sample_shifts(size_t size, size_t count) {
  std::vector<size_t> out;
  if (size < 2) return out;
  const size_t shifts = size - 1;
  if (count >= shifts) count = shifts;
  for (size_t j = 0; j < count; ++j) out.push_back(1 + (2 * j + 1) * shifts / (2 * count));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace ibroute::schedule
