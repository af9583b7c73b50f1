// Small fabrics built in memory for unit tests: a few lines each, LFTs set by hand.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/schedule/evaluate.hpp"
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
          route(f, leaf, static_cast<uint16_t>(8 + 2 * i + off), mine ? static_cast<uint8_t>(i % 2 + 1) : static_cast<uint8_t>(3 + off));
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

// A fabric with what the planner needs beside it. Not movable: the context refers to the rest.
struct World {
  Fabric f;
  LinkIndex links;
  FabricStructure s;
  ibroute::schedule::EvalContext ctx;
  explicit World(Fabric fab) : f(std::move(fab)), links(f), s(analyze_structure(f)), ctx(f, links, s) {}
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
