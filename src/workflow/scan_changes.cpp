#include "scan_changes.hpp"

#include <set>
#include <unordered_map>

#include "ibroute/fabric/routes.hpp"

namespace ibroute::workflow {

ScanChanges changes_since_previous(store::FabricStore& store, const FabricContext& c) {
  ScanChanges out;
  for (const store::ScanInfo& s : store.scans())
    if (s.id < c.scan_id) out.previous = std::max(out.previous, s.id);
  if (!out.previous) return out;
  const fabric::Fabric before = store.load_fabric(out.previous, false);
  const fabric::Fabric& now = c.fabric;
  std::unordered_map<uint64_t, int32_t> node_now;
  for (size_t i = 0; i < now.nodes.size(); ++i) node_now.emplace(now.nodes[i].guid, static_cast<int32_t>(i));
  std::set<std::string> hosts_now;
  for (const fabric::Node& n : now.nodes)
    if (fabric::is_host(n)) hosts_now.insert(n.desc);
  for (const fabric::Node& n : before.nodes)
    if (fabric::is_host(n) && !hosts_now.count(n.desc)) out.hosts_gone.push_back(n.desc);
  for (size_t i = 0; i < before.nodes.size(); ++i) {
    const fabric::Node& n = before.nodes[i];
    for (int p = 1; p <= n.num_ports(); ++p) {
      const fabric::Port& port = n.ports[p];
      if (!port.connected()) continue;
      const fabric::Node& peer = before.nodes[port.peer_node];
      if (n.guid > peer.guid || (n.guid == peer.guid && p > port.peer_port)) continue;  // each cable once
      const auto a = node_now.find(n.guid), b = node_now.find(peer.guid);
      if (a == node_now.end() || b == node_now.end()) continue;  // a node gone: named as such
      const fabric::Node& an = now.nodes[a->second];
      if (p > an.num_ports()) continue;
      const fabric::Port& pa = an.ports[p];
      if (pa.connected() && pa.peer_node == b->second && pa.peer_port == port.peer_port && fabric::port_usable(pa))
        continue;
      out.cables_gone.push_back({a->second, b->second, p, port.peer_port});
    }
  }
  return out;
}

std::string cable_name(const fabric::Fabric& f, const LostCable& l) {
  return f.nodes[l.a].desc + "[" + std::to_string(l.pa) + "] - " + f.nodes[l.b].desc + "[" + std::to_string(l.pb) + "]";
}

}  // namespace ibroute::workflow
