#include "ibroute/fabric/structure.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "ibroute/fabric/links.hpp"

namespace ibroute::fabric {

namespace {
template <class K>
K mode(const std::map<K, int>& counts, K fallback) {
  K best = fallback;
  int n = -1;
  for (auto& [k, c] : counts)
    if (c > n) best = k, n = c;
  return best;
}
}  // namespace

FabricStructure analyze_structure(const Fabric& f) {
  FabricStructure s;
  const size_t n = f.nodes.size();
  s.level.assign(n, -1);
  LinkIndex links(f);
  std::map<double, int> host_rates, link_rates;
  std::map<std::pair<uint8_t, std::string>, int> widths;
  std::vector<int32_t> frontier;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = f.nodes[i];
    if (node.is_switch()) continue;
    s.level[i] = 0;
    for (int p = 1; p <= node.num_ports(); ++p)
      if (node.ports[p].connected()) {
        if (std::find(s.hosts.begin(), s.hosts.end(), static_cast<int32_t>(i)) == s.hosts.end()) s.hosts.push_back(i);
        int32_t sw = node.ports[p].peer_node;
        ++host_rates[links.gbps(links.id(i, p))];
        if (f.nodes[sw].is_switch() && s.level[sw] != 1) s.level[sw] = 1, frontier.push_back(sw);
      }
  }
  // Levels by breadth-first search upwards from the leaves.
  for (int lvl = 2; !frontier.empty(); ++lvl) {
    std::vector<int32_t> next;
    for (int32_t sw : frontier)
      for (const Port& p : f.nodes[sw].ports)
        if (p.connected() && f.nodes[p.peer_node].is_switch() && s.level[p.peer_node] == -1) {
          s.level[p.peer_node] = lvl;
          next.push_back(p.peer_node);
        }
    frontier.swap(next);
  }
  for (size_t i = 0; i < n; ++i) {
    s.levels = std::max(s.levels, s.level[i]);
    if (s.level[i] == 1) s.leaves.push_back(i);
  }
  for (size_t i = 0; i < n; ++i)
    if (f.nodes[i].is_switch() && s.level[i] == s.levels && s.levels >= 2) s.top.push_back(i);

  // Per leaf: hosts, up-links; link rates; pairs of (leaf, spine) and their link counts.
  std::map<std::pair<int32_t, int32_t>, int> pair_links;
  std::map<int, int> pair_count_hist;
  double max_ratio = 0;
  s.two_level = s.levels == 2;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = f.nodes[i];
    if (!node.is_switch()) continue;
    for (int p = 1; p <= node.num_ports(); ++p) {
      const Port& port = node.ports[p];
      if (!port.connected() || port.state == PortState::down) {
        ++s.ports_down;
        continue;
      }
      const Node& peer = f.nodes[port.peer_node];
      if (port.state != PortState::active && port.state != PortState::unknown)
        if (static_cast<int32_t>(i) < port.peer_node || !peer.is_switch())
          s.inactive.push_back({static_cast<int32_t>(i), p, port.peer_node, port.peer_port});
      if (peer.is_switch() && static_cast<int32_t>(i) < port.peer_node) {
        ++link_rates[links.gbps(links.id(i, p))];
        ++widths[{port.width, port.speed}];
      }
    }
  }
  s.host_gbps = mode(host_rates, 0.0);
  s.link_gbps = mode(link_rates, s.host_gbps);
  auto cw = mode(widths, std::pair<uint8_t, std::string>{0, ""});
  s.common_width = cw.first;
  s.common_speed = cw.second;

  for (int32_t leaf : s.leaves) {
    const Node& node = f.nodes[leaf];
    int hosts = 0, up = 0;
    double down_cap = 0, up_cap = 0;
    for (int p = 1; p <= node.num_ports(); ++p) {
      const Port& port = node.ports[p];
      if (!port_usable(port)) continue;
      int32_t peer = port.peer_node;
      double r = links.gbps(links.id(leaf, p));
      if (s.level[peer] == 0) ++hosts, down_cap += r;
      else if (s.level[peer] > 1) {
        ++up, up_cap += r;
        ++pair_links[{leaf, peer}];
        if (s.level[peer] != s.levels) s.two_level = false;
      }
    }
    s.hosts_per_leaf.push_back(hosts);
    s.uplinks_per_leaf.push_back(up);
    if (up_cap > 0) max_ratio = std::max(max_ratio, down_cap / up_cap);
  }
  // The design ratio: the largest host count against the largest up-link count (a leaf that lost
  // cables does not redefine what the fabric was built for).
  int max_hosts = 0, max_up = 0;
  for (size_t i = 0; i < s.leaves.size(); ++i)
    max_hosts = std::max(max_hosts, s.hosts_per_leaf[i]), max_up = std::max(max_up, s.uplinks_per_leaf[i]);
  s.oversubscription = max_ratio > 0 ? max_ratio : 1;
  if (max_up > 0 && s.link_gbps > 0)
    s.transfer_bound = std::max(1, static_cast<int>(std::ceil(max_hosts * s.host_gbps / (max_up * s.link_gbps) - 1e-9)));

  if (s.two_level) {
    for (auto& [pr, c] : pair_links) ++pair_count_hist[c];
    int common = mode(pair_count_hist, 1);
    for (int32_t leaf : s.leaves)
      for (int32_t spine : s.top) {
        auto it = pair_links.find({leaf, spine});
        int c = it == pair_links.end() ? 0 : it->second;
        for (int k = c; k < common; ++k) s.missing.push_back({leaf, -1, spine, -1});
        for (int k = common; k < c; ++k) s.extra.push_back({leaf, -1, spine, -1});
      }
  }
  for (size_t i = 0; i < n; ++i) {
    const Node& node = f.nodes[i];
    for (int p = 1; p <= node.num_ports(); ++p) {
      const Port& port = node.ports[p];
      if (!port.connected() || static_cast<int32_t>(i) > port.peer_node) continue;
      bool sw_link = node.is_switch() && f.nodes[port.peer_node].is_switch();
      double r = links.gbps(links.id(i, p));
      if (r + 1e-9 < (sw_link ? s.link_gbps : s.host_gbps))
        s.slow.push_back({static_cast<int32_t>(i), p, port.peer_node, port.peer_port});
    }
  }
  return s;
}

RoutingBalance routing_balance(const Fabric& f, const FabricStructure& s) {
  RoutingBalance b;
  LidMap lids(f);
  std::map<int32_t, long> through;
  for (int32_t t : s.top) through[t] = 0;
  for (int32_t leaf : s.leaves) {
    const Node& node = f.nodes[leaf];
    std::map<int, int> per_port;
    for (int p = 1; p <= node.num_ports(); ++p)
      if (port_usable(node.ports[p]) && s.level[node.ports[p].peer_node] > 1) per_port[p] = 0;
    for (uint16_t lid : lids.lids()) {
      const LidOwner* o = lids.owner(lid);
      const Node& dst = f.nodes[o->node];
      if (dst.is_switch() || dst.ports[o->port].peer_node == leaf || lid >= node.lft.size()) continue;
      auto it = per_port.find(node.lft[lid]);
      if (it == per_port.end()) continue;
      ++it->second;
      int32_t up = node.ports[it->first].peer_node;
      if (through.count(up)) ++through[up];
    }
    RoutingBalance::Leaf l{leaf, {per_port.begin(), per_port.end()}, 0, 0};
    if (!l.ports.empty()) {
      l.min = l.max = l.ports[0].second;
      for (auto& [p, c] : l.ports) l.min = std::min(l.min, c), l.max = std::max(l.max, c);
    }
    b.leaves.push_back(std::move(l));
  }
  b.top.assign(through.begin(), through.end());
  return b;
}

int link_capacity(const FabricStructure& s, double link_gbps) {
  if (s.host_gbps <= 0) return s.transfer_bound;
  // A transfer runs at the host link rate; a link twice as fast carries twice as many.
  return std::max(1, static_cast<int>(std::floor(s.transfer_bound * link_gbps / s.host_gbps + 1e-9)));
}

}  // namespace ibroute::fabric
