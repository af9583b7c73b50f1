#include "ibroute/fabric/synthetic.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <unordered_map>

namespace ibroute::fabric {

namespace {
int add(Fabric& f, NodeType t, std::string desc, int nports, uint64_t guid) {
  Node n;
  n.type = t;
  n.desc = std::move(desc);
  n.guid = guid;
  n.ports.resize(nports + 1);
  for (int p = 0; p <= nports; ++p) n.ports[p].guid = t == NodeType::sw ? guid : guid + p;
  n.ports[0].state = PortState::active;
  f.nodes.push_back(std::move(n));
  return static_cast<int>(f.nodes.size()) - 1;
}

void cable(Fabric& f, int a, int pa, int b, int pb, const std::string& speed) {
  f.link(a, pa, b, pb);
  for (auto [n, p] : {std::pair{a, pa}, {b, pb}}) {
    Port& port = f.nodes[n].ports[p];
    port.state = PortState::active;
    port.width = 4;
    port.speed = speed;
  }
}

std::string host_name(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "node%d-%03d", i / 40 + 1, i % 40 + 1);
  return buf;
}
}  // namespace

Fabric build_fat_tree(const FatTreeSpec& s) {
  if (s.levels != 2 && s.levels != 3) throw std::invalid_argument("fat-tree: 2 or 3 levels");
  const bool three = s.levels == 3;
  const int nleaves = three ? s.pods * s.leaves : s.leaves;
  const int up = three ? s.aggs : s.uplinks;
  const int slots = nleaves * s.hosts_per_leaf;
  const int nhosts = s.hosts > 0 ? std::min(s.hosts, slots) : slots;
  if (!three && (s.spines <= 0 || up % s.spines))
    throw std::invalid_argument("fat-tree: uplinks must be a multiple of spines");
  if (three && (s.aggs <= 0 || s.cores % s.aggs))
    throw std::invalid_argument("fat-tree: cores must be a multiple of aggs");

  Fabric f;
  std::vector<int> names(nhosts);
  std::iota(names.begin(), names.end(), 0);
  if (s.shuffle_names) std::shuffle(names.begin(), names.end(), std::mt19937(s.seed));
  std::vector<int> host(nhosts);
  for (int i = 0; i < nhosts; ++i) host[i] = add(f, NodeType::ca, host_name(names[i]), 1, 0x100000 + 2 * uint64_t(i));
  uint64_t guid = 0x200000;
  char buf[32];
  std::vector<int> leaf(nleaves);
  for (int l = 0; l < nleaves; ++l) {
    std::snprintf(buf, sizeof buf, "leaf%03d", l + 1);
    leaf[l] = add(f, NodeType::sw, buf, s.hosts_per_leaf + up, guid++);
  }
  // Fewer hosts than ports: spread them over the leaves (no leaf left empty), filling ports in order.
  const bool full = nhosts == slots;
  for (int i = 0; i < nhosts; ++i) {
    int l = full ? i / s.hosts_per_leaf : i % nleaves, p = full ? i % s.hosts_per_leaf : i / nleaves;
    cable(f, host[i], 1, leaf[l], p + 1, s.speed);
  }
  if (!three) {
    const int per = up / s.spines;
    for (int sp = 0; sp < s.spines; ++sp) {
      std::snprintf(buf, sizeof buf, "spine%02d", sp + 1);
      int spine = add(f, NodeType::sw, buf, nleaves * per, guid++);
      for (int l = 0; l < nleaves; ++l)
        for (int k = 0; k < per; ++k)
          cable(f, leaf[l], s.hosts_per_leaf + 1 + sp + k * s.spines, spine, l * per + k + 1, s.speed);
    }
  } else {
    const int cores_per_agg = s.cores / s.aggs;
    std::vector<int> core(s.cores);
    for (int c = 0; c < s.cores; ++c) {
      std::snprintf(buf, sizeof buf, "core%03d", c + 1);
      core[c] = add(f, NodeType::sw, buf, s.pods, guid++);
    }
    for (int p = 0; p < s.pods; ++p)
      for (int a = 0; a < s.aggs; ++a) {
        std::snprintf(buf, sizeof buf, "agg%02d-%02d", p + 1, a + 1);
        int agg = add(f, NodeType::sw, buf, s.leaves + cores_per_agg, guid++);
        for (int l = 0; l < s.leaves; ++l)
          cable(f, leaf[p * s.leaves + l], s.hosts_per_leaf + 1 + a, agg, l + 1, s.speed);
        for (int k = 0; k < cores_per_agg; ++k)
          cable(f, agg, s.leaves + 1 + k, core[a * cores_per_agg + k], p + 1, s.speed);
      }
  }
  // LIDs: hosts first, leaf by leaf and port by port (the order a sweep finds them in), aligned
  // to 2^LMC as OpenSM does; then one LID per switch.
  const uint32_t step = 1u << s.lmc;
  uint32_t lid = step;
  for (int l : leaf)
    for (const Port& p : f.nodes[l].ports)
      if (p.connected() && !f.nodes[p.peer_node].is_switch()) {
        f.nodes[p.peer_node].ports[1].base_lid = static_cast<uint16_t>(lid);
        f.nodes[p.peer_node].ports[1].lmc = s.lmc;
        lid += step;
      }
  for (Node& n : f.nodes)
    if (n.is_switch()) n.ports[0].base_lid = static_cast<uint16_t>(lid++);
  if (lid > static_cast<uint32_t>(kMaxLid))
    throw std::invalid_argument("fat-tree: more LIDs than the unicast range holds (lower the LMC)");
  route_dmodk(f);
  return f;
}

namespace {

// What both rules need: every switch's LFT cleared, hop distances between switches, each LID's
// destination switch, and the ports one hop closer to it.
struct TreeTables {
  LidMap lids;
  std::vector<int> switches, sw_index;
  size_t ns = 0;
  std::vector<uint16_t> dist;  // ns x ns

  explicit TreeTables(Fabric& f) : lids(f) {
    const int n = static_cast<int>(f.nodes.size());
    const uint32_t top = lids.lids().empty() ? 0 : lids.lids().back();
    for (int i = 0; i < n; ++i)
      if (f.nodes[i].is_switch()) {
        switches.push_back(i);
        f.nodes[i].lft.assign(top + 1, kNoRoute);
        f.nodes[i].lft_read = true;
      }
    sw_index.assign(n, -1);
    for (size_t k = 0; k < switches.size(); ++k) sw_index[switches[k]] = static_cast<int>(k);
    ns = switches.size();
    // Hop distances between switches, by breadth-first search from each switch.
    dist.assign(ns * ns, std::numeric_limits<uint16_t>::max());
    for (size_t a = 0; a < ns; ++a) {
      std::deque<int> q{switches[a]};
      dist[a * ns + a] = 0;
      while (!q.empty()) {
        int u = q.front();
        q.pop_front();
        for (const Port& p : f.nodes[u].ports)
          if (p.connected() && f.nodes[p.peer_node].is_switch() &&
              dist[a * ns + sw_index[p.peer_node]] == std::numeric_limits<uint16_t>::max()) {
            dist[a * ns + sw_index[p.peer_node]] = dist[a * ns + sw_index[u]] + 1;
            q.push_back(p.peer_node);
          }
      }
    }
  }
  // The switch a LID ends at (its own, or the one its CA port is cabled to), -1 if none.
  int target(const Fabric& f, uint16_t lid) const {
    const LidOwner* o = lids.owner(lid);
    const Node& dst = f.nodes[o->node];
    const int t = dst.is_switch() ? o->node : dst.ports[o->port].peer_node;
    return t >= 0 && f.nodes[t].is_switch() ? sw_index[t] : -1;
  }
  // The LFT entry of the target switch itself: the CA's port, or 0 for the switch's own LID.
  static uint8_t last_hop(const Fabric& f, const LidOwner* o) {
    const Node& dst = f.nodes[o->node];
    return dst.is_switch() ? 0 : static_cast<uint8_t>(dst.ports[o->port].peer_port);
  }
  // Ports of `sw` one hop closer to target switch t.
  void closer(const Fabric& f, int sw, size_t t, std::vector<int>& cand) const {
    const Node& node = f.nodes[sw];
    const uint16_t d = dist[t * ns + sw_index[sw]];
    cand.clear();
    for (int p = 1; p <= node.num_ports(); ++p) {
      const Port& port = node.ports[p];
      if (port.connected() && f.nodes[port.peer_node].is_switch() && dist[t * ns + sw_index[port.peer_node]] + 1 == d)
        cand.push_back(p);
    }
  }
};

}  // namespace

void route_dmodk(Fabric& f) {
  const int n = static_cast<int>(f.nodes.size());
  TreeTables tt(f);
  const LidMap& lids = tt.lids;
  const std::vector<int>& switches = tt.switches;
  const size_t ns = tt.ns;
  // Switch levels (1: with hosts) and the up-degree of each level, for d-mod-k divisors.
  std::vector<int> level(n, 0);
  std::deque<int> q;
  for (int sw : switches)
    for (const Port& p : f.nodes[sw].ports)
      if (p.connected() && !f.nodes[p.peer_node].is_switch() && level[sw] == 0) level[sw] = 1, q.push_back(sw);
  while (!q.empty()) {
    int u = q.front();
    q.pop_front();
    for (const Port& p : f.nodes[u].ports)
      if (p.connected() && f.nodes[p.peer_node].is_switch() && level[p.peer_node] == 0)
        level[p.peer_node] = level[u] + 1, q.push_back(p.peer_node);
  }
  std::vector<long> up_degree(n + 2, 1);
  for (int sw : switches) {
    long up = 0;
    for (const Port& p : f.nodes[sw].ports)
      up += p.connected() && f.nodes[p.peer_node].is_switch() && level[p.peer_node] > level[sw];
    up_degree[level[sw]] = std::max(up_degree[level[sw]], std::max(1L, up));
  }
  std::vector<long> divisor(n + 2, 1);
  for (size_t l = 2; l < divisor.size(); ++l) divisor[l] = divisor[l - 1] * up_degree[l - 1];
  // Host index of each CA port, in LID order: the "d" of d-mod-k.
  std::unordered_map<uint16_t, long> host_index;
  for (uint16_t lid : lids.lids()) {
    const LidOwner* o = lids.owner(lid);
    const Port& p = f.nodes[o->node].ports[o->port];
    if (!f.nodes[o->node].is_switch() && lid == p.base_lid)
      host_index.emplace(lid, static_cast<long>(host_index.size()));
  }

  std::vector<std::vector<uint16_t>> by_target(ns);
  for (uint16_t lid : lids.lids()) {
    const int t = tt.target(f, lid);
    if (t >= 0) by_target[static_cast<size_t>(t)].push_back(lid);
  }
  std::vector<std::vector<uint32_t>> used(n);
  for (int sw : switches) used[sw].assign(f.nodes[sw].ports.size(), 0);
  std::vector<int> cand;
  for (size_t t = 0; t < ns; ++t) {
    for (int sw : switches) {
      Node& node = f.nodes[sw];
      if (sw == switches[t]) {
        for (uint16_t lid : by_target[t]) node.lft[lid] = TreeTables::last_hop(f, lids.owner(lid));
        continue;
      }
      tt.closer(f, sw, t, cand);
      if (cand.empty()) continue;
      for (uint16_t lid : by_target[t]) {
        const LidOwner* o = lids.owner(lid);
        const Port& dp = f.nodes[o->node].ports[o->port];
        int pick;
        if (f.nodes[o->node].is_switch()) {  // switch LIDs: the least-used shortest port
          pick = cand[0];
          for (int p : cand)
            if (used[sw][p] < used[sw][pick]) pick = p;
        } else {  // d-mod-k on the host index, each LID offset shifted to another port
          long key = host_index[dp.base_lid] / divisor[level[sw]] + (lid - dp.base_lid);
          pick = cand[static_cast<size_t>(key % static_cast<long>(cand.size()))];
        }
        node.lft[lid] = static_cast<uint8_t>(pick);
        ++used[sw][pick];
      }
    }
  }
}

void route_minhop(Fabric& f) {
  TreeTables tt(f);
  std::vector<int> target;
  for (uint16_t lid : tt.lids.lids()) target.push_back(tt.target(f, lid));
  std::vector<uint32_t> used;
  std::vector<int> cand;
  for (int sw : tt.switches) {
    Node& node = f.nodes[sw];
    used.assign(node.ports.size(), 0);
    int cand_for = -1;  // consecutive LIDs mostly share a target: their candidates are computed once
    for (size_t k = 0; k < target.size(); ++k) {
      const int t = target[k];
      const uint16_t lid = tt.lids.lids()[k];
      if (t < 0) continue;
      if (tt.switches[static_cast<size_t>(t)] == sw) {
        node.lft[lid] = TreeTables::last_hop(f, tt.lids.owner(lid));
        continue;
      }
      if (t != cand_for) tt.closer(f, sw, static_cast<size_t>(t), cand), cand_for = t;
      if (cand.empty()) continue;
      int pick = cand[0];  // the first of the least used, in port order
      for (int p : cand)
        if (used[p] < used[pick]) pick = p;
      node.lft[lid] = static_cast<uint8_t>(pick);
      ++used[pick];
    }
  }
}

}  // namespace ibroute::fabric
