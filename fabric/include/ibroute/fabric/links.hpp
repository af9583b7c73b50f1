// Directed links and the paths of transfers over them, for load analysis and planning.
// A directed link is named by the port it leaves from: id = first id of its node + port number.
#pragma once

#include <cstdint>
#include <vector>

#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/routes.hpp"

namespace ibroute::fabric {

class LinkIndex {
 public:
  explicit LinkIndex(const Fabric& f);
  int32_t id(int32_t node, int port) const { return base_[node] + port; }
  size_t size() const { return node_of_.size(); }
  int32_t node(int32_t link) const { return node_of_[link]; }
  int port(int32_t link) const { return link - base_[node_of_[link]]; }
  // Data rate of the link in Gb/s: the slower end's width x lane rate; 0 if not cabled.
  double gbps(int32_t link) const { return gbps_[link]; }

 private:
  std::vector<int32_t> base_, node_of_;
  std::vector<double> gbps_;
};

// The directed links a transfer from a CA port to a DLID crosses: the CA's own link, then every
// switch out-port on the way (the last one leads into the destination). From the LFTs.
class PathFinder {
 public:
  PathFinder(const Fabric& f, const LinkIndex& links) : f_(f), links_(links), walker_(f) {}
  RouteStatus path(int32_t src_node, int src_port, uint16_t dlid, std::vector<int32_t>& out);
  // The same from a switch on: its out-ports and those after it (appended to `out`).
  RouteStatus from_switch(int32_t sw, uint16_t dlid, std::vector<int32_t>& out);

 private:
  const Fabric& f_;
  const LinkIndex& links_;
  LftWalker walker_;
  std::vector<Hop> hops_;
};

// Max-min fair rates (progressive filling) of flows over directed links with capacities.
// flows[i] lists flow i's links; returns each flow's rate in the capacities' unit.
std::vector<double> max_min_rates(const std::vector<std::vector<int32_t>>& flows, const std::vector<double>& capacity);

}  // namespace ibroute::fabric
