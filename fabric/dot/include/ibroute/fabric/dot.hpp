// The fabric as a Graphviz graph: DOT text here (pure), SVG through libgvc (render_svg).
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

struct DotOptions {
  // Hosts drawn one by one, or folded into one box per switch ("24 hosts"): 864 host nodes make
  // a picture nobody can read.
  bool fold_hosts = true;
  // Link load to colour by: (node, out port) -> (load, capacity). With capacities, edges at or
  // under capacity are green (darker when full) and above it red; with capacity 0 (totals) the
  // colour follows the share of the largest load. Labels give both directions' loads.
  std::map<std::pair<int, int>, std::pair<long, long>> load;
  // Switch pairs short of a cable (the structure's missing links): drawn dashed red, "missing".
  std::vector<std::pair<int, int>> missing;
  // Link directions the diagnosis suspects, (node, out port): drawn thick purple, over any colour.
  std::set<std::pair<int, int>> suspects;
  std::string title;
  // Parallel links as one edge per switch pair ("x3"): always, never, or beyond kLargeFabric switches.
  enum class Aggregate { never, large, always } aggregate = Aggregate::large;
  static constexpr size_t kLargeFabric = 40;
};

std::string to_dot(const Fabric& f, const DotOptions& opt = {});

// What fabric engineers read on a large fabric: per pair of adjacent levels, a matrix of lower x
// upper switches. Each cell is one switch pair: with a load, its worst load up (upper-left
// triangle) and down (lower-right) against the capacity; without, its link count against the
// usual count (missing, extra and slow links stand out). Self-contained SVG, no Graphviz.
std::string matrix_svg(const Fabric& f, const DotOptions& opt = {});

// Labels for names drawn side by side, each at most `max_chars` characters and all distinct: a
// long name keeps what sets it apart from the others ("…/L05/U1", "…0x…0123)") and loses part of
// the head it shares with them; names still alike are numbered ("#2").
std::vector<std::string> picture_labels(const std::vector<std::string>& names, size_t max_chars);

// Lay out and render DOT text as SVG with Graphviz's libgvc. Throws std::runtime_error.
std::string render_svg(const std::string& dot);

}  // namespace ibroute::fabric
