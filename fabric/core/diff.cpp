#include "ibroute/fabric/diff.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace ibroute::fabric {

namespace {

using GuidIndex = std::unordered_map<uint64_t, int>;

GuidIndex index_by_guid(const Fabric& f) {
  GuidIndex g;
  for (size_t i = 0; i < f.nodes.size(); ++i) g.emplace(f.nodes[i].guid, static_cast<int>(i));
  return g;
}

// Canonical link key: the end with the smaller (guid, port) first.
using End = std::pair<uint64_t, int>;
std::map<std::pair<End, End>, std::string> links_of(const Fabric& f) {
  std::map<std::pair<End, End>, std::string> out;
  for (const Node& n : f.nodes)
    for (size_t p = 1; p < n.ports.size(); ++p) {
      const Port& port = n.ports[p];
      if (!port.connected()) continue;
      End a{n.guid, static_cast<int>(p)}, b{f.nodes[port.peer_node].guid, port.peer_port};
      if (b < a) continue;
      // A link trains to what both ends support: describe it by the slower end.
      const Port& far = f.nodes[port.peer_node].ports[port.peer_port];
      uint8_t width = port.width && far.width ? std::min(port.width, far.width) : std::max(port.width, far.width);
      const std::string& speed =
          far.speed.empty() || (!port.speed.empty() && lane_gbps(port.speed) <= lane_gbps(far.speed)) ? port.speed
                                                                                                      : far.speed;
      std::string what = format_width_speed(width, speed);
      // A port not active carries nothing, whichever end it is: both ends' states belong to the
      // link. (The near end's alone missed a switch port armed behind an active host port, and
      // the watch then never saw OpenSM activate it: no epoch until the next change.)
      auto idle = [](const Port& q) { return q.state != PortState::active && q.state != PortState::unknown; };
      if (idle(port) || idle(far))
        what += " " + std::string(to_string(port.state)) + "/" + std::string(to_string(far.state));
      out[{a, b}] = what;
    }
  return out;
}

PortRef ref(const Fabric& f, const GuidIndex& g, End e) {
  auto it = g.find(e.first);
  return {e.first, it == g.end() ? guid_hex(e.first) : f.nodes[it->second].desc, e.second};
}

std::string route_text(const Fabric& f, RouteStatus s, std::span<const Hop> hops) {
  return std::string(to_string(s)) + ": " + describe_path(f, hops);
}

// Routes compared as GUID/port sequences, since node indices differ between scans.
bool same_route(const Fabric& a, std::span<const Hop> ha, const Fabric& b, std::span<const Hop> hb) {
  if (ha.size() != hb.size()) return false;
  for (size_t i = 0; i < ha.size(); ++i)
    if (ha[i].out_port != hb[i].out_port || a.nodes[ha[i].node].guid != b.nodes[hb[i].node].guid) return false;
  return true;
}

}  // namespace

std::string describe_path(const Fabric& f, std::span<const Hop> hops) {
  std::string s;
  for (const Hop& h : hops) {
    if (!s.empty()) s += " -> ";
    s += f.nodes.at(h.node).desc + "[" + (h.out_port == kNoRoute ? std::string("none") : std::to_string(h.out_port)) +
         "]";
  }
  return s;
}

namespace {

// Everything but the routes; `tables_read_alike`: every switch of both has its table read in both
// or in neither (else the routes may differ where no entry is seen to).
FabricDiff diff_without_routes(const Fabric& a, const GuidIndex& ga, const Fabric& b, const GuidIndex& gb,
                               bool* tables_read_alike) {
  FabricDiff d;
  for (const Node& n : a.nodes)
    if (!gb.count(n.guid)) d.nodes_removed.push_back({n.guid, n.desc, -1});
  for (const Node& n : b.nodes)
    if (!ga.count(n.guid)) d.nodes_added.push_back({n.guid, n.desc, -1});

  auto la = links_of(a), lb = links_of(b);
  for (auto& [k, v] : la) {
    auto it = lb.find(k);
    if (it == lb.end())
      d.links_removed.push_back({ref(a, ga, k.first), ref(a, ga, k.second), v, "absent"});
    else if (it->second != v && v.find('?') == std::string::npos && it->second.find('?') == std::string::npos)
      d.links_changed.push_back({ref(a, ga, k.first), ref(a, ga, k.second), v, it->second});
  }
  for (auto& [k, v] : lb)
    if (!la.count(k)) d.links_added.push_back({ref(b, gb, k.first), ref(b, gb, k.second), "absent", v});

  for (const Node& na : a.nodes) {
    auto it = gb.find(na.guid);
    if (it == gb.end()) continue;
    const Node& nb = b.nodes[it->second];
    for (size_t p = 0; p < na.ports.size() && p < nb.ports.size(); ++p) {
      const Port &pa = na.ports[p], &pb = nb.ports[p];
      if (pa.base_lid != pb.base_lid || pa.lmc != pb.lmc)
        d.lids_changed.push_back({{na.guid, na.desc, static_cast<int>(p)}, pa.base_lid, pb.base_lid, pa.lmc, pb.lmc});
    }
    if (tables_read_alike && na.is_switch() && (na.lft_read != nb.lft_read || na.lft_rows_to != nb.lft_rows_to))
      *tables_read_alike = false;
    if (na.is_switch() && na.lft_read && nb.lft_read) {  // the LIDs both tables have rows for
      size_t changed = 0,
             n = std::min<size_t>(std::max(na.lft.size(), nb.lft.size()), std::min(na.lft_rows_to, nb.lft_rows_to));
      for (size_t l = 0; l < n; ++l) {
        uint8_t x = l < na.lft.size() ? na.lft[l] : kNoRoute, y = l < nb.lft.size() ? nb.lft[l] : kNoRoute;
        changed += x != y;
      }
      d.lft_entries_changed += changed;
      d.switches_with_lft_changes += changed > 0;
    }
  }
  return d;
}

}  // namespace

bool same_tables(const Fabric& a, const Fabric& b) {
  if (a.has_lfts != b.has_lfts) return false;
  bool alike = true;
  return diff_without_routes(a, index_by_guid(a), b, index_by_guid(b), &alike).empty() && alike;
}

FabricDiff diff_fabrics(const Fabric& a, const RouteSet& ra, const Fabric& b, const RouteSet& rb, size_t max_examples) {
  const GuidIndex ga = index_by_guid(a), gb = index_by_guid(b);
  FabricDiff d = diff_without_routes(a, ga, b, gb, nullptr);
  d.tables_compared = a.has_lfts && b.has_lfts;
  for (size_t ia = 0; ia < ra.ingress.size(); ++ia) {
    const Node& sw = a.nodes[ra.ingress[ia]];
    auto it = gb.find(sw.guid);
    if (it == gb.end()) continue;
    int ib = rb.ingress_index(it->second);
    if (ib < 0) continue;
    for (size_t da = 0; da < ra.dlids.size(); ++da) {
      int db = rb.dlid_index(ra.dlids[da]);
      if (db < 0) continue;
      size_t x = ra.index(ia, da), y = rb.index(ib, db);
      ++d.routes_compared;
      if (ra.status[x] == rb.status[y] && same_route(a, ra.path(x), b, rb.path(y))) continue;
      ++d.routes_changed;
      if (d.route_examples.size() < max_examples)
        d.route_examples.push_back({sw.desc, sw.guid, ra.dlids[da], route_text(a, ra.status[x], ra.path(x)),
                                    route_text(b, rb.status[y], rb.path(y))});
    }
  }
  return d;
}

}  // namespace ibroute::fabric
