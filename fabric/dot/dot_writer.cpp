#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "ibroute/fabric/dot.hpp"

namespace ibroute::fabric {

namespace {
std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + '"';
}

// The widest width and fastest lane speed seen on switch links: the fabric's nominal rate.
std::pair<uint8_t, double> common_rate(const Fabric& f) {
  std::map<std::pair<uint8_t, double>, int> seen;
  for (const Node& n : f.nodes)
    for (size_t p = 1; p < n.ports.size(); ++p)
      if (n.ports[p].connected()) ++seen[{n.ports[p].width, lane_gbps(n.ports[p].speed)}];
  auto best = std::max_element(seen.begin(), seen.end(), [](auto& x, auto& y) { return x.second < y.second; });
  return best == seen.end() ? std::pair<uint8_t, double>{0, 0} : best->first;
}
}  // namespace

std::string to_dot(const Fabric& f, const DotOptions& opt) {
  std::ostringstream o;
  auto [width, gbps] = common_rate(f);
  // Levels: 0 hosts, 1 switches with hosts (leaves), 2 other switches (spines). Edges run from
  // the lower level to the higher one, so dot (rankdir=BT) draws the tree upright.
  std::vector<int> level(f.nodes.size(), 0), hosts(f.nodes.size(), 0);
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    if (!n.is_switch()) continue;
    for (const Port& p : n.ports)
      if (p.connected() && !f.nodes[p.peer_node].is_switch()) ++hosts[i];
    level[i] = hosts[i] ? 1 : 2;
  }
  long max_load = 1;
  for (auto& [k, v] : opt.load) max_load = std::max(max_load, v.first);
  auto load_of = [&](int node, int port) {
    auto it = opt.load.find({node, port});
    return it == opt.load.end() ? std::pair<long, long>{0, 0} : it->second;
  };
  o << "graph fabric {\n  graph [rankdir=BT, splines=false, nodesep=0.15, ranksep=1.2, fontname=\"Helvetica\"";
  if (!opt.title.empty()) o << ", labelloc=t, label=" << quote(opt.title);
  o << "];\n"
    << "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [color=\"#555555\"];\n";
  std::string rank[3];
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    if (!n.is_switch()) {
      if (!opt.fold_hosts) {
        o << "  n" << i << " [label=" << quote(n.desc) << ", shape=ellipse];\n";
        rank[0] += " n" + std::to_string(i) + ";";
      }
      continue;
    }
    rank[level[i]] += " n" + std::to_string(i) + ";";
    o << "  n" << i << " [label=" << quote(n.desc + "\nlid " + std::to_string(n.mgmt_port().base_lid))
      << ", shape=box, style=filled, fillcolor=" << (hosts[i] ? "\"#dbe9f6\"" : "\"#f6e3c6\"")
      << (n.lft_read ? "" : ", color=red, penwidth=2") << "];\n";
    if (opt.fold_hosts && hosts[i]) {
      o << "  h" << i << " [label=\"" << hosts[i] << " hosts\", shape=folder, fontsize=9];\n  h" << i << " -- n" << i << ";\n";
      rank[0] += " h" + std::to_string(i) + ";";
    }
  }
  for (const std::string& r : rank)
    if (!r.empty()) o << "  {rank=same;" << r << "}\n";
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    for (size_t p = 1; p < n.ports.size(); ++p) {
      const Port& port = n.ports[p];
      if (!port.connected()) continue;
      const size_t j = static_cast<size_t>(port.peer_node);
      if (opt.fold_hosts && (!n.is_switch() || !f.nodes[j].is_switch())) continue;
      // Each link once: from its lower end (or, on one level, from the smaller index).
      if (level[j] < level[i] || (level[j] == level[i] && (j < i || (j == i && port.peer_port < p)))) continue;
      bool slow = width && (port.width != width || lane_gbps(port.speed) != gbps);
      bool down = port.state != PortState::active && port.state != PortState::unknown;
      o << "  n" << i << " -- n" << j << " [taillabel=\"" << p << "\", headlabel=\"" << int(port.peer_port)
        << "\", fontsize=7";
      if (level[i] == level[j]) o << ", constraint=false";
      if (!opt.load.empty() && !down) {
        auto [la, ca] = load_of(static_cast<int>(i), static_cast<int>(p));
        auto [lb, cb] = load_of(static_cast<int>(j), port.peer_port);
        bool over = (ca && la > ca) || (cb && lb > cb);
        double share = static_cast<double>(std::max(la, lb)) / (ca && cb ? std::max(ca, cb) : max_load);
        const char* colour = over ? "#d62728" : share >= 0.999 ? "#1a7f37" : share >= 0.5 ? "#57ab5a" : share > 0 ? "#a6d3a0" : "#cccccc";
        o << ", color=\"" << colour << "\", penwidth=" << 1 + 3 * std::min(1.0, static_cast<double>(std::max(la, lb)) / max_load)
          << ", xlabel=\"" << la << "/" << lb << "\"";
        if (slow) o << ", style=bold";
      } else if (down) o << ", color=red, style=dashed";
      else if (slow) o << ", color=orange, penwidth=2, label=" << quote(format_width_speed(port.width, port.speed));
      o << "];\n";
    }
  }
  o << "}\n";
  return o.str();
}

}  // namespace ibroute::fabric
