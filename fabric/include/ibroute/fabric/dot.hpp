// The fabric as a Graphviz graph: DOT text here (pure), SVG through libgvc (render_svg).
#pragma once

#include <map>
#include <string>
#include <utility>

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
  std::string title;
};

std::string to_dot(const Fabric& f, const DotOptions& opt = {});

// Lay out and render DOT text as SVG with Graphviz's libgvc. Throws std::runtime_error.
std::string render_svg(const std::string& dot);

}  // namespace ibroute::fabric
