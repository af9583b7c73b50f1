// The level-pair matrix: rows are the switches of one level, columns those of the level above,
// a cell per switch pair. Written as SVG text directly: a grid needs no layout engine, and a
// 36 x 12 or 648 x 324 grid stays readable where a node-link drawing is a wall of edges.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "ibroute/fabric/dot.hpp"
#include "ibroute/fabric/structure.hpp"

namespace ibroute::fabric {

namespace {

std::string esc(const std::string& s) { return ibroute::fabric::markup_escape(s); }

// Load against capacity: light green (idle) through green (at capacity) to red (over).
std::string load_colour(long load, long cap) {
  if (load <= 0) return "#eef6ee";
  if (cap > 0 && load > cap) {
    double over = std::min(1.0, static_cast<double>(load - cap) / cap);
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", 230 - static_cast<int>(40 * over), 120 - static_cast<int>(90 * over),
                  110 - static_cast<int>(80 * over));
    return buf;
  }
  double share = cap > 0 ? static_cast<double>(load) / cap : 1;
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", 200 - static_cast<int>(170 * share), 230 - static_cast<int>(95 * share),
                200 - static_cast<int>(150 * share));
  return buf;
}

std::vector<std::string> descs(const Fabric& f, const std::vector<int32_t>& nodes) {
  std::vector<std::string> out;
  for (int32_t i : nodes) out.push_back(f.nodes[static_cast<size_t>(i)].desc);
  return out;
}

struct Cell {
  int links = 0, slow = 0, down = 0;
  long up = 0, dn = 0, cap_up = 0, cap_dn = 0;
};

}  // namespace

std::string matrix_svg(const Fabric& f, const DotOptions& opt) {
  FabricStructure st = analyze_structure(f);
  auto [width, gbps] = std::pair<uint8_t, double>{st.common_width, lane_gbps(st.common_speed)};
  const bool with_load = !opt.load.empty();
  auto load_of = [&](int node, int port) {
    auto it = opt.load.find({node, port});
    return it == opt.load.end() ? std::pair<long, long>{0, 0} : it->second;
  };
  constexpr int kLabel = 190, kGap = 40;
  size_t widest = 1;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch() && st.level[i] > 1) ++widest;  // an upper bound of the columns
  const int kCell = static_cast<int>(std::clamp<size_t>(720 / widest, 14, 28));
  std::ostringstream body;
  int y = 40, max_w = 600;
  int over_cells = 0, missing_cells = 0;
  for (int lvl = 1; lvl < st.levels; ++lvl) {
    std::vector<int32_t> rows, cols;
    for (size_t i = 0; i < f.nodes.size(); ++i)
      if (f.nodes[i].is_switch()) {
        if (st.level[i] == lvl) rows.push_back(static_cast<int32_t>(i));
        if (st.level[i] == lvl + 1) cols.push_back(static_cast<int32_t>(i));
      }
    auto by_name = [&](int32_t a, int32_t b) { return natural_less(f.nodes[a].desc, f.nodes[b].desc); };
    std::sort(rows.begin(), rows.end(), by_name);
    std::sort(cols.begin(), cols.end(), by_name);
    const std::vector<std::string> row_label = picture_labels(descs(f, rows), 34), col_label = picture_labels(descs(f, cols), 28);
    std::map<std::pair<int32_t, int32_t>, Cell> cells;
    std::map<int, int> count_hist;
    for (int32_t r : rows) {
      const Node& n = f.nodes[r];
      for (int p = 1; p <= n.num_ports(); ++p) {
        const Port& port = n.ports[p];
        if (!port.connected() || st.level[port.peer_node] != lvl + 1) continue;
        Cell& c = cells[{r, port.peer_node}];
        ++c.links;
        c.slow += width && (port.width != width || lane_gbps(port.speed) != gbps);
        c.down += port.state != PortState::active && port.state != PortState::unknown;
        auto [lu, cu] = load_of(r, p);
        auto [ld, cd] = load_of(port.peer_node, port.peer_port);
        c.up = std::max(c.up, lu), c.cap_up = std::max(c.cap_up, cu);
        c.dn = std::max(c.dn, ld), c.cap_dn = std::max(c.cap_dn, cd);
      }
    }
    for (auto& [k, c] : cells) ++count_hist[c.links];
    int common = 0, seen = -1;
    for (auto& [k, v] : count_hist)
      if (v > seen) common = k, seen = v;
    const bool every_pair = st.two_level;  // on two levels every leaf reaches every spine

    const int x0 = kLabel;
    body << "<text x=\"10\" y=\"" << y << "\" font-size=\"13\" font-weight=\"bold\">level " << lvl << " (" << rows.size()
         << " rows) to level " << lvl + 1 << " (" << cols.size() << " columns)"
         << (with_load ? ": worst transfers at once, up (upper-left) and down (lower-right)" : ": links per switch pair")
         << "</text>\n";
    y += 10;
    // Column names, rotated.
    const int header = 120;
    for (size_t c = 0; c < cols.size(); ++c) {
      int cx = x0 + static_cast<int>(c) * kCell + kCell / 2 + 3;
      body << "<text x=\"" << cx << "\" y=\"" << y + header << "\" font-size=\"9\" transform=\"rotate(-60 " << cx << ","
           << y + header << ")\">" << esc(col_label[c]) << "</text>\n";
    }
    y += header + 6;
    body << "<rect x=\"" << x0 << "\" y=\"" << y << "\" width=\"" << static_cast<int>(cols.size()) * kCell << "\" height=\""
         << static_cast<int>(rows.size()) * kCell << "\" fill=\"#fbfbfb\" stroke=\"#e0e0e0\"/>\n";
    for (size_t r = 0; r < rows.size(); ++r) {
      int ry = y + static_cast<int>(r) * kCell;
      body << "<text x=\"" << x0 - 4 << "\" y=\"" << ry + kCell / 2 + 3 << "\" font-size=\"9\" text-anchor=\"end\">"
           << esc(row_label[r]) << "</text>\n";
      for (size_t c = 0; c < cols.size(); ++c) {
        int cx = x0 + static_cast<int>(c) * kCell;
        auto it = cells.find({rows[r], cols[c]});
        std::string tip = f.nodes[rows[r]].desc + " - " + f.nodes[cols[c]].desc;
        if (it == cells.end()) {
          // A pair no cable belongs to is left to the block's background: on three levels nearly
          // every pair (10 000 hosts: 600 000 cells, 80 MB of report), the pods' blocks on it.
          if (every_pair && common > 0) {
            ++missing_cells;
            body << "<rect x=\"" << cx << "\" y=\"" << ry << "\" width=\"" << kCell - 1 << "\" height=\"" << kCell - 1
                 << "\" fill=\"#f4a6a6\" stroke=\"#e0e0e0\"><title>" << esc(tip) << ": no link (missing)</title></rect>\n";
          }
          continue;
        }
        const Cell& cell = it->second;
        tip += ": " + std::to_string(cell.links) + " link(s)";
        if (cell.slow) tip += ", " + std::to_string(cell.slow) + " slow";
        if (cell.down) tip += ", " + std::to_string(cell.down) + " down";
        if (with_load) {
          tip += ", up " + std::to_string(cell.up) + "/" + std::to_string(cell.cap_up) + ", down " + std::to_string(cell.dn) + "/" +
                 std::to_string(cell.cap_dn);
          over_cells += (cell.cap_up && cell.up > cell.cap_up) + (cell.cap_dn && cell.dn > cell.cap_dn);
          int s = kCell - 1;
          body << "<g><title>" << esc(tip) << "</title><polygon points=\"" << cx << "," << ry << " " << cx + s << "," << ry << " " << cx
               << "," << ry + s << "\" fill=\"" << load_colour(cell.up, cell.cap_up) << "\"/><polygon points=\"" << cx + s << ","
               << ry << " " << cx + s << "," << ry + s << " " << cx << "," << ry + s << "\" fill=\""
               << load_colour(cell.dn, cell.cap_dn) << "\"/>";
          if (cell.slow || cell.down)
            body << "<rect x=\"" << cx << "\" y=\"" << ry << "\" width=\"" << s << "\" height=\"" << s
                 << "\" fill=\"none\" stroke=\"" << (cell.down ? "#d62728" : "#ff8c00") << "\" stroke-width=\"1.5\"/>";
          // The figures in the cell, where it is large enough: a printed or pasted picture has no hover.
          if (kCell >= 20)
            body << "<text x=\"" << cx + 2 << "\" y=\"" << ry + 9 << "\" font-size=\"8\">" << cell.up << "</text><text x=\"" << cx + s - 2
                 << "\" y=\"" << ry + s - 2 << "\" font-size=\"8\" text-anchor=\"end\">" << cell.dn << "</text>";
          body << "</g>\n";
        } else {
          const char* fill = cell.down ? "#d62728" : cell.links < common ? "#f5b041" : cell.links > common ? "#7fb3d5" : "#a9dfbf";
          missing_cells += cell.links < common;
          body << "<g><title>" << esc(tip) << "</title><rect x=\"" << cx << "\" y=\"" << ry << "\" width=\"" << kCell - 1
               << "\" height=\"" << kCell - 1 << "\" fill=\"" << fill << "\"" << (cell.slow ? " stroke=\"#ff8c00\" stroke-width=\"2\"" : "")
               << "/><text x=\"" << cx + kCell / 2 - 1 << "\" y=\"" << ry + kCell / 2 + 3
               << "\" font-size=\"8\" text-anchor=\"middle\">" << cell.links << "</text></g>\n";
        }
      }
    }
    y += static_cast<int>(rows.size()) * kCell + kGap;
    max_w = std::max(max_w, x0 + static_cast<int>(cols.size()) * kCell + 40);
  }
  if (st.levels < 2) body << "<text x=\"10\" y=\"" << y << "\" font-size=\"12\">one switch level: no links between levels</text>\n", y += 30;

  // Legend.
  std::ostringstream legend;
  int ly = y;
  if (with_load) {
    legend << "<text x=\"10\" y=\"" << ly << "\" font-size=\"11\">colour: transfers at once against the link's capacity</text>\n";
    int lx = 10;
    ly += 8;
    for (auto [load, cap, label] : {std::tuple{0L, 2L, "idle"}, {1L, 2L, "half"}, {2L, 2L, "at capacity"}, {3L, 2L, "over by 50 %"},
                                    {4L, 2L, "over by 100 % or more"}}) {
      legend << "<rect x=\"" << lx << "\" y=\"" << ly << "\" width=\"14\" height=\"14\" fill=\"" << load_colour(load, cap)
             << "\"/><text x=\"" << lx + 18 << "\" y=\"" << ly + 11 << "\" font-size=\"10\">" << label << "</text>\n";
      lx += 150;
    }
    ly += 30;
    legend << "<text x=\"10\" y=\"" << ly << "\" font-size=\"11\">" << over_cells
           << " link direction(s) over capacity; in each cell the worst load up (top left) and down (bottom right)"
           << (kCell >= 20 ? "" : "; hover a cell for its figures") << "</text>\n";
  } else {
    int lx = 10;
    for (auto [fill, label] : {std::pair{"#a9dfbf", "usual link count"}, {"#f5b041", "fewer links"}, {"#7fb3d5", "more links"},
                               {"#f4a6a6", "no link where one belongs"}, {"#d62728", "link down"}}) {
      legend << "<rect x=\"" << lx << "\" y=\"" << ly << "\" width=\"14\" height=\"14\" fill=\"" << fill << "\"/><text x=\""
             << lx + 18 << "\" y=\"" << ly + 11 << "\" font-size=\"10\">" << label << "</text>\n";
      lx += 150;
    }
    ly += 30;
    legend << "<text x=\"10\" y=\"" << ly << "\" font-size=\"11\">" << missing_cells
           << " switch pair(s) short of links; orange frame: a link below the common width or speed</text>\n";
  }
  ly += 20;
  std::ostringstream o;
  const std::string title = opt.title.empty() ? describe_chassis(st) : opt.title + " - " + describe_chassis(st);
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
    << std::max({max_w, 780, 20 + 8 * static_cast<int>(title.size())})
    << "\" height=\"" << ly << "\" font-family=\"Helvetica, Arial, sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">"
    << esc(title) << "</text>\n"
    << body.str() << legend.str() << "</svg>\n";
  return o.str();
}

}  // namespace ibroute::fabric
