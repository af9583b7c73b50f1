// What kind of tree a fabric is: switch levels ranked upwards from the leaves as fat-tree routers
// do, such that hosts on a spine or on a director's line card do not turn those into leaves; leaves and
// spines, hosts and up-links per switch, capacities and the transfer bound per level, director
// chassis, the nodes that are not hosts (routers, SHARP aggregation nodes), loopback cables, and
// what deviates from the regular structure at every level (missing, extra, slow, lateral links).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/fabric/machines.hpp"
#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

struct LinkRef {
  int32_t a_node;
  int a_port;
  int32_t b_node;  // -1 when the link is missing (b_port then names nothing)
  int b_port;
};

// One switch level: level 1 carries (most of) the hosts, the highest is the top.
struct LevelInfo {
  int level = 0;
  int switches = 0;
  int hosts = 0;  // hosts attached to switches of this level
  long up_links = 0, down_links = 0;
  double up_gbps = 0, down_gbps = 0;  // total capacity towards the level above / below
  int common_up = 0;                  // the usual number of up-links of a switch of this level
  int common_down = 0;                // the usual number of down-links (hosts included)
  int bound = 1;                      // concurrent transfers an up-link of this level must carry in an all-to-all
};

// A director: the ASICs that share one system image GUID (Mellanox `MF0;NAME:MODEL/Lxx|Sxx/Uy`).
struct Chassis {
  uint64_t sysimg_guid = 0;
  std::string name, model;  // "director1", "IS5600" where the descriptions say
  std::vector<int32_t> asics;
  int line_asics = 0, spine_asics = 0;
};

struct FabricStructure {
  std::vector<int> level;            // per node: 0 host, 1.. switch level; -1 not in the tree (unreachable
                                     // switch, router, aggregation node, CA without a link)
  int levels = 0;                    // highest switch level
  std::vector<int32_t> leaves;       // level-1 switches
  std::vector<int32_t> top;          // switches of the highest level ("spines" of a 2-level tree)
  std::vector<int32_t> hosts;        // host CAs with a connected port
  std::vector<int32_t> not_hosts;    // routers and aggregation nodes: kept in the model, not in traffic
  std::vector<int32_t> unused;       // switches on no shortest path between host-carrying switches (level -1):
                                     // no host traffic crosses them, e.g. a director's uncabled line ASIC
  std::vector<int32_t> hosts_above;  // hosts attached to a switch above level 1
  std::vector<int> hosts_per_leaf, uplinks_per_leaf;  // by leaves index
  std::vector<LevelInfo> per_level;                   // [0] is level 1
  std::vector<Chassis> chassis;
  int standalone_switches = 0;  // switches in no chassis
  double host_gbps = 0;         // the common host link rate
  double link_gbps = 0;         // the common switch-to-switch link rate
  uint8_t common_width = 0;     // the common width and lane speed of switch-to-switch links
  std::string common_speed;
  double oversubscription = 1;     // max over leaves of host capacity / up-link capacity
  int transfer_bound = 1;          // concurrent transfers a regular link direction may carry (max over levels)
  bool two_level = false;          // every leaf's up-links go to top-level switches
  bool tree = true;                // every switch-to-switch link joins adjacent levels
  std::vector<LinkRef> missing;    // two levels: (leaf, spine) pairs below the common link count;
                                   // above: a switch below its level's common up-link count (b_node -1)
  std::vector<LinkRef> extra;      // pairs above the common count
  std::vector<LinkRef> slow;       // cabled links below the common width or speed
  std::vector<LinkRef> inactive;   // cabled links whose port is not active
  std::vector<LinkRef> loopbacks;  // a switch port cabled to another port of the same switch
  std::vector<LinkRef> lateral;    // switch links within one level or across several: not a tree
  // Rail-optimised fabrics (machines.hpp): the leaf groups where leaf k carries rail k of the same
  // machines; and, where there are such groups, the leaves that carry none of their machines'
  // rails (management, storage, login HCAs: told apart by that cabling, never by name). Those
  // leaves are a class of their own: their up-links are not counted as missing against the
  // compute leaves' and they are left out of the oversubscription.
  std::vector<RailGroup> rail_groups;
  std::vector<int32_t> other_leaves;
  int ports_down = 0;  // switch ports not cabled or down
};

FabricStructure analyze_structure(const Fabric& f);

// "1 IS5600 director (8 ASICs) + 4 edge switches, 3 switch levels"
std::string describe_chassis(const FabricStructure& s);

// How the routing spreads destinations over up-links (LOEWE-CSC's was uneven across spines:
// docs/background.md#loewe-csc-measurements), at every level: per switch below the top, how many host LIDs each up-port
// has in its LFT and how many host-to-host routes (every host-carrying switch to every host LID, walked through the
// LFTs) actually leave by it — above the leaves the two differ where the levels' choices are correlated; per top-level
// switch, how many routes cross it; the up-links no route uses at all.
struct RoutingBalance {
  struct Leaf {
    int32_t leaf;                            // any switch below the top (the name is historic)
    std::vector<std::pair<int, int>> ports;  // (up-port, host LIDs its LFT sends out of it)
    int min = 0, max = 0;
    std::vector<std::pair<int, long>> routes;  // (up-port, host-to-host routes that leave by it)
    long route_min = 0, route_max = 0;
  };
  std::vector<Leaf> leaves;                   // level-1 switches
  std::vector<std::vector<Leaf>> upper;       // [0] = level 2, ... (below the top)
  std::vector<std::pair<int32_t, long>> top;  // (switch, routes crossing it)
  std::vector<LinkRef> idle;                  // up-links that carry no route while their switch routes up
  std::vector<int> idle_per_level;            // [0] = level 1
};
RoutingBalance routing_balance(const Fabric& f, const FabricStructure& s);

// How many transfers at once a directed link may carry: the bound scaled by the link's rate
// against the common rate, at least 1.
int link_capacity(const FabricStructure& s, double link_gbps);

}  // namespace ibroute::fabric
