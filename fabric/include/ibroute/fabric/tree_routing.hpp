// Forwarding tables computed for a tree fabric, for OpenSM's `file` routing engine.
//
// Every destination LID turns at a hub: a switch of the lowest level that reaches most leaves
// (the spines of a two-level tree, the cores of a pod tree, a director's line ASICs), picked by
// the destination's position in a rank order, cycling through the hubs in an order that changes
// the level-1 up-link first, then the level-2 one, and so on (d-mod-k generalised). A route
// climbs towards its hub until it meets the hub's one way down to the destination, then follows
// it. So the destinations of any run of consecutive ranks spread evenly over the up-links of
// every level, and the links down into a switch carry destinations of distinct hubs: the shift
// all-to-all in that rank order is congestion-free on a regular tree at LMC 0, with no planning.
// The 2^LMC LIDs of a port start at hubs that differ at every level, so that a planner has real
// path choices. Missing links: a hub that cannot reach the destination is replaced by the least
// used one that can; a switch that cannot climb towards the hub climbs by another up-link that
// still leads there (a detour); hosts that no hub reaches (on a spine) turn at the tops. Routes
// are up*/down* by construction (no credit loops); check_tree_routing proves it, with
// reachability and port ranges, on the tables as they will be written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/structure.hpp"

namespace ibroute::fabric {

// A CA port by node index and port number (the rank order the routing is computed for).
struct CaPort {
  int32_t node;
  uint8_t port;
  bool operator==(const CaPort&) const = default;
};

struct TreeRouting {
  std::vector<std::vector<uint8_t>> lft;  // per node (switches in the tree; empty for other nodes)
  std::vector<int32_t>
      hubs;                // the lowest switches that reach most leaves, in the order destinations cycle through them
  size_t routed_lids = 0;  // destination LIDs given a route
  size_t moved_roots = 0;  // LIDs whose preferred root cannot reach them (a missing link)
  size_t detours = 0;      // entries of switches with hosts that cannot climb towards the root
};

// How destinations are routed: `hubs` as above (congestion-free shifts on regular trees);
// `spread` where every switch rotates its own choices by the destination (see route_spread), for
// trees that are not k-ary (edge switches cabled to several directors).
enum class TreeStyle { hubs, spread };

// `order`: CA ports in rank order (the hosts of the all-to-all); every other CA port and every
// switch LID is routed after them. Throws InputError when the fabric is no tree to route: no
// switch levels, no LIDs, or switches joined within a level.
TreeRouting route_tree(const Fabric& f, const FabricStructure& s, const std::vector<CaPort>& order,
                       TreeStyle style = TreeStyle::hubs);

// The tables of `r` written into `f` (its switches' LFTs, read): the fabric as OpenSM would route it.
void apply_tree_routing(Fabric& f, const TreeRouting& r);

// At LMC > 0, the tables of two constructions in one: every port's base LID routed as in
// `first`, its other LIDs as `second` routes that port's LIDs from the base on (the k-th as
// `second`'s (k-1)-th). A plan then has `first`'s base paths (those of LMC 0, where `first` is what
// LMC 0 keeps) and `second`'s own. Every LID's entries are one construction's, so every route stays
// up*/down*. The counts of `first` are kept.
TreeRouting merge_lids(const Fabric& f, const TreeRouting& first, const TreeRouting& second);

// Local search on `r` for the round-robin (shift) all-to-all among `order` with base LIDs: the
// first hop of each (ingress switch, destination) pair moves where that lowers the transfers
// above capacity, counted exactly per switch link and phase. Entries above the ingress switches
// stay, so routes stay up*/down*. Skipped when links x ranks exceed `max_cells` (memory).
// The budget is of work (hops of transfers weighed on candidate paths), not of time, so that the
// same scan gives the same tables on any machine.
struct RefineLimits {
  uint64_t work = uint64_t{8} << 30;  // about 20 s on a 2-core machine of 2026
  int passes = 12;
  size_t max_cells = size_t{96} << 20;
};
struct RefineStats {
  long excess_before = 0, excess_after = 0;  // sum over (link, phase) of load above capacity
  int worst_excess_before = 0, worst_excess_after = 0;
  size_t moves = 0;
  int passes = 0;
  uint64_t work = 0;  // spent of the budget
  bool skipped = false, out_of_budget = false;
};
RefineStats refine_for_shift(const Fabric& f, const FabricStructure& s, const std::vector<CaPort>& order,
                             TreeRouting& r, const RefineLimits& limits = {});

// The rank order the routing proposes for these hosts: grouped by the switches above their
// leaf (a pod of a three-level tree stays together), then by leaf, then by leaf port.
std::vector<CaPort> tree_order(const Fabric& f, const FabricStructure& s, std::vector<CaPort> hosts);

// What a set of forwarding tables must be before OpenSM gets them: from every switch of the
// tree, every LID of every CA port and switch arrives (no drop, loop or dead end), the path only
// climbs and then only descends (up*/down*: no credit loop), and no entry names a port beyond its
// switch's count. `f` carries the tables to check.
struct RoutingCheck {
  size_t walked = 0;               // (switch, LID) pairs walked
  size_t failures = 0;             // all of them
  std::vector<std::string> first;  // the first few, one line each
  // (switch with a CA, CA's LID) pairs with no up*/down* way at all, where one of the two is not a
  // host (a SHARP aggregation node on each of two top switches): no table can route them without
  // a turn from down to up; counted and said, not failed (between hosts they fail).
  size_t no_way = 0;
  bool ok() const { return failures == 0; }
};
RoutingCheck check_tree_routing(const Fabric& f, const FabricStructure& s);

}  // namespace ibroute::fabric
