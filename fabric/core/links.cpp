#include "ibroute/fabric/links.hpp"

#include <algorithm>
#include <limits>

namespace ibroute::fabric {

LinkIndex::LinkIndex(const Fabric& f) {
  base_.reserve(f.nodes.size());
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    base_.push_back(static_cast<int32_t>(node_of_.size()));
    const Node& n = f.nodes[i];
    for (size_t p = 0; p < n.ports.size(); ++p) {
      node_of_.push_back(static_cast<int32_t>(i));
      const Port& port = n.ports[p];
      double rate = 0;
      if (port.connected()) {
        const Port& far = f.nodes[port.peer_node].ports[port.peer_port];
        auto lanes = [](const Port& x) { return x.width ? x.width : 4; };  // unknown width: nominal 4x
        auto lane = [](const Port& x) { return lane_gbps(x.speed); };
        double a = lanes(port) * lane(port), b = lanes(far) * lane(far);
        rate = a && b ? std::min(a, b) : std::max(a, b);
      }
      gbps_.push_back(rate);
    }
  }
}

RouteStatus PathFinder::path(int32_t src_node, int src_port, uint16_t dlid, std::vector<int32_t>& out) {
  out.clear();
  const Port& src = f_.nodes[src_node].ports[src_port];
  if (src.owns_lid(dlid)) return RouteStatus::ok;  // to itself: no link crossed
  out.push_back(links_.id(src_node, src_port));
  if (!port_usable(src)) return RouteStatus::dead_end;
  const Node& peer = f_.nodes[src.peer_node];
  if (!peer.is_switch()) return peer.ports[src.peer_port].owns_lid(dlid) ? RouteStatus::ok : RouteStatus::misdelivered;
  return from_switch(src.peer_node, dlid, out);
}

RouteStatus PathFinder::from_switch(int32_t sw, uint16_t dlid, std::vector<int32_t>& out) {
  hops_.clear();
  RouteStatus s = walker_.walk(sw, dlid, hops_);
  for (const Hop& h : hops_)
    if (h.out_port != 0 && h.out_port != kNoRoute && h.out_port <= f_.nodes[h.node].num_ports())
      out.push_back(links_.id(h.node, h.out_port));
  return s;
}

std::vector<double> max_min_rates(const std::vector<std::vector<int32_t>>& flows, const std::vector<double>& capacity) {
  // Progressive filling: raise all unfrozen flows together; the link that fills first freezes
  // its flows at its fair share; repeat with what is left.
  std::vector<double> rate(flows.size(), 0), left = capacity;
  std::vector<int32_t> users(capacity.size(), 0), touched;
  std::vector<char> frozen(flows.size(), 0);
  for (const auto& fl : flows)
    for (int32_t l : fl) {
      if (users[l]++ == 0) touched.push_back(l);
    }
  size_t active = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    if (flows[i].empty()) frozen[i] = 1;  // no link crossed: not limited by the fabric
    else ++active;
  }
  double level = 0;
  while (active > 0) {
    double step = std::numeric_limits<double>::infinity();
    for (int32_t l : touched)
      if (users[l] > 0) step = std::min(step, left[l] / users[l]);
    level += step;
    for (int32_t l : touched)
      if (users[l] > 0) left[l] -= step * users[l];
    for (size_t i = 0; i < flows.size(); ++i) {
      if (frozen[i]) continue;
      bool full = false;
      for (int32_t l : flows[i]) full |= left[l] <= 1e-9 * (capacity[l] + 1);
      if (!full) continue;
      frozen[i] = 1;
      rate[i] = level;
      --active;
      for (int32_t l : flows[i]) --users[l];
    }
  }
  return rate;
}

}  // namespace ibroute::fabric
