// Route resolution: the path of every (ingress switch, destination LID) from the switches' LFTs.
// On IB the path depends only on the DLID, so all CA ports behind one switch share it from that
// switch on; a source port's route is its own first hop plus its ingress switch's route.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

enum class RouteStatus : uint8_t {
  ok = 0,            // delivered to the port that owns the DLID
  drop = 1,          // a switch has no LFT entry for the DLID (or port 255 / port 0)
  loop = 2,          // the path comes back to a switch it already crossed
  dead_end = 3,      // the LFT points at a port that is down or not cabled
  misdelivered = 4,  // the path ends at a CA that does not own the DLID
  unknown = 5,       // the scan did not reach a switch on the way, or could not read its LFT
};
std::string_view to_string(RouteStatus s);
bool route_status_from(std::string_view s, RouteStatus& out);

// One step: the packet leaves `node` through `out_port` (0 = arrives at that switch itself).
struct Hop {
  int32_t node;
  uint8_t out_port;
  bool operator==(const Hop&) const = default;
};

// Routes of every ingress switch to every assigned LID, stored flat.
struct RouteSet {
  std::vector<uint16_t> dlids;      // every LID assigned in the fabric, ascending
  std::vector<int32_t> ingress;     // switches with at least one CA port attached
  std::vector<RouteStatus> status;  // [ingress index * dlids.size() + dlid index]
  std::vector<uint32_t> offset;     // hops of route r are hops[offset[r] .. offset[r+1])
  std::vector<Hop> hops;

  size_t index(size_t ingress_i, size_t dlid_i) const { return ingress_i * dlids.size() + dlid_i; }
  std::span<const Hop> path(size_t r) const { return {hops.data() + offset[r], offset[r + 1] - offset[r]}; }
  // Index of a switch in `ingress`, or -1.
  int ingress_index(int32_t node) const;
  int dlid_index(uint16_t dlid) const;
  size_t size() const { return status.size(); }
};

// Where broken routes end, one entry per (switch, out port, status), the most routes first: the
// last switch of the route and the port its table points at (kNoRoute for a drop), with one
// example route (its ingress switch and DLID).
struct BrokenEnd {
  int32_t node = -1;
  uint8_t port = 0;
  RouteStatus status = RouteStatus::ok;
  size_t routes = 0;
  int32_t example_ingress = -1;
  uint16_t example_dlid = 0;
};
std::vector<BrokenEnd> broken_ends(const RouteSet& routes);

// Walks LFTs from a switch towards a DLID, appending hops; loop detection without clearing a
// visited set per walk. The one place where a path is derived from forwarding tables.
class LftWalker {
 public:
  explicit LftWalker(const Fabric& f) : f_(f), mark_(f.nodes.size(), 0) {}
  RouteStatus walk(int32_t start_switch, uint16_t dlid, std::vector<Hop>& hops);

 private:
  const Fabric& f_;
  std::vector<uint32_t> mark_;
  uint32_t gen_ = 0;
};

// A cabled port whose link can carry data (offline imports know no states: cabled = up).
bool port_usable(const Port& p);

RouteSet resolve_routes(const Fabric& f);

// The full route of a source CA port to `dlid`: the first hop out of the CA, then the ingress
// switch's stored path. Answered from the RouteSet alone (no LFT walk).
struct PortRoute {
  RouteStatus status = RouteStatus::drop;
  std::vector<Hop> hops;
};
PortRoute route_from_port(const Fabric& f, const RouteSet& routes, int node, int port, uint16_t dlid);

// Counts of routes by status, for summaries.
struct RouteCounts {
  size_t total = 0, ok = 0, drop = 0, loop = 0, dead_end = 0, misdelivered = 0, unknown = 0;
};
RouteCounts count_routes(const RouteSet& r);

}  // namespace ibroute::fabric
