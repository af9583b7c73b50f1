// The structure method: a two-level tree's leaf-to-leaf transfers edge-coloured by (spine, slot).
#include <algorithm>
#include <climits>

#include "phase_solver.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

namespace {

// Colours: (spine, slot), as many slots per spine as a leaf may send through it at once (within
// `target` transfers per link); at least as many colours as a leaf has hosts.
std::pair<int, int> colours_for(const FabricStructure& s, int spines, int target) {
  int max_up = 0, max_hosts = 0;
  for (size_t x = 0; x < s.leaves.size(); ++x)
    max_up = std::max(max_up, s.uplinks_per_leaf[x]), max_hosts = std::max(max_hosts, s.hosts_per_leaf[x]);
  const int slots = std::max(1, target) * std::max(1, max_up / spines);
  return {slots, std::max(spines * slots, max_hosts)};
}

}  // namespace

int PhaseSolver::spine_of(uint32_t k) const {
  if (opt(k).len != 3) return -1;
  auto it = spine_slot_.find(ctx_.links.node(links(k)[1]));
  return it == spine_slot_.end() ? -1 : it->second;
}

void PhaseSolver::colour_by_spine(const Phase& ph, const std::vector<size_t>& todo, int target) {
  const int spines = static_cast<int>(spine_slot_.size());
  if (spines == 0) return;
  const std::pair<int, int> sc = colours_for(ctx_.structure, spines, target);
  const int slots = sc.first, colours = sc.second;  // not a structured binding: the lambdas below use them
  // Bipartite multigraph: source leaves x destination leaves; edges = transfers between leaves.
  std::unordered_map<int32_t, int> left_id, right_id;
  struct Edge {
    size_t src;
    int u, v, colour;
  };
  std::vector<Edge> edges;
  for (size_t i : todo) {
    const Host& a = hosts_[i];
    const Host& b = hosts_[ph.dst[i]];
    int32_t la = ctx_.fabric.nodes[a.node].ports[a.port].peer_node,
            lb = ctx_.fabric.nodes[b.node].ports[b.port].peer_node;
    if (la == lb) continue;  // within a leaf: one path, nothing to choose
    int u = left_id.emplace(la, static_cast<int>(left_id.size())).first->second;
    int v = right_id.emplace(lb, static_cast<int>(right_id.size())).first->second;
    edges.push_back({i, u, v, -1});
  }
  std::vector<int> at_left(left_id.size() * colours, -1), at_right(right_id.size() * colours, -1);
  auto free_at = [&](const std::vector<int>& at, int x) {
    for (int c = 0; c < colours; ++c)
      if (at[x * colours + c] < 0) return c;
    return -1;
  };
  std::vector<int> path;
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
    int u = edges[e].u, v = edges[e].v;
    int a = free_at(at_left, u), b = free_at(at_right, v);
    if (a < 0 || b < 0) continue;  // degree beyond the colours: leave it to the greedy pass
    if (at_right[v * colours + a] >= 0) {
      // Swap colours a and b along the alternating path that starts at v with colour a;
      // bipartiteness keeps it away from u, after which a is free at both ends.
      path.clear();
      int x = v, c = a;
      bool right = true;
      for (;;) {
        int f = right ? at_right[x * colours + c] : at_left[x * colours + c];
        if (f < 0) break;
        path.push_back(f);
        x = right ? edges[f].u : edges[f].v;
        right = !right;
        c = c == a ? b : a;
      }
      for (int f : path)
        at_left[edges[f].u * colours + edges[f].colour] = -1, at_right[edges[f].v * colours + edges[f].colour] = -1;
      for (int f : path) {
        edges[f].colour = edges[f].colour == a ? b : a;
        at_left[edges[f].u * colours + edges[f].colour] = f;
        at_right[edges[f].v * colours + edges[f].colour] = f;
      }
    }
    edges[e].colour = a;
    at_left[u * colours + a] = e;
    at_right[v * colours + a] = e;
  }
  for (const Edge& e : edges) {
    if (e.colour < 0 || e.colour >= spines * slots) continue;
    int want = e.colour / slots;
    auto [a, b] = range_[e.src];
    uint32_t pick = kNone;
    long pick_load = LONG_MAX;
    for (uint32_t k = a; k < b; ++k) {
      if (spine_of(k) != want) continue;
      long sum = 0;
      const int32_t* ls = links(k);
      for (uint16_t x = 0; x < opt(k).len; ++x) sum += over_[ls[x]] + cap_[ls[x]];  // the load
      if (sum < pick_load) pick = k, pick_load = sum;
    }
    if (pick != kNone) place(e.src, pick);
  }
}

}  // namespace ibroute::schedule
