// Small fabrics built in memory for unit tests: a few lines each, LFTs set by hand.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/planner.hpp"

namespace ibroute::test {

using namespace ibroute::fabric;

// Plans as shifts of the rank order only (N-1 phases, the compact format): what the tests of the
// formats, the peer library and the lower bound work on. Packing has tests of its own.
inline const schedule::PlanOptions kShiftsOnly{.packing = false};

// Unplug every link between two switches.
inline void unplug(Fabric& f, const std::string& a, const std::string& b) {
  int x = -1, y = -1;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].desc == a) x = static_cast<int>(i);
    if (f.nodes[i].desc == b) y = static_cast<int>(i);
  }
  ASSERT_GE(x, 0);
  ASSERT_GE(y, 0);
  for (int p = 1; p <= f.nodes[x].num_ports(); ++p) {
    Port& port = f.nodes[x].ports[p];
    if (port.peer_node == y) {
      f.nodes[y].ports[port.peer_port] = Port{.guid = f.nodes[y].guid};
      port = Port{.guid = f.nodes[x].guid};
    }
  }
}

inline int add_node(Fabric& f, NodeType t, const std::string& desc, int nports, uint64_t guid) {
  Node n;
  n.type = t;
  n.desc = desc;
  n.guid = guid;
  n.ports.resize(nports + 1);
  for (int p = 0; p <= nports; ++p) n.ports[p].guid = t == NodeType::sw ? guid : guid + p;
  if (t == NodeType::sw) n.lft_read = true;
  f.nodes.push_back(n);
  return static_cast<int>(f.nodes.size()) - 1;
}

inline void up_link(Fabric& f, int a, int pa, int b, int pb, uint8_t width = 4, const char* speed = "EDR") {
  f.link(a, pa, b, pb);
  for (auto [n, p] : {std::pair{a, pa}, {b, pb}}) {
    Port& port = f.nodes[n].ports[p];
    port.state = PortState::active;
    port.width = width;
    port.speed = speed;
  }
}

inline void set_lid(Fabric& f, int node, int port, uint16_t lid, uint8_t lmc = 0) {
  f.nodes[node].ports[port].base_lid = lid;
  f.nodes[node].ports[port].lmc = lmc;
}

inline void route(Fabric& f, int sw, uint16_t lid, uint8_t port) {
  auto& lft = f.nodes[sw].lft;
  if (lft.size() <= lid) lft.resize(lid + 1, kNoRoute);
  lft[lid] = port;
}

// Two leaves (L1, L2: ports 1-2 hosts, 3-4 up) and two spines (S1, S2), hosts h1,h2 on L1 and
// h3,h4 on L2, LMC 1: each host owns two LIDs; offset 0 goes over S1, offset 1 over S2.
struct TwoLeaves {
  Fabric f;
  int l1, l2, s1, s2, h[4];
  TwoLeaves() {
    h[0] = add_node(f, NodeType::ca, "h1", 1, 0x100);
    h[1] = add_node(f, NodeType::ca, "h2", 1, 0x200);
    h[2] = add_node(f, NodeType::ca, "h3", 1, 0x300);
    h[3] = add_node(f, NodeType::ca, "h4", 1, 0x400);
    l1 = add_node(f, NodeType::sw, "L1", 4, 0x1000);
    l2 = add_node(f, NodeType::sw, "L2", 4, 0x2000);
    s1 = add_node(f, NodeType::sw, "S1", 2, 0x3000);
    s2 = add_node(f, NodeType::sw, "S2", 2, 0x4000);
    for (int sw : {l1, l2, s1, s2}) f.nodes[sw].ports[0].state = PortState::active;
    up_link(f, h[0], 1, l1, 1);
    up_link(f, h[1], 1, l1, 2);
    up_link(f, h[2], 1, l2, 1);
    up_link(f, h[3], 1, l2, 2);
    up_link(f, l1, 3, s1, 1);
    up_link(f, l1, 4, s2, 1);
    up_link(f, l2, 3, s1, 2);
    up_link(f, l2, 4, s2, 2);
    set_lid(f, l1, 0, 1);
    set_lid(f, l2, 0, 2);
    set_lid(f, s1, 0, 3);
    set_lid(f, s2, 0, 4);
    for (int i = 0; i < 4; ++i) set_lid(f, h[i], 1, static_cast<uint16_t>(8 + 2 * i), 1);  // 8,10,12,14
    // Leaves: own hosts down, others up over S1 (offset 0) or S2 (offset 1); switch LIDs over S1.
    for (int leaf : {l1, l2}) {
      for (int i = 0; i < 4; ++i) {
        bool mine = (leaf == l1) == (i < 2);
        for (int off = 0; off < 2; ++off)
          route(f, leaf, static_cast<uint16_t>(8 + 2 * i + off),
                mine ? static_cast<uint8_t>(i % 2 + 1) : static_cast<uint8_t>(3 + off));
      }
      route(f, leaf, 1, leaf == l1 ? 0 : 3);
      route(f, leaf, 2, leaf == l2 ? 0 : 3);
      route(f, leaf, 3, 3);
      route(f, leaf, 4, 4);
    }
    for (int sp : {s1, s2}) {
      for (int i = 0; i < 4; ++i)
        for (int off = 0; off < 2; ++off) route(f, sp, static_cast<uint16_t>(8 + 2 * i + off), i < 2 ? 1 : 2);
      route(f, sp, 1, 1);
      route(f, sp, 2, 2);
      route(f, sp, 3, sp == s1 ? 0 : 1);
      route(f, sp, 4, sp == s2 ? 0 : 1);
    }
  }
};

// A three-level fat-tree at LMC 2, names shuffled: PODS x LEAVES x HOSTS, AGGS per pod, CORES.
inline Fabric three_level(int pods, int leaves, int hosts, int aggs, int cores) {
  FatTreeSpec t;
  t.levels = 3, t.pods = pods, t.leaves = leaves, t.hosts_per_leaf = hosts, t.aggs = aggs, t.cores = cores, t.lmc = 2,
  t.shuffle_names = true;
  return build_fat_tree(t);
}

// The planner's scale tests' tree: PODS x 16 leaves x 18 hosts over 8 up-links per leaf (18 per 8:
// every shift takes 3 slots where 2.25 would do), 8 aggregation switches per pod, 144 cores,
// d-mod-k at LMC 2, names shuffled by `seed`.
inline Fabric eighteen_per_eight(int pods, uint32_t seed) {
  FatTreeSpec t;
  t.levels = 3, t.pods = pods, t.leaves = 16, t.hosts_per_leaf = 18, t.aggs = t.uplinks = 8, t.cores = 144, t.lmc = 2;
  t.shuffle_names = true, t.seed = seed;
  return build_fat_tree(t);
}

// `keep` of the fabric's hosts drawn at random (`seed`), in name order.
inline std::vector<schedule::Host> random_hosts(const Fabric& f, size_t keep, uint32_t seed) {
  std::vector<schedule::Host> hosts = schedule::all_hosts(f);
  std::mt19937 rng(seed);
  std::shuffle(hosts.begin(), hosts.end(), rng);
  hosts.resize(std::min(keep, hosts.size()));
  std::sort(hosts.begin(), hosts.end(),
            [](const schedule::Host& p, const schedule::Host& q) { return natural_less(p.name, q.name); });
  return hosts;
}

// The directed switch-to-switch links (node, out-port) that the LFTs take from switch `sw` to `lid`,
// walked here apart from the code under test; empty where the walk ends nowhere.
inline std::vector<std::pair<int, int>> lft_path(const Fabric& f, int sw, uint16_t lid) {
  std::vector<std::pair<int, int>> out;
  for (int hops = 0; hops < 16; ++hops) {
    const Node& n = f.nodes[static_cast<size_t>(sw)];
    if (lid >= n.lft.size()) return {};
    const int port = n.lft[lid];
    if (port <= 0 || port >= static_cast<int>(n.ports.size()) || n.ports[port].peer_node < 0) return {};
    const int next = n.ports[port].peer_node;
    if (f.nodes[static_cast<size_t>(next)].type != NodeType::sw) return out;
    out.push_back({sw, port});
    sw = next;
  }
  return {};
}

// Per directed link (node, out-port): transfers on it.
using LinkLoads = std::map<std::pair<int, int>, int>;

// Adds the directed links of transfer a -> b on `dlid` to `load`: the switch links the LFTs take
// (lft_path), and with `host_links` the sender's host link and the receiver's switch port too.
inline void walk_transfer(const Fabric& f, const schedule::Host& a, const schedule::Host& b, uint16_t dlid,
                          LinkLoads& load, bool host_links = true) {
  const Port& pa = f.nodes[a.node].ports[a.port];
  const Port& pb = f.nodes[b.node].ports[b.port];
  if (host_links) ++load[{a.node, a.port}], ++load[{pb.peer_node, pb.peer_port}];
  if (pa.peer_node == pb.peer_node) return;
  const auto path = lft_path(f, pa.peer_node, dlid);
  ASSERT_FALSE(path.empty()) << a.name << " to LID " << dlid;
  EXPECT_EQ(f.nodes[path.back().first].ports[path.back().second].peer_node, pb.peer_node);
  for (const auto& hop : path) ++load[hop];
}

// Per switch of a three-level tree built by three_level: its pod, named by the least agg index
// among its leaves' neighbours (for leaves and aggs alike); -1 for a core. Read from the cabling.
inline std::vector<int> pods_of(const Fabric& f) {
  auto is = [&](int x, const char* prefix) { return f.nodes[static_cast<size_t>(x)].desc.rfind(prefix, 0) == 0; };
  std::vector<int> pod(f.nodes.size(), -1);
  for (size_t x = 0; x < f.nodes.size(); ++x) {
    if (f.nodes[x].type != NodeType::sw || !is(static_cast<int>(x), "leaf")) continue;
    int least = INT32_MAX;
    for (const Port& p : f.nodes[x].ports)
      if (p.peer_node >= 0 && is(p.peer_node, "agg")) least = std::min(least, p.peer_node);
    pod[x] = least;
    for (const Port& p : f.nodes[x].ports)
      if (p.peer_node >= 0 && is(p.peer_node, "agg")) pod[static_cast<size_t>(p.peer_node)] = least;
  }
  return pod;
}

// Tables on a tree from three_level where every agg sends all traffic for one other pod over one
// up-link, a different one per pod: each pod's routes leave over (pods - 1) up-links per agg and
// enter over one down-link per agg (the asymmetry OpenSM's minhop leaves, made plain).
inline void one_up_link_per_pod(Fabric& f) {
  const std::vector<int> pod = pods_of(f);
  std::vector<int> ordinal(f.nodes.size(), -1);
  int pods = 0;
  for (size_t x = 0; x < f.nodes.size(); ++x)
    if (pod[x] == static_cast<int>(x)) ordinal[x] = pods++;
  std::vector<std::pair<uint16_t, int>> lids;  // every host LID, with its pod
  for (const Node& n : f.nodes)
    for (const Port& p : n.ports)
      if (n.type != NodeType::sw && p.base_lid && p.peer_node >= 0)
        for (uint16_t o = 0; o < p.lid_count(); ++o)
          lids.push_back({static_cast<uint16_t>(p.base_lid + o), pod[static_cast<size_t>(p.peer_node)]});
  for (size_t a = 0; a < f.nodes.size(); ++a) {
    if (f.nodes[a].desc.rfind("agg", 0) != 0) continue;
    std::vector<uint8_t> ups;
    for (int p = 1; p < static_cast<int>(f.nodes[a].ports.size()); ++p)
      if (const int peer = f.nodes[a].ports[p].peer_node;
          peer >= 0 && f.nodes[static_cast<size_t>(peer)].type == NodeType::sw && pod[static_cast<size_t>(peer)] < 0)
        ups.push_back(static_cast<uint8_t>(p));
    for (auto [lid, to] : lids)
      if (to != pod[a]) f.nodes[a].lft[lid] = ups[static_cast<size_t>(ordinal[static_cast<size_t>(to)]) % ups.size()];
  }
}

// PODS x LEAVES x HOSTS, AGGS per pod, CORES (by default 8 x 12, 4, 8), LMC 0. Every switch sends
// a destination it does not reach downwards over the up-link a hash of (switch, LID / BLOCK)
// picks: all up-links lead to it on this tree. With blocks of 12 LIDs each takes one path from
// each switch, so a shift's load on a link depends on which leaves its window of destinations
// covers: the shifts in their order overflow some phases and leave others idle. With blocks of one,
// which sources reach a down-link varies from destination to destination, as under dfsssp.
inline Fabric hashed_three_level(int pods, int block = 12, int leaves = 8, int hosts = 12, int aggs = 4,
                                 int cores = 8) {
  Fabric f = three_level(pods, leaves, hosts, aggs, cores);
  for (Node& n : f.nodes)
    for (Port& p : n.ports) p.lmc = 0;
  route_minhop(f);
  const FabricStructure s = analyze_structure(f);
  for (size_t sw = 0; sw < f.nodes.size(); ++sw) {
    Node& n = f.nodes[sw];
    std::vector<uint8_t> up;
    for (size_t p = 1; p < n.ports.size(); ++p)
      if (n.ports[p].connected() && s.level[static_cast<size_t>(n.ports[p].peer_node)] > s.level[sw])
        up.push_back(static_cast<uint8_t>(p));
    if (n.type != NodeType::sw || up.empty()) continue;
    for (size_t lid = 1; lid < n.lft.size(); ++lid) {
      if (std::find(up.begin(), up.end(), n.lft[lid]) == up.end()) continue;
      uint64_t h = (sw * 0x9e3779b97f4a7c15ULL) ^ ((lid / static_cast<size_t>(block)) * 0xbf58476d1ce4e5b9ULL);
      h ^= h >> 29, h *= 0x94d049bb133111ebULL, h ^= h >> 32;
      n.lft[lid] = up[h % up.size()];
    }
  }
  return f;
}

// A fabric with what the planner needs beside it. Not movable: the context refers to the rest.
struct World {
  Fabric f;
  LinkIndex links;
  FabricStructure s;
  ibroute::schedule::EvalContext ctx;
  explicit World(Fabric fab) : f(std::move(fab)), links(f), s(analyze_structure(f)), ctx(f, links, s) {}
};

// 512 hosts on three_level(4, 8, 16, 8, 64) under one_up_link_per_pod, with the pods read from the cabling.
struct PodsEnteringOverFewLinks {
  World w;
  std::vector<schedule::Host> hosts;
  std::vector<int> pod;
  PodsEnteringOverFewLinks() : w(tables()), hosts(schedule::all_hosts(w.f)), pod(pods_of(w.f)) {}

 private:
  static Fabric tables() {
    Fabric f = three_level(4, 8, 16, 8, 64);
    one_up_link_per_pod(f);
    return f;
  }
};

// `run` must throw InputError whose message contains `needle`.
inline void expect_input_error(const std::function<void()>& run, const std::string& needle) {
  try {
    run();
    ADD_FAILURE() << "accepted, expected an error with: " << needle;
  } catch (const ibroute::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace ibroute::test
