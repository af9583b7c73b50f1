#include "level_groups.hpp"

#include <numeric>

#include "ibroute/fabric/routes.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

LevelGroups level_groups(const EvalContext& ctx) {
  const Fabric& f = ctx.fabric;
  const auto& level = ctx.structure.level;
  LevelGroups out;
  std::vector<int32_t> up(f.nodes.size());
  auto find = [&](int32_t x) {
    while (up[x] != x) x = up[x] = up[up[x]];
    return x;
  };
  for (int top = 1; top < ctx.structure.levels; ++top) {
    auto inside = [&](int32_t node) { return node >= 0 && level[node] >= 1 && level[node] <= top; };
    std::iota(up.begin(), up.end(), 0);
    for (size_t x = 0; x < f.nodes.size(); ++x) {
      if (!inside(static_cast<int32_t>(x))) continue;
      const Node& sw = f.nodes[x];
      for (int p = 1; p <= sw.num_ports(); ++p) {
        const Port& port = sw.ports[p];
        if (port_usable(port) && f.nodes[port.peer_node].is_switch() && inside(port.peer_node))
          up[find(static_cast<int32_t>(x))] = find(port.peer_node);
      }
    }
    std::vector<int32_t>& g = out.groups.emplace_back(f.nodes.size(), -1);
    for (size_t x = 0; x < f.nodes.size(); ++x)
      if (inside(static_cast<int32_t>(x))) g[x] = find(static_cast<int32_t>(x));
  }
  return out;
}

}  // namespace ibroute::schedule
