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

// Switch labels, distinct and at most this long: 79 edge switches "Infiniscale-IV Mellanox
// Technologies (0x…)" in one row made a drawing 26 767 pt wide.
constexpr size_t kLabelChars = 26;
// Switches per row of the drawing: a wider level is wrapped onto rows stacked under the next level.
constexpr size_t kRowWidth = 12;

std::vector<std::string> switch_labels(const Fabric& f, size_t max_chars) {
  std::vector<std::string> names;
  std::vector<size_t> which;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch()) names.push_back(f.nodes[i].desc), which.push_back(i);
  std::vector<std::string> labels = picture_labels(names, max_chars), out(f.nodes.size());
  for (size_t k = 0; k < which.size(); ++k) out[which[k]] = std::move(labels[k]);
  return out;
}

// "director1 IS5600\n6 ASICs (4 line, 2 spine)\n36 internal links, 1 down"
std::string chassis_label(const Chassis& c, const Fabric& f, const std::vector<size_t>& drawn) {
  int internal = 0, down = 0;
  for (int32_t a : c.asics)
    for (size_t p = 1; p < f.nodes[static_cast<size_t>(a)].ports.size(); ++p) {
      const Port& port = f.nodes[static_cast<size_t>(a)].ports[p];
      if (!port.connected() || drawn[static_cast<size_t>(port.peer_node)] != drawn[static_cast<size_t>(a)] || port.peer_node < a) continue;
      ++internal;
      down += port.state != PortState::active && port.state != PortState::unknown;
    }
  std::string name = c.name.empty() ? "chassis " + guid_hex(c.sysimg_guid) : c.name;
  std::string label = name.substr(0, 2 * kLabelChars) + (c.model.empty() ? "" : " " + c.model.substr(0, kLabelChars)) + "\n" +
                      std::to_string(c.asics.size()) + " ASICs";
  if (c.line_asics || c.spine_asics) label += " (" + std::to_string(c.line_asics) + " line, " + std::to_string(c.spine_asics) + " spine)";
  label += "\n" + std::to_string(internal) + " internal links" + (down ? ", " + std::to_string(down) + " down" : "");
  return label;
}

// The rows of the drawing, level by level: each in name order (invisible edges along it, or dot
// would reorder it to cut crossings). In a large drawing (`wrap`) a level of more than kRowWidth
// switches is wrapped onto several rows, the first on top, each held below the one before by an
// invisible edge, and the levels are stacked by invisible edges too: the cables there do not
// constrain the layout (each one spanning several rows made dot spread every row out).
void write_rows(std::ostringstream& o, const std::vector<std::vector<std::string>>& in_rank, bool wrap) {
  std::string below;  // the first node of the top row of the last level written
  for (size_t r = 0; r < in_rank.size(); ++r) {
    const std::vector<std::string>& row = in_rank[r];
    const size_t width = wrap && r > 0 ? kRowWidth : std::max<size_t>(row.size(), 1);
    std::string previous_first;
    for (size_t at = 0; at < row.size(); at += width) {
      const size_t end = std::min(row.size(), at + width);
      o << "  {rank=same;";
      for (size_t k = at; k < end; ++k) o << " " << row[k] << ";";
      if (r > 0 && end - at > 1) {
        o << " ";
        for (size_t k = at; k < end; ++k) o << (k > at ? " -- " : "") << row[k];
        o << " [style=invis];";
      }
      o << "}\n";
      if (at > 0) o << "  " << row[at] << " -- " << previous_first << " [style=invis];\n";  // the next row below
      previous_first = row[at];
    }
    if (wrap && r > 0 && !row.empty()) {
      if (!below.empty()) o << "  " << below << " -- " << previous_first << " [style=invis];\n";  // this level's bottom row above
      below = row.front();
    }
  }
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
  // There, a director is one box: its ASICs' cables are the chassis' (drawn to it), its internal
  // links a count in its label. `drawn[i]` is the node that stands for node i in the picture.
  std::vector<size_t> drawn(f.nodes.size());
  for (size_t i = 0; i < drawn.size(); ++i) drawn[i] = i;
  std::map<size_t, const Chassis*> chassis_of;  // by the ASIC drawn for it
  if (per_pair)
    for (const Chassis& c : st.chassis) {
      if (c.asics.size() < 2) continue;
      const auto stand_in = static_cast<size_t>(c.asics.front());
      chassis_of[stand_in] = &c;
      for (int32_t a : c.asics) {
        drawn[static_cast<size_t>(a)] = stand_in;
        level[stand_in] = std::max(level[stand_in], level[static_cast<size_t>(a)]);
        if (static_cast<size_t>(a) != stand_in) hosts[stand_in] += hosts[static_cast<size_t>(a)];
      }
    }
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
  std::vector<std::vector<std::string>> in_rank(st.levels + 2);  // the rows' node ids, in name order
  std::vector<size_t> order(f.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return natural_less(f.nodes[a].desc, f.nodes[b].desc); });
  // Large fabrics: the hosts counted in their switch's label, not drawn as a row of their own.
  const bool hosts_in_label = opt.fold_hosts && per_pair;
  const std::vector<std::string> name = switch_labels(f, per_pair ? kLabelChars : 2 * kLabelChars);
  for (size_t i : order) {
    const Node& n = f.nodes[i];
    if (!n.is_switch()) {
      if (!opt.fold_hosts) {
        o << "  n" << i << " [label=" << quote(n.desc) << ", shape=ellipse];\n";
        in_rank[0].push_back("n" + std::to_string(i));
      }
      continue;
    }
    if (drawn[i] != i) continue;  // an ASIC of a director drawn as one box
    in_rank[std::min<size_t>(level[i], in_rank.size() - 1)].push_back("n" + std::to_string(i));
    auto box = chassis_of.find(i);
    const std::string hosts_text = hosts_in_label && hosts[i] ? "\n" + std::to_string(hosts[i]) + " hosts" : "";
    const std::string label = box != chassis_of.end() ? chassis_label(*box->second, f, drawn) + hosts_text
                              : per_pair              ? name[i] + hosts_text
                                                      : name[i] + "\nlid " + std::to_string(n.mgmt_port().base_lid);
    o << "  n" << i << " [label=" << quote(label)
      << ", shape=box, style=\"filled" << (box != chassis_of.end() ? ",bold\", margin=\"0.3,0.15\"" : "\"")
      << ", fillcolor=" << (level[i] == 1 ? "\"#dbe9f6\"" : level[i] == st.levels ? "\"#f6e3c6\"" : "\"#e4f2dc\"")
      << (n.lft_read ? "" : ", color=red, penwidth=2") << "];\n";
    if (opt.fold_hosts && !hosts_in_label && hosts[i]) {
      o << "  h" << i << " [label=\"" << hosts[i] << " hosts\", shape=folder, fontsize=9];\n  h" << i << " -- n" << i << ";\n";
      in_rank[0].push_back("h" + std::to_string(i));
    }
  }
  write_rows(o, in_rank, per_pair);
  // One edge per link, or per switch pair: the pair's link count, its worst load each way.
  struct Edge {
    size_t a, b;    // as drawn (a director's box)
    size_t na, nb;  // the nodes whose ports pa, pb are
    int pa, pb, links = 0, slow = 0, down = 0;
    long la = 0, lb = 0, ca = 0, cb = 0;
    bool suspect = false;
  };
  std::map<std::pair<size_t, size_t>, size_t> pair_edge;
  std::vector<Edge> edges;
  for (size_t asic = 0; asic < f.nodes.size(); ++asic) {
    const Node& n = f.nodes[asic];
    for (size_t p = 1; p < n.ports.size(); ++p) {
      const Port& port = n.ports[p];
      if (!port.connected()) continue;
      if (opt.fold_hosts && (!n.is_switch() || !f.nodes[static_cast<size_t>(port.peer_node)].is_switch())) continue;
      const auto peer = static_cast<size_t>(port.peer_node);
      const size_t i = drawn[asic], j = drawn[peer];
      if (i == j && peer != asic) continue;  // inside a director box: counted in its label
      // Each link once: from its lower end (or, on one level, from the smaller index).
      if (level[j] < level[i] || (level[j] == level[i] && (j < i || (j == i && port.peer_port < p)))) continue;
      Edge* e;
      if (per_pair && i != j) {
        auto [it, fresh] = pair_edge.try_emplace({i, j}, edges.size());
        if (fresh) edges.push_back({i, j, asic, peer, static_cast<int>(p), port.peer_port});
        e = &edges[it->second];
      } else {
        edges.push_back({i, j, asic, peer, static_cast<int>(p), port.peer_port});
        e = &edges.back();
      }
      ++e->links;
      e->slow += width && (port.width != width || lane_gbps(port.speed) != gbps);
      e->down += port.state != PortState::active && port.state != PortState::unknown;
      auto [la, ca] = load_of(static_cast<int>(asic), static_cast<int>(p));
      auto [lb, cb] = load_of(port.peer_node, port.peer_port);
      e->suspect = e->suspect || opt.suspects.count({static_cast<int>(asic), static_cast<int>(p)}) || opt.suspects.count({port.peer_node, port.peer_port});
      e->la = std::max(e->la, la), e->lb = std::max(e->lb, lb), e->ca = std::max(e->ca, ca), e->cb = std::max(e->cb, cb);
    }
  }
  for (const Edge& e : edges) {
    o << "  n" << e.a << " -- n" << e.b << " [";
    // xlabel: placed after the layout (a label would be a node of its own, widening the rows).
    if (per_pair) o << "xlabel=\"" << (e.links > 1 ? "x" + std::to_string(e.links) : std::string()) << "\", fontsize=7";
    else o << "taillabel=\"" << e.pa << "\", headlabel=\"" << e.pb << "\", fontsize=7";
    if (level[e.a] == level[e.b] || per_pair) o << ", constraint=false";  // per pair: the rows stack by invisible edges
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
      o << ", color=orange, penwidth=2, label=" << quote(format_width_speed(f.nodes[e.na].ports[e.pa].width, f.nodes[e.na].ports[e.pa].speed));
    } else if (e.slow) {
      o << ", color=orange, penwidth=2";
    }
    if (e.suspect)
      o << ", color=\"#8e24aa\", penwidth=5";  // the later attribute wins
    o << "];\n";
  }
  for (auto [a, b] : opt.missing)
    if (a >= 0 && b >= 0 && static_cast<size_t>(a) < f.nodes.size() && static_cast<size_t>(b) < f.nodes.size() && a != b)
      o << "  n" << drawn[static_cast<size_t>(a)] << " -- n" << drawn[static_cast<size_t>(b)] << " [color=red, style=dashed, label=\"missing\", fontsize=7, fontcolor=red, constraint=false];\n";
  o << "}\n";
  return o.str();
}

}  // namespace ibroute::fabric
