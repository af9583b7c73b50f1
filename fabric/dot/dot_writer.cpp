#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "ibroute/fabric/dot.hpp"
#include "ibroute/fabric/structure.hpp"

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

// The graph's label: the title, then what colours and line styles mean (HTML-like label), a row
// each, so that the legend stays near the left edge where a viewer starts reading.
std::string legend(const DotOptions& opt, bool per_pair) {
  auto esc = [](const std::string& t) { return markup_escape(t); };
  auto text = [](const std::string& t, const char* colour = "black") {
    return std::string("<td align=\"left\"><font point-size=\"11\" color=\"") + colour + "\">" + t + "</font></td>";
  };
  std::string l = "<table border=\"0\" cellspacing=\"3\" cellpadding=\"1\">";
  if (!opt.title.empty()) l += "<tr><td colspan=\"11\" align=\"left\"><font point-size=\"16\"><b>" + esc(opt.title) + "</b></font></td></tr>";
  if (!opt.load.empty()) {
    l += "<tr>" + text("transfers at once against capacity:");
    for (auto [colour, what] : {std::pair{"#cccccc", "none"}, {"#a6d3a0", "under half"}, {"#57ab5a", "half or more"},
                                {"#1a7f37", "at capacity"}, {"#d62728", "over capacity"}})
      l += std::string("<td bgcolor=\"") + colour + "\" width=\"18\"> </td>" + text(what);
    l += "</tr>";
  }
  // Its own table: a wide cell here would stretch the swatches' columns above.
  l += "<tr><td colspan=\"11\" align=\"left\"><table border=\"0\" cellspacing=\"3\" cellpadding=\"1\"><tr>" + text("lines:") +
       text("dashed red: link down or missing", "#d62728") + text("orange: narrower or slower than the fabric's links", "#e07000") +
       (opt.suspects.empty() ? "" : text("thick purple: a suspect of the diagnosis", "#8e24aa")) +
       (per_pair ? text("xN: N parallel links") : "") + "</tr></table></td></tr></table>";
  return l;
}

std::string to_dot(const Fabric& f, const DotOptions& opt) {
  std::ostringstream o;
  auto [width, gbps] = common_rate(f);
  // Levels from the structure (hosts 0, leaves 1, up to the top); edges run from the lower level
  // to the higher one, so dot (rankdir=BT) draws the tree upright, one row per level.
  FabricStructure st = analyze_structure(f);
  std::vector<int> level(f.nodes.size(), 0), hosts(f.nodes.size(), 0);
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    if (!n.is_switch()) continue;
    for (const Port& p : n.ports)
      if (p.connected() && !f.nodes[p.peer_node].is_switch()) ++hosts[i];
    level[i] = std::max(st.level[i], 1);
  }
  // Beyond a few dozen switches, parallel links are drawn as one edge per switch pair.
  size_t switches = 0;
  for (const Node& n : f.nodes) switches += n.is_switch();
  const bool per_pair = opt.aggregate == DotOptions::Aggregate::always ||
                        (opt.aggregate == DotOptions::Aggregate::large && switches > DotOptions::kLargeFabric);
  long max_load = 1;
  for (auto& [k, v] : opt.load) max_load = std::max(max_load, v.first);
  auto load_of = [&](int node, int port) {
    auto it = opt.load.find({node, port});
    return it == opt.load.end() ? std::pair<long, long>{0, 0} : it->second;
  };
  // Drawn at its natural size: shrinking a large fabric to a screen made 3-point labels (and
  // Graphviz's rounded scale cut its right edge off); a viewer scrolls. The title and a legend of
  // what the colours and line styles mean sit above it.
  o << "graph fabric {\n  graph [rankdir=BT, splines=false, nodesep=0.15, ranksep=" << (per_pair ? "3" : "1.2")
    << ", fontname=\"Helvetica\", pad=0.3, labelloc=t, labeljust=l, label=<" << legend(opt, per_pair) << ">];\n"
    << "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [color=" << (per_pair ? "\"#5555554d\", penwidth=0.6" : "\"#555555\"")
    << "];\n";
  std::vector<std::string> rank(st.levels + 2);
  std::vector<std::vector<size_t>> in_rank(st.levels + 2);  // to keep each row in name order
  std::vector<size_t> order(f.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return natural_less(f.nodes[a].desc, f.nodes[b].desc); });
  // Large fabrics: the hosts counted in their switch's label, not drawn as a row of their own.
  const bool hosts_in_label = opt.fold_hosts && per_pair;
  for (size_t i : order) {
    const Node& n = f.nodes[i];
    if (!n.is_switch()) {
      if (!opt.fold_hosts) {
        o << "  n" << i << " [label=" << quote(n.desc) << ", shape=ellipse];\n";
        rank[0] += " n" + std::to_string(i) + ";";
        in_rank[0].push_back(i);
      }
      continue;
    }
    rank[std::min<size_t>(level[i], rank.size() - 1)] += " n" + std::to_string(i) + ";";
    in_rank[std::min<size_t>(level[i], rank.size() - 1)].push_back(i);
    const std::string label = per_pair ? n.desc + (hosts_in_label && hosts[i] ? "\n" + std::to_string(hosts[i]) + " hosts" : "")
                                       : n.desc + "\nlid " + std::to_string(n.mgmt_port().base_lid);
    o << "  n" << i << " [label=" << quote(label)
      << ", shape=box, style=filled, fillcolor=" << (level[i] == 1 ? "\"#dbe9f6\"" : level[i] == st.levels ? "\"#f6e3c6\"" : "\"#e4f2dc\"")
      << (n.lft_read ? "" : ", color=red, penwidth=2") << "];\n";
    if (opt.fold_hosts && !hosts_in_label && hosts[i]) {
      o << "  h" << i << " [label=\"" << hosts[i] << " hosts\", shape=folder, fontsize=9];\n  h" << i << " -- n" << i << ";\n";
      rank[0] += " h" + std::to_string(i) + ";";
    }
  }
  for (size_t r = 0; r < rank.size(); ++r) {
    if (rank[r].empty()) continue;
    o << "  {rank=same;" << rank[r];
    // Invisible edges along the row hold it in name order (dot would reorder it to cut crossings).
    if (r > 0 && in_rank[r].size() > 1) {
      o << " ";
      for (size_t k = 0; k < in_rank[r].size(); ++k) o << (k ? " -- n" : "n") << in_rank[r][k];
      o << " [style=invis];";
    }
    o << "}\n";
  }
  // One edge per link, or per switch pair: the pair's link count, its worst load each way.
  struct Edge {
    size_t a, b;
    int pa, pb, links = 0, slow = 0, down = 0;
    long la = 0, lb = 0, ca = 0, cb = 0;
  };
  std::map<std::pair<size_t, size_t>, size_t> pair_edge;
  std::vector<Edge> edges;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    for (size_t p = 1; p < n.ports.size(); ++p) {
      const Port& port = n.ports[p];
      if (!port.connected()) continue;
      const size_t j = static_cast<size_t>(port.peer_node);
      if (opt.fold_hosts && (!n.is_switch() || !f.nodes[j].is_switch())) continue;
      // Each link once: from its lower end (or, on one level, from the smaller index).
      if (level[j] < level[i] || (level[j] == level[i] && (j < i || (j == i && port.peer_port < p)))) continue;
      Edge* e;
      if (per_pair && i != j) {
        auto [it, fresh] = pair_edge.try_emplace({i, j}, edges.size());
        if (fresh) edges.push_back({i, j, static_cast<int>(p), port.peer_port});
        e = &edges[it->second];
      } else {
        edges.push_back({i, j, static_cast<int>(p), port.peer_port});
        e = &edges.back();
      }
      ++e->links;
      e->slow += width && (port.width != width || lane_gbps(port.speed) != gbps);
      e->down += port.state != PortState::active && port.state != PortState::unknown;
      auto [la, ca] = load_of(static_cast<int>(i), static_cast<int>(p));
      auto [lb, cb] = load_of(static_cast<int>(j), port.peer_port);
      e->la = std::max(e->la, la), e->lb = std::max(e->lb, lb), e->ca = std::max(e->ca, ca), e->cb = std::max(e->cb, cb);
    }
  }
  for (const Edge& e : edges) {
    o << "  n" << e.a << " -- n" << e.b << " [";
    if (per_pair) o << "label=\"" << (e.links > 1 ? "x" + std::to_string(e.links) : std::string()) << "\", fontsize=7";
    else o << "taillabel=\"" << e.pa << "\", headlabel=\"" << e.pb << "\", fontsize=7";
    if (level[e.a] == level[e.b]) o << ", constraint=false";
    const bool down = e.down == e.links;
    if (!opt.load.empty() && !down) {
      bool over = (e.ca && e.la > e.ca) || (e.cb && e.lb > e.cb);
      double share = static_cast<double>(std::max(e.la, e.lb)) / (e.ca && e.cb ? std::max(e.ca, e.cb) : max_load);
      // A narrow or slow link stays orange (as the legend says) unless it is over capacity.
      const char* colour = over ? "#d62728" : e.slow ? "#e07000" : share >= 0.999 ? "#1a7f37" : share >= 0.5 ? "#57ab5a" : share > 0 ? "#a6d3a0" : "#cccccc";
      o << ", color=\"" << colour << "\", penwidth=" << 1 + (per_pair ? 1.5 : 3) * std::min(1.0, static_cast<double>(std::max(e.la, e.lb)) / max_load);
      if (!per_pair) o << ", xlabel=\"" << e.la << "/" << e.lb << "\"";
      if (e.slow) o << ", style=bold";
    } else if (e.down) {
      o << ", color=red, style=dashed";
    } else if (e.slow && !per_pair) {
      o << ", color=orange, penwidth=2, label=" << quote(format_width_speed(f.nodes[e.a].ports[e.pa].width, f.nodes[e.a].ports[e.pa].speed));
    } else if (e.slow) {
      o << ", color=orange, penwidth=2";
    }
    if (opt.suspects.count({static_cast<int>(e.a), e.pa}) || opt.suspects.count({static_cast<int>(e.b), e.pb}))
      o << ", color=\"#8e24aa\", penwidth=5";  // the later attribute wins
    o << "];\n";
  }
  for (auto [a, b] : opt.missing)
    if (a >= 0 && b >= 0 && static_cast<size_t>(a) < f.nodes.size() && static_cast<size_t>(b) < f.nodes.size() && a != b)
      o << "  n" << a << " -- n" << b << " [color=red, style=dashed, label=\"missing\", fontsize=7, fontcolor=red, constraint=false];\n";
  o << "}\n";
  return o.str();
}

}  // namespace ibroute::fabric
