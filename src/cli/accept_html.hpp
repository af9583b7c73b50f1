// The acceptance report as one self-contained HTML file: verdict table first, then the fabric
// coloured by link load (Graphviz SVG), the per-pair bandwidth heatmap (as mpiGraph draws it, its
// colours scaled to the rate the plan expects, with a legend),
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
  // The colour scale's full mark: what each pair should reach (the plan's rate per node, as each
  // node sends to one peer at a time). 0: unknown, the highest measured is taken instead.
  double expected_gbps = 0;
  std::string full_mark_source;  // where expected_gbps comes from, for the caption
  // The slowest pairs by rank (source, destination, Gb/s), slowest first: their figures in print,
  // where a map of many ranks has no room for numbers.
  struct Pair {
    size_t src, dst;
    float gbps;
  };
  std::vector<Pair> slowest;
  std::vector<std::string> names;  // per rank, to name the slowest pairs' hosts (empty: ranks only)
};

// `report` is the JSON the command also prints; fabric_svg the rendered fabric picture.
std::string accept_html(const nlohmann::json& report, const std::string& fabric_svg, const Heatmap& heat);

// Bins an n x n per-pair matrix (row = source) into at most `max_cells` per side; pairs below 0
// (and i == j) are not in the schedule and count for nothing.
Heatmap bin_heatmap(const std::vector<float>& pair_gbps, size_t n, double expected_gbps, size_t max_cells = 128);

}  // namespace ibroute::cli
