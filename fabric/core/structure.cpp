#include "ibroute/fabric/structure.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
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

using Adjacency = std::vector<std::vector<int32_t>>;

// Switch neighbours of every switch over usable links, sorted, without duplicates or loopbacks.
Adjacency switch_neighbours(const Fabric& f) {
  Adjacency adj(f.nodes.size());
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    if (!n.is_switch()) continue;
    for (int p = 1; p <= n.num_ports(); ++p) {
      const Port& port = n.ports[p];
      if (port_usable(port) && port.peer_node != static_cast<int32_t>(i) && f.nodes[port.peer_node].is_switch())
        adj[i].push_back(port.peer_node);
    }
    std::sort(adj[i].begin(), adj[i].end());
    adj[i].erase(std::unique(adj[i].begin(), adj[i].end()), adj[i].end());
  }
  return adj;
}

std::vector<int> bfs(const Adjacency& adj, const std::vector<int32_t>& sources) {
  std::vector<int> d(adj.size(), -1);
  std::deque<int32_t> q;
  for (int32_t s : sources)
    if (d[s] < 0) d[s] = 0, q.push_back(s);
  while (!q.empty()) {
    int32_t x = q.front();
    q.pop_front();
    for (int32_t y : adj[x])
      if (d[y] < 0) d[y] = d[x] + 1, q.push_back(y);
  }
  return d;
}

// Director ASICs name their chassis and role in their descriptions: Mellanox "MF0;NAME:MODEL/L05/U1"
// (line) or ".../S12/U1" (spine); QLogic "QLogic 12800-180 GUID=0x00066a00e8001310 L112" (leaf
// ASIC) or "... S205B" (spine), the chassis' GUID inside (a port report carries no system image GUID).
struct AsicName {
  std::string name, model;
  char role = 0;  // 'L', 'S' or 0
  uint64_t chassis_guid = 0;  // QLogic's GUID=
};
AsicName qlogic_name(const std::string& desc) {
  AsicName a;
  const size_t at = desc.find(" GUID=0x"), last = desc.rfind(' ');
  if (desc.rfind("QLogic ", 0) != 0 || at == std::string::npos || last <= at) return a;
  const std::string hex = desc.substr(at + 8, last - at - 8), role = desc.substr(last + 1);
  if (hex.empty() || hex.size() > 16 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return a;
  if (role.size() < 2 || (role[0] != 'L' && role[0] != 'S') || !std::isdigit(static_cast<unsigned char>(role[1]))) return a;
  a.chassis_guid = std::stoull(hex, nullptr, 16);
  a.model = desc.substr(7, at - 7);
  a.role = role[0];
  return a;
}
AsicName asic_name(const std::string& desc) {
  AsicName a;
  size_t semi = desc.find(';'), colon = desc.find(':'), slash = desc.find('/');
  if (semi == std::string::npos || colon == std::string::npos || slash == std::string::npos || !(semi < colon && colon < slash))
    return qlogic_name(desc);
  a.name = desc.substr(semi + 1, colon - semi - 1);
  a.model = desc.substr(colon + 1, slash - colon - 1);
  if (slash + 1 < desc.size() && (desc[slash + 1] == 'L' || desc[slash + 1] == 'S')) a.role = desc[slash + 1];
  return a;
}

// Switch levels ranked upwards: leaves are the switches that carry hosts, level = 1 + distance from
// the nearest leaf. A switch whose hosts are fewer than those of a neighbouring host-carrying
// switch is not a leaf: a spine with a few hosts, or a director's line card with a few hosts
// between edge switches, stays where its cabling puts it (its hosts are "above level 1").
std::vector<int> levels_from_leaves(const Fabric& f, const Adjacency& adj, const std::vector<int>& host_ports) {
  std::vector<int32_t> leaves, switches;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (!f.nodes[i].is_switch()) continue;
    switches.push_back(i);
    if (host_ports[i] == 0) continue;
    bool outranked = false;
    for (int32_t y : adj[i]) outranked |= host_ports[y] > host_ports[i];
    if (!outranked) leaves.push_back(i);
  }
  if (leaves.empty()) leaves = switches;  // no hosts at all: one level
  return bfs(adj, leaves);
}

// Switch levels ranked downwards, as fat-tree routers rank them from their roots: the top is the
// switches without hosts farthest from every host-carrying switch, the lowest level the farthest
// from the top. Hosts on the levels between (a cluster's own switches above blade-chassis switch
// modules, with login or storage nodes) do not turn those into leaves. Empty where no switch is
// without hosts.
std::vector<int> levels_from_top(const Fabric& f, const Adjacency& adj, const std::vector<int>& host_ports) {
  std::vector<int32_t> carrying;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch() && host_ports[i] > 0) carrying.push_back(static_cast<int32_t>(i));
  const std::vector<int> from_hosts = bfs(adj, carrying);
  int far = 0;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch() && host_ports[i] == 0) far = std::max(far, from_hosts[i]);
  std::vector<int32_t> top;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch() && host_ports[i] == 0 && far > 0 && from_hosts[i] == far) top.push_back(static_cast<int32_t>(i));
  if (top.empty()) return {};
  std::vector<int> d = bfs(adj, top);
  int deepest = 0;
  for (int x : d) deepest = std::max(deepest, x);
  for (int& x : d)
    if (x >= 0) x = deepest - x;  // distance above the lowest level, as levels_from_leaves gives it
  return d;
}

// Host-carrying switch pairs whose every shortest path goes down and then up again (or along a
// level) under `dist` (levels - 1 per switch): a ranking under which the routes a subnet
// manager takes are not up*/down* is not the fabric's. O(host switches x links).
long valleys(const Fabric& f, const Adjacency& adj, const std::vector<int>& host_ports, const std::vector<int>& dist) {
  long count = 0;
  std::vector<char> up(f.nodes.size()), updown(f.nodes.size());
  std::vector<int32_t> order;
  for (size_t a = 0; a < f.nodes.size(); ++a) {
    if (!f.nodes[a].is_switch() || host_ports[a] == 0 || dist[a] < 0) continue;
    const std::vector<int> d = bfs(adj, {static_cast<int32_t>(a)});
    order.clear();
    for (size_t x = 0; x < d.size(); ++x)
      if (d[x] >= 0) order.push_back(static_cast<int32_t>(x));
    std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return d[x] < d[y]; });
    for (int32_t x : order) {
      up[x] = static_cast<int32_t>(a) == x, updown[x] = up[x];
      for (int32_t y : adj[x]) {
        if (d[y] != d[x] - 1 || dist[x] < 0 || dist[y] < 0) continue;
        if (up[y] && dist[x] == dist[y] + 1) up[x] = 1;
        if ((up[y] || updown[y]) && dist[x] == dist[y] - 1) updown[x] = 1;
      }
      updown[x] |= up[x];
      count += host_ports[x] > 0 && !updown[x];
    }
  }
  return count;
}

// Whether every switch link joins adjacent levels under `dist`.
bool adjacent_levels_only(const Adjacency& adj, const std::vector<int>& dist) {
  for (size_t x = 0; x < adj.size(); ++x)
    for (int32_t y : adj[x])
      if (dist[x] >= 0 && dist[y] >= 0 && std::abs(dist[x] - dist[y]) != 1) return false;
  return true;
}

// Hosts on the switches of the lowest level under `dist`.
long lowest_level_hosts(const std::vector<int>& host_ports, const std::vector<int>& dist) {
  long n = 0;
  for (size_t x = 0; x < dist.size(); ++x) n += dist[x] == 0 ? host_ports[x] : 0;
  return n;
}

// The levels: ranked from the leaves, unless that leaves pairs of host switches with no
// up*/down* shortest path between them while the ranking from the top leaves fewer, joins only
// adjacent levels and keeps at least as many hosts on its lowest level (blade switch modules
// below switches that carry login or storage hosts). Fabrics cabled ad hoc, whose ranking from
// the top would lift most hosts off the lowest level, keep the ranking from the leaves.
void rank_levels(const Fabric& f, const Adjacency& adj, const std::vector<int>& host_ports, FabricStructure& s) {
  std::vector<int> d = levels_from_leaves(f, adj, host_ports);
  if (const long v = valleys(f, adj, host_ports, d); v > 0) {
    std::vector<int> top = levels_from_top(f, adj, host_ports);
    if (!top.empty() && adjacent_levels_only(adj, top) && lowest_level_hosts(host_ports, top) >= lowest_level_hosts(host_ports, d) &&
        valleys(f, adj, host_ports, top) < v)
      d = std::move(top);
  }
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch()) s.level[i] = d[i] < 0 ? -1 : d[i] + 1;
}

// A switch that host traffic can cross lies on a shortest path between two host-carrying switches
// (routing engines route on shortest paths). One that lies on none above every one that does — a
// director's line ASIC with no outside cable, reached only from the spine ASICs — would otherwise
// rank as a level above the top and set a bound of its own: it is taken out of the levels and
// listed as unused. Per host-carrying
// switch a: BFS, then in decreasing distance every switch that leads (one hop further from a) to
// a switch that leads on to another host-carrying switch is crossed. O(host switches x links).
void drop_uncrossed(const Fabric& f, const Adjacency& adj, const std::vector<int>& host_ports, FabricStructure& s) {
  std::vector<int32_t> ends;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch() && host_ports[i] > 0 && s.level[i] >= 1) ends.push_back(static_cast<int32_t>(i));
  if (ends.size() < 2) return;
  std::vector<char> crossed(f.nodes.size(), 0), leads(f.nodes.size(), 0);
  std::vector<int32_t> order;
  for (int32_t a : ends) {
    std::vector<int> d = bfs(adj, {a});
    order.clear();
    for (size_t x = 0; x < d.size(); ++x)
      if (d[x] >= 0) order.push_back(static_cast<int32_t>(x));
    std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return d[x] > d[y]; });
    for (int32_t x : order) {
      leads[x] = x != a && host_ports[x] > 0;
      for (int32_t y : adj[x])
        if (d[y] == d[x] + 1 && leads[y]) leads[x] = 1;
      if (leads[x]) crossed[x] = 1;
    }
  }
  // Only where it would make a level of its own above every crossed switch: an uncrossed switch
  // among the others (a core that lost its cable to one pod) stays, so that the missing cable is
  // named where it is missing.
  int top = 0;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch() && (crossed[i] || host_ports[i] > 0)) top = std::max(top, s.level[i]);
  // A director's spine ASIC stays where edge switches share line ASICs (every shortest path then
  // turns at a line ASIC, yet routes may climb through the spines): an uncrossed switch directly
  // above a crossed one of its own chassis that has cables out of the chassis. Not the uncabled
  // line ASIC above the spines (they have none).
  const auto chassis = [&](int32_t x) { return f.nodes[x].sysimg_guid; };
  auto cabled_out = [&](int32_t y) {
    return std::any_of(adj[y].begin(), adj[y].end(), [&](int32_t z) { return chassis(z) != chassis(y); }) || host_ports[y] > 0;
  };
  auto chassis_above_crossed = [&](size_t i) {
    if (!chassis(i)) return false;
    for (int32_t y : adj[i])
      if (crossed[y] && s.level[y] == s.level[i] - 1 && chassis(y) == chassis(i) && cabled_out(y)) return true;
    return false;
  };
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch() && s.level[i] > top && host_ports[i] == 0 && !crossed[i] && !chassis_above_crossed(i)) {
      s.level[i] = -1;
      s.unused.push_back(static_cast<int32_t>(i));
    }
}

// The ASICs of one system image GUID, split by their cabling: a chassis is the ASICs joined by
// links among themselves (line to spine ASICs inside). Where a vendor ships one placeholder GUID
// for every chip (and one description), the chassis of a multi-director fabric share it; only
// their internal cabling tells them apart (their outside cables go to edge switches).
std::vector<std::vector<int32_t>> cabled_groups(const Adjacency& adj, const std::vector<int32_t>& asics) {
  std::map<int32_t, int> group;
  for (int32_t a : asics) group[a] = -1;
  std::vector<std::vector<int32_t>> out;
  for (int32_t a : asics) {
    if (group[a] >= 0) continue;
    group[a] = static_cast<int>(out.size());
    out.push_back({a});
    for (size_t k = 0; k < out.back().size(); ++k)
      for (int32_t y : adj[out.back()[k]])
        if (auto it = group.find(y); it != group.end() && it->second < 0) it->second = group[a], out.back().push_back(y);
  }
  for (auto& g : out) std::sort(g.begin(), g.end());
  return out;
}

bool cabled_out_of(const Fabric& f, int32_t asic, const std::vector<int32_t>& chassis) {
  for (const Port& p : f.nodes[asic].ports)
    if (p.connected() && p.peer_node != asic && !std::binary_search(chassis.begin(), chassis.end(), p.peer_node)) return true;
  return false;
}

void find_chassis(const Fabric& f, const Adjacency& adj, FabricStructure& s) {
  std::map<uint64_t, std::vector<int32_t>> by_sysimg;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (!f.nodes[i].is_switch()) continue;
    const uint64_t guid = f.nodes[i].sysimg_guid ? f.nodes[i].sysimg_guid : asic_name(f.nodes[i].reported_desc()).chassis_guid;
    if (guid) by_sysimg[guid].push_back(i);
  }
  int in_chassis = 0, switches = 0;
  for (const Node& n : f.nodes) switches += n.is_switch();
  for (auto& [guid, all] : by_sysimg) {
    if (all.size() < 2) continue;
    const std::vector<std::vector<int32_t>> groups = cabled_groups(adj, all);
    int k = 0;
    for (const std::vector<int32_t>& asics : groups) {
      if (asics.size() < 2) continue;
      ++k;
      Chassis c;
      c.sysimg_guid = guid;
      c.asics = asics;
      for (int32_t a : asics) {
        AsicName an = asic_name(f.nodes[a].reported_desc());
        if (c.name.empty()) c.name = an.name, c.model = an.model;
        // Where the description does not say: a line ASIC has cables out of the chassis (to an
        // edge switch or a host), a spine ASIC only inside. (An uncabled line ASIC counts as a spine.)
        if (!an.role) an.role = cabled_out_of(f, a, asics) ? 'L' : 'S';
        c.line_asics += an.role == 'L';
        c.spine_asics += an.role == 'S';
      }
      // Chassis sharing a GUID and no name in their descriptions: numbered in the order of their ASICs.
      if (c.name.empty()) c.name = guid_hex(guid) + (groups.size() > 1 ? "#" + std::to_string(k) : "");
      in_chassis += static_cast<int>(asics.size());
      s.chassis.push_back(std::move(c));
    }
  }
  s.standalone_switches = switches - in_chassis;
}
// The rail groups of the hosts' machines, and the leaves (level 1, carrying hosts) outside them
// where there are any: they carry only HCAs of named machines that are in no group.
// Returns, per node, whether it is such an other leaf.
std::vector<char> find_rail_groups(const Fabric& f, const std::vector<int>& host_ports, FabricStructure& s) {
  std::vector<char> other(f.nodes.size(), 0);
  const Machines m = group_machines(f);
  s.rail_groups = rail_groups(f, m);
  std::vector<char> grouped(f.nodes.size(), 0);
  for (RailGroup& g : s.rail_groups) {
    if (!std::all_of(g.leaves.begin(), g.leaves.end(), [&](int32_t sw) { return s.level[sw] == 1; })) g.leaves.clear();
    for (int32_t sw : g.leaves) grouped[sw] = 1;
  }
  std::erase_if(s.rail_groups, [](const RailGroup& g) { return g.leaves.empty(); });
  if (s.rail_groups.empty()) return other;
  // A leaf apart only on evidence: each of its hosts a named machine that is in no group (an HCA
  // whose machine is not known may be a compute rail: its leaf stays a compute leaf).
  std::vector<char> in_group(m.machines.size(), 0);
  for (const RailGroup& g : s.rail_groups)
    for (int32_t x : g.machines) in_group[x] = 1;
  for (int32_t leaf : s.leaves) {
    if (grouped[leaf] || host_ports[leaf] == 0) continue;
    bool apart = true;
    for (const Port& p : f.nodes[leaf].ports)
      if (p.connected() && is_host(f.nodes[p.peer_node]))
        apart &= m.machine_of[p.peer_node] >= 0 && !in_group[m.machine_of[p.peer_node]];
    if (apart) s.other_leaves.push_back(leaf), other[leaf] = 1;
  }
  return other;
}

// Missing and extra links: two levels, per (leaf, spine) pair against the common count; above,
// per switch against its level's common up-link count. Other leaves (rails) have their own design.
void find_missing(const Fabric& f, const std::map<std::pair<int32_t, int32_t>, int>& pair_links,
                  const std::vector<int>& up_count, const std::vector<char>& other, FabricStructure& s) {
  if (s.two_level) {
    // Every (leaf, spine) pair should have the common number of links.
    std::map<int, int> pair_count_hist;
    for (auto& [pr, c] : pair_links)
      if (!other[pr.first]) ++pair_count_hist[c];
    int common = mode(pair_count_hist, 1);
    for (int32_t leaf : s.leaves)
      for (int32_t spine : s.top) {
        if (other[leaf]) break;  // a management or storage leaf: up-links by its own design
        auto it = pair_links.find({leaf, spine});
        int c = it == pair_links.end() ? 0 : it->second;
        for (int k = c; k < common; ++k) s.missing.push_back({leaf, -1, spine, -1});
        for (int k = common; k < c; ++k) s.extra.push_back({leaf, -1, spine, -1});
      }
  } else if (s.levels > 2) {
    // Above two levels pairs need not all be cabled (pods): every switch below the top should
    // have its level's usual number of up-links.
    for (size_t i = 0; i < f.nodes.size(); ++i) {
      if (!f.nodes[i].is_switch() || s.level[i] < 1 || s.level[i] >= s.levels || other[i]) continue;
      const int common = s.per_level[s.level[i] - 1].common_up;
      for (int k = up_count[i]; k < common; ++k) s.missing.push_back({static_cast<int32_t>(i), -1, -1, -1});
      for (int k = common; k < up_count[i]; ++k) s.extra.push_back({static_cast<int32_t>(i), -1, -1, -1});
    }
}
}

}  // namespace

FabricStructure analyze_structure(const Fabric& f) {
  FabricStructure s;
  const size_t n = f.nodes.size();
  s.level.assign(n, -1);
  LinkIndex links(f);
  Adjacency adj = switch_neighbours(f);
  std::map<double, int> host_rates, link_rates;
  std::map<std::pair<uint8_t, std::string>, int> widths;

  // Hosts and the nodes that are not hosts; host ports per switch.
  std::vector<int> host_ports(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = f.nodes[i];
    if (node.is_switch()) continue;
    bool cabled = false;
    for (int p = 1; p <= node.num_ports(); ++p) cabled |= node.ports[p].connected();
    if (!is_host(node)) {
      if (cabled || node.type == NodeType::router) s.not_hosts.push_back(i);
      continue;
    }
    if (!cabled) continue;
    s.level[i] = 0;
    s.hosts.push_back(i);
    for (int p = 1; p <= node.num_ports(); ++p)
      if (node.ports[p].connected()) {
        ++host_rates[links.gbps(links.id(i, p))];
        if (f.nodes[node.ports[p].peer_node].is_switch() && port_usable(node.ports[p])) ++host_ports[node.ports[p].peer_node];
      }
  }
  rank_levels(f, adj, host_ports, s);
  drop_uncrossed(f, adj, host_ports, s);
  find_chassis(f, adj, s);
  for (size_t i = 0; i < n; ++i) {
    s.levels = std::max(s.levels, s.level[i]);
    if (f.nodes[i].is_switch() && s.level[i] == 1) s.leaves.push_back(i);
  }
  for (size_t i = 0; i < n; ++i)
    if (f.nodes[i].is_switch() && s.level[i] == s.levels && s.levels >= 2) s.top.push_back(i);
  const std::vector<char> other = find_rail_groups(f, host_ports, s);
  for (int32_t h : s.hosts)
    for (const Port& p : f.nodes[h].ports)
      if (p.connected() && f.nodes[p.peer_node].is_switch() && s.level[p.peer_node] > 1) {
        s.hosts_above.push_back(h);
        break;
      }

  // Every switch port: up, down, lateral; loopbacks; rates and widths of switch links.
  s.per_level.resize(std::max(s.levels, 0));
  for (int l = 0; l < s.levels; ++l) s.per_level[l].level = l + 1;
  std::vector<int> up_count(n, 0), down_count(n, 0);
  std::vector<double> up_cap(n, 0), down_cap(n, 0);
  std::map<std::pair<int32_t, int32_t>, int> pair_links;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = f.nodes[i];
    if (!node.is_switch()) continue;
    for (int p = 1; p <= node.num_ports(); ++p) {
      const Port& port = node.ports[p];
      if (!port.connected() || port.state == PortState::down) {
        ++s.ports_down;
        continue;
      }
      const int32_t peer = port.peer_node;
      const Node& pn = f.nodes[peer];
      if (peer == static_cast<int32_t>(i)) {
        if (p < port.peer_port) s.loopbacks.push_back({peer, p, peer, port.peer_port});
        continue;
      }
      if (port.state != PortState::active && port.state != PortState::unknown)
        if (static_cast<int32_t>(i) < peer || !pn.is_switch()) s.inactive.push_back({static_cast<int32_t>(i), p, peer, port.peer_port});
      if (pn.is_switch() && static_cast<int32_t>(i) < peer) {
        ++link_rates[links.gbps(links.id(i, p))];
        ++widths[{port.width, port.speed}];
        if (s.level[i] > 0 && s.level[peer] > 0 && std::abs(s.level[i] - s.level[peer]) != 1)
          s.lateral.push_back({static_cast<int32_t>(i), p, peer, port.peer_port});
      }
      if (!port_usable(port) || s.level[i] <= 0) continue;
      const double r = links.gbps(links.id(i, p));
      if (pn.is_switch() && s.level[peer] == s.level[i] + 1) {
        ++up_count[i], up_cap[i] += r;
        ++pair_links[{static_cast<int32_t>(i), peer}];
      } else if ((pn.is_switch() && s.level[peer] == s.level[i] - 1) || s.level[peer] == 0) {
        ++down_count[i], down_cap[i] += r;
      }
    }
  }
  s.tree = s.lateral.empty();
  s.host_gbps = mode(host_rates, 0.0);
  s.link_gbps = mode(link_rates, s.host_gbps);
  auto cw = mode(widths, std::pair<uint8_t, std::string>{0, ""});
  s.common_width = cw.first;
  s.common_speed = cw.second;

  // Per level: totals, the usual up/down counts, and the bound. The design ratio takes the
  // largest down count against the largest up count (a switch that lost cables does not redefine
  // what the fabric was built for); the bound compounds upwards.
  double below = 0;  // transfers each down-link of the next level carries
  for (LevelInfo& lv : s.per_level) {
    std::map<int, int> ups, downs;
    int max_up = 0, max_down = 0, max_hosts = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!f.nodes[i].is_switch() || s.level[i] != lv.level) continue;
      ++lv.switches;
      lv.up_links += up_count[i], lv.down_links += down_count[i];
      lv.up_gbps += up_cap[i], lv.down_gbps += down_cap[i];
      lv.hosts += host_ports[i];
      ++ups[up_count[i]], ++downs[down_count[i]];
      max_up = std::max(max_up, up_count[i]), max_down = std::max(max_down, down_count[i]);
      max_hosts = std::max(max_hosts, host_ports[i]);
    }
    lv.common_up = mode(ups, 0);
    lv.common_down = mode(downs, 0);
    if (max_up == 0 || s.link_gbps <= 0) {
      lv.bound = std::max(1, static_cast<int>(std::ceil(below - 1e-9)));
      continue;
    }
    double exact = lv.level == 1 ? max_hosts * s.host_gbps / (max_up * s.link_gbps) : below * max_down / max_up;
    lv.bound = std::max(1, static_cast<int>(std::ceil(exact - 1e-9)));
    s.transfer_bound = std::max(s.transfer_bound, lv.bound);
    below = exact;
  }

  double max_ratio = 0;
  for (int32_t leaf : s.leaves) {
    s.hosts_per_leaf.push_back(host_ports[leaf]);
    s.uplinks_per_leaf.push_back(up_count[leaf]);
    double hosts_cap = 0;
    for (int p = 1; p <= f.nodes[leaf].num_ports(); ++p) {
      const Port& port = f.nodes[leaf].ports[p];
      if (port_usable(port) && s.level[port.peer_node] == 0) hosts_cap += links.gbps(links.id(leaf, p));
    }
    if (up_cap[leaf] > 0 && !other[leaf]) max_ratio = std::max(max_ratio, hosts_cap / up_cap[leaf]);
  }
  s.oversubscription = max_ratio > 0 ? max_ratio : 1;
  s.two_level = s.levels == 2;

  find_missing(f, pair_links, up_count, other, s);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = f.nodes[i];
    for (int p = 1; p <= node.num_ports(); ++p) {
      const Port& port = node.ports[p];
      if (!port.connected() || static_cast<int32_t>(i) >= port.peer_node) continue;  // once; loopbacks apart
      if (s.level[i] < 0 && s.level[port.peer_node] < 0) continue;
      bool sw_link = node.is_switch() && f.nodes[port.peer_node].is_switch();
      double r = links.gbps(links.id(i, p));
      if (r + 1e-9 < (sw_link ? s.link_gbps : s.host_gbps)) s.slow.push_back({static_cast<int32_t>(i), p, port.peer_node, port.peer_port});
    }
  }
  return s;
}

std::string describe_chassis(const FabricStructure& s) {
  std::map<std::string, std::pair<int, size_t>> models;  // model -> (chassis, ASICs)
  for (const Chassis& c : s.chassis) {
    auto& m = models[c.model.empty() ? "chassis" : c.model];
    ++m.first;
    m.second += c.asics.size();
  }
  std::string out;
  for (auto& [model, m] : models)
    out += (out.empty() ? "" : " + ") + std::to_string(m.first) + " " + model + (model == "chassis" ? "" : m.first > 1 ? " directors" : " director") +
           " (" + std::to_string(m.second) + " ASICs)";
  if (s.standalone_switches)
    out += (out.empty() ? "" : " + ") + std::to_string(s.standalone_switches) + (s.chassis.empty() ? " switch" : " edge switch") +
           (s.standalone_switches > 1 ? "es" : "");
  out += ", " + std::to_string(s.levels) + " switch level" + (s.levels == 1 ? "" : "s");
  return out;
}

namespace {

// Per switch and port: the host-to-host routes that leave by it — every host-carrying switch to
// every host LID not its own, walked through the LFTs. Traffic reaches an upper switch only for
// the destinations its lower switches send it, so an up-port with LFT entries may carry none.
std::vector<std::vector<long>> routes_per_port(const Fabric& f, const FabricStructure& s, const std::vector<uint16_t>& host_lids,
                                               const LidMap& lids) {
  std::vector<std::vector<long>> out(f.nodes.size());
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch()) out[i].assign(f.nodes[i].ports.size(), 0);
  std::vector<char> carries(f.nodes.size(), 0);
  for (int32_t h : s.hosts)
    for (const Port& p : f.nodes[h].ports)
      if (p.connected() && f.nodes[p.peer_node].is_switch()) carries[p.peer_node] = 1;
  for (size_t src = 0; src < f.nodes.size(); ++src) {
    if (!carries[src]) continue;
    for (uint16_t lid : host_lids) {
      const LidOwner* o = lids.owner(lid);
      const Port& dp = f.nodes[o->node].ports[o->port];
      if (dp.peer_node == static_cast<int32_t>(src)) continue;  // its own host: no switch link
      int32_t sw = static_cast<int32_t>(src);
      for (int hop = 0; hop < 64; ++hop) {
        const Node& n = f.nodes[sw];
        if (!n.lft_known(lid) || lid >= n.lft.size()) break;
        const int port = n.lft[lid];
        if (port <= 0 || port > n.num_ports() || !port_usable(n.ports[port])) break;
        ++out[sw][port];
        const int32_t next = n.ports[port].peer_node;
        if (!f.nodes[next].is_switch()) break;
        sw = next;
      }
    }
  }
  return out;
}

}  // namespace

RoutingBalance routing_balance(const Fabric& f, const FabricStructure& s) {
  RoutingBalance b;
  LidMap lids(f);
  std::vector<uint16_t> host_lids;
  for (uint16_t lid : lids.lids()) {
    const LidOwner* o = lids.owner(lid);
    if (is_host(f.nodes[o->node])) host_lids.push_back(lid);
  }
  const std::vector<std::vector<long>> routes = routes_per_port(f, s, host_lids, lids);
  std::map<int32_t, long> through;
  for (int32_t t : s.top) through[t] = 0;
  if (s.levels > 2) b.upper.resize(s.levels - 2);
  b.idle_per_level.assign(std::max(s.levels - 1, 0), 0);
  for (size_t sw = 0; sw < f.nodes.size(); ++sw) {
    const Node& node = f.nodes[sw];
    const int lvl = s.level[sw];
    if (!node.is_switch() || lvl < 1 || lvl >= s.levels) continue;
    std::map<int, int> per_port;
    for (int p = 1; p <= node.num_ports(); ++p)
      if (port_usable(node.ports[p]) && node.ports[p].peer_node != static_cast<int32_t>(sw) &&
          s.level[node.ports[p].peer_node] == lvl + 1)
        per_port[p] = 0;
    if (node.lft_read)
      for (uint16_t lid : host_lids) {
        if (lid >= node.lft.size()) continue;
        auto it = per_port.find(node.lft[lid]);
        if (it != per_port.end()) ++it->second;
      }
    RoutingBalance::Leaf l{static_cast<int32_t>(sw), {per_port.begin(), per_port.end()}, 0, 0, {}, 0, 0};
    long routed_up = 0;
    for (auto& [p, c] : l.ports) {
      const long r = routes[sw][p];
      l.routes.emplace_back(p, r);
      routed_up += r;
      if (lvl == s.levels - 1 && through.count(node.ports[p].peer_node)) through[node.ports[p].peer_node] += r;
    }
    if (!l.ports.empty()) {
      l.min = l.max = l.ports[0].second;
      for (auto& [p, c] : l.ports) l.min = std::min(l.min, c), l.max = std::max(l.max, c);
      l.route_min = l.route_max = l.routes[0].second;
      for (auto& [p, r] : l.routes) l.route_min = std::min(l.route_min, r), l.route_max = std::max(l.route_max, r);
    }
    // Idle: an up-link no host-to-host route takes while its switch sends routes up.
    if (routed_up > 0)
      for (auto& [p, r] : l.routes)
        if (r == 0) {
          b.idle.push_back({static_cast<int32_t>(sw), p, node.ports[p].peer_node, node.ports[p].peer_port});
          ++b.idle_per_level[lvl - 1];
        }
    (lvl == 1 ? b.leaves : b.upper[lvl - 2]).push_back(std::move(l));
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
