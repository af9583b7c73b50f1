// What kind of tree a fabric is: levels, leaves and spines, hosts and up-links per leaf, the
// oversubscription, and what deviates from the regular structure (missing or extra links,
// links slower than the fabric's common rate, ports that are not active).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

struct LinkRef {
  int32_t a_node;
  int a_port;
  int32_t b_node;  // -1 when the link is missing (b_port then names nothing)
  int b_port;
};

struct FabricStructure {
  std::vector<int> level;        // per node: 0 CA, 1 leaf (switch with CAs), 2.. above; -1 unreachable switch
  int levels = 0;                // highest switch level
  std::vector<int32_t> leaves;   // level-1 switches
  std::vector<int32_t> top;      // switches of the highest level ("spines" of a 2-level tree)
  std::vector<int32_t> hosts;    // CA nodes with a connected port
  std::vector<int> hosts_per_leaf, uplinks_per_leaf;  // by leaves index
  double host_gbps = 0;          // the common host link rate
  double link_gbps = 0;          // the common switch-to-switch link rate
  uint8_t common_width = 0;      // the common width and lane speed of switch-to-switch links
  std::string common_speed;
  double oversubscription = 1;   // max over leaves of host capacity / up-link capacity
  int transfer_bound = 1;        // concurrent transfers a regular link direction may carry
  bool two_level = false;        // every leaf's up-links go to top-level switches
  std::vector<LinkRef> missing;  // (leaf, spine) pairs below the common link count (2 levels)
  std::vector<LinkRef> extra;    // pairs above it
  std::vector<LinkRef> slow;     // cabled links below the common width or speed
  std::vector<LinkRef> inactive; // cabled links whose port is not active
  int ports_down = 0;            // switch ports not cabled or down
};

FabricStructure analyze_structure(const Fabric& f);

// How the routing spreads destinations over up-links (seed 004 found it uneven across spines):
// per leaf, how many CA LIDs off that leaf each up-port carries; per top-level switch, how many
// (leaf, DLID) routes cross it.
struct RoutingBalance {
  struct Leaf {
    int32_t leaf;
    std::vector<std::pair<int, int>> ports;  // (up-port, DLIDs routed out of it)
    int min = 0, max = 0;
  };
  std::vector<Leaf> leaves;
  std::vector<std::pair<int32_t, long>> top;  // (switch, routes crossing it)
};
RoutingBalance routing_balance(const Fabric& f, const FabricStructure& s);

// How many transfers at once a directed link may carry: the bound scaled by the link's rate
// against the common rate, at least 1.
int link_capacity(const FabricStructure& s, double link_gbps);

}  // namespace ibroute::fabric
