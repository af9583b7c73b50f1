// What changed between two scans of a fabric: nodes, links, LIDs, forwarding tables, routes.
// Node identity is the GUID, so node indices of the two scans need not agree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/routes.hpp"

namespace ibroute::fabric {

struct PortRef {
  uint64_t guid;  // node GUID
  std::string desc;
  int port;
};

struct LinkChange {
  PortRef a, b;
  std::string before, after;  // "4xEDR", "absent", "down", ...
};

struct LidChange {
  PortRef port;
  uint16_t lid_before, lid_after;
  uint8_t lmc_before, lmc_after;
};

struct RouteChange {
  std::string ingress;  // switch description
  uint64_t ingress_guid;
  uint16_t dlid;
  std::string before, after;  // status and hops as "desc[port] ..."
};

struct FabricDiff {
  std::vector<PortRef> nodes_added, nodes_removed;  // port = -1
  std::vector<LinkChange> links_added, links_removed, links_changed;
  std::vector<LidChange> lids_changed;
  size_t lft_entries_changed = 0;
  size_t switches_with_lft_changes = 0;
  size_t routes_compared = 0, routes_changed = 0;
  // False where either scan has no forwarding tables (a topology-only import): no LFT entry or
  // route was compared, and the counts above say nothing of them.
  bool tables_compared = true;
  std::vector<RouteChange> route_examples;  // the first few changed routes
  bool empty() const {
    return nodes_added.empty() && nodes_removed.empty() && links_added.empty() && links_removed.empty() &&
           links_changed.empty() && lids_changed.empty() && lft_entries_changed == 0 && routes_changed == 0;
  }
};

FabricDiff diff_fabrics(const Fabric& a, const RouteSet& ra, const Fabric& b, const RouteSet& rb,
                        size_t max_route_examples = 20);

// Whether `b` has what `a` has where routes come from: the same nodes, links (width, speed,
// state), LIDs and forwarding tables, read on the same switches. Then every route is the same too
// (routes are a function of these), so diff_fabrics would be empty: a check that needs no routes,
// for a fabric re-read every few seconds for weeks (ibroute watch).
bool same_tables(const Fabric& a, const Fabric& b);

// "node1-024[1] -> ibswitch12[13] -> ... " for people.
std::string describe_path(const Fabric& f, std::span<const Hop> hops);

}  // namespace ibroute::fabric
