#include "ibroute/fabric/routes.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "ibroute/fabric/enum_names.hpp"

namespace ibroute::fabric {

namespace {
constexpr std::array<std::string_view, 6> kStatus{"ok", "drop", "loop", "dead_end", "misdelivered", "unknown"};
static_assert(kStatus.size() == static_cast<size_t>(RouteStatus::unknown) + 1, "a name for every RouteStatus");
}  // namespace

bool port_usable(const Port& p) {
  // An offline import does not know port states: a cabled port is taken as up.
  return p.connected() && (p.state == PortState::active || p.state == PortState::unknown);
}

RouteStatus LftWalker::walk(int32_t start, uint16_t dlid, std::vector<Hop>& hops) {
  const Fabric& f = f_;
  const uint32_t gen = ++gen_;
  std::vector<uint32_t>& mark = mark_;
  int32_t cur = start;
  mark[cur] = gen;
  for (;;) {
    const Node& n = f.nodes[cur];
    if (!n.lft_known(dlid)) {
      hops.push_back({cur, kNoRoute});
      return RouteStatus::unknown;
    }
    if (n.ports[0].owns_lid(dlid)) {
      hops.push_back({cur, 0});
      return RouteStatus::ok;
    }
    uint8_t out = dlid < n.lft.size() ? n.lft[dlid] : kNoRoute;
    hops.push_back({cur, out});
    if (out == kNoRoute || out == 0 || out > n.num_ports()) return RouteStatus::drop;
    const Port& p = n.ports[out];
    // Active but without a peer: the link is up and the scan never reached the other side.
    if (!p.connected() && p.state == PortState::active) return RouteStatus::unknown;
    if (!port_usable(p)) return RouteStatus::dead_end;
    const Node& next = f.nodes[p.peer_node];
    if (!next.is_switch()) return next.ports[p.peer_port].owns_lid(dlid) ? RouteStatus::ok : RouteStatus::misdelivered;
    if (mark[p.peer_node] == gen) return RouteStatus::loop;
    mark[p.peer_node] = gen;
    cur = p.peer_node;
  }
}

std::string_view to_string(RouteStatus s) { return enum_name(kStatus, s); }

bool route_status_from(std::string_view s, RouteStatus& out) { return enum_from(kStatus, s, out); }

int RouteSet::ingress_index(int32_t node) const {
  auto it = std::find(ingress.begin(), ingress.end(), node);
  return it == ingress.end() ? -1 : static_cast<int>(it - ingress.begin());
}

int RouteSet::dlid_index(uint16_t dlid) const {
  auto it = std::lower_bound(dlids.begin(), dlids.end(), dlid);
  return it == dlids.end() || *it != dlid ? -1 : static_cast<int>(it - dlids.begin());
}

RouteSet resolve_routes(const Fabric& f) {
  RouteSet r;
  r.dlids = LidMap(f).lids();
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    if (!n.is_switch()) continue;
    bool has_ca = std::any_of(n.ports.begin() + 1, n.ports.end(),
                              [&](const Port& p) { return p.connected() && !f.nodes[p.peer_node].is_switch(); });
    if (has_ca) r.ingress.push_back(static_cast<int32_t>(i));
  }
  const size_t total = r.ingress.size() * r.dlids.size();
  r.status.reserve(total);
  r.offset.reserve(total + 1);
  r.hops.reserve(total * 3);
  r.offset.push_back(0);
  LftWalker walker(f);
  for (int32_t sw : r.ingress)
    for (uint16_t dlid : r.dlids) {
      r.status.push_back(walker.walk(sw, dlid, r.hops));
      r.offset.push_back(static_cast<uint32_t>(r.hops.size()));
    }
  return r;
}

PortRoute route_from_port(const Fabric& f, const RouteSet& routes, int node, int port, uint16_t dlid) {
  PortRoute out;
  const Port& src = f.nodes.at(node).ports.at(port);
  out.hops.push_back({node, static_cast<uint8_t>(port)});
  if (src.owns_lid(dlid)) {  // to itself: the HCA loops it back
    out.hops.back().out_port = 0;
    out.status = RouteStatus::ok;
    return out;
  }
  if (!port_usable(src)) {
    out.status = RouteStatus::dead_end;
    return out;
  }
  const Node& peer = f.nodes[src.peer_node];
  if (!peer.is_switch()) {  // back-to-back CAs
    out.status = peer.ports[src.peer_port].owns_lid(dlid) ? RouteStatus::ok : RouteStatus::misdelivered;
    return out;
  }
  int ii = routes.ingress_index(src.peer_node);
  int di = routes.dlid_index(dlid);
  if (ii < 0 || di < 0) {  // a LID nobody owns
    out.status = RouteStatus::drop;
    out.hops.push_back({src.peer_node, kNoRoute});
    return out;
  }
  size_t r = routes.index(ii, di);
  auto p = routes.path(r);
  out.hops.insert(out.hops.end(), p.begin(), p.end());
  out.status = routes.status[r];
  return out;
}

RouteCounts count_routes(const RouteSet& r) {
  // The field that counts each status, in the order of RouteStatus' values.
  static constexpr std::array<size_t RouteCounts::*, 6> kCount{&RouteCounts::ok,           &RouteCounts::drop,
                                                               &RouteCounts::loop,         &RouteCounts::dead_end,
                                                               &RouteCounts::misdelivered, &RouteCounts::unknown};
  static_assert(kCount.size() == kStatus.size(), "a count for every RouteStatus");
  RouteCounts c;
  c.total = r.size();
  for (RouteStatus s : r.status) ++(c.*kCount.at(static_cast<size_t>(s)));
  return c;
}

std::vector<BrokenEnd> broken_ends(const RouteSet& routes) {
  std::map<std::tuple<int32_t, uint8_t, RouteStatus>, BrokenEnd> by_end;
  for (size_t i = 0; i < routes.ingress.size(); ++i)
    for (size_t d = 0; d < routes.dlids.size(); ++d) {
      const size_t r = routes.index(i, d);
      const RouteStatus st = routes.status[r];
      if (st == RouteStatus::ok || st == RouteStatus::unknown) continue;
      const std::span<const Hop> path = routes.path(r);
      const Hop last = path.empty() ? Hop{routes.ingress[i], kNoRoute} : path.back();
      BrokenEnd& e = by_end[{last.node, last.out_port, st}];
      if (e.routes++ == 0) e = {last.node, last.out_port, st, 1, routes.ingress[i], routes.dlids[d]};
    }
  std::vector<BrokenEnd> out;
  for (auto& [key, e] : by_end) out.push_back(e);
  std::stable_sort(out.begin(), out.end(), [](const BrokenEnd& a, const BrokenEnd& b) { return a.routes > b.routes; });
  return out;
}

}  // namespace ibroute::fabric
