// The acceptance report as one self-contained HTML file: verdict table first, then the fabric
// coloured by link load (Graphviz SVG), the per-pair bandwidth heatmap (as mpiGraph draws it),
// histograms of transfers per link for round-robin against the plan, the clock table and the
// skipped and failed transfers mapped to links. No scripts, no network: inline CSS and SVG.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ibroute::cli {

struct Heatmap {
  size_t cells = 0;          // cells per side (ranks binned when there are many)
  size_t ranks = 0;
  std::vector<float> gbps;   // cells x cells, mean of the pairs in each cell; < 0: no transfer
  double max_gbps = 0;
};

// `report` is the JSON the command also prints; fabric_svg the rendered fabric picture.
std::string accept_html(const nlohmann::json& report, const std::string& fabric_svg, const Heatmap& heat);

// Bins an n x n per-pair matrix (row = source) into at most `max_cells` per side.
Heatmap bin_heatmap(const std::vector<float>& pair_gbps, size_t n, size_t max_cells = 128);

}  // namespace ibroute::cli
