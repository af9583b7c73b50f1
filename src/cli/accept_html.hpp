// The acceptance report as one self-contained HTML file: verdict table first, then the fabric
// coloured by link load (Graphviz SVG), the per-pair bandwidth heatmap (as mpiGraph draws it, each
// pair coloured by the share of its planned rate it reached, with a legend),
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
  // cells x cells: the mean share of their planned rate the cell's pairs reached; < 0: no transfer.
  // Each pair against its own plan (its phase's share of its path's links), not one rate for all:
  // against a node's expected rate a pair at 59 % of its plan can look green.
  std::vector<float> share;
  std::string measured_by;   // "the run" or "the simulation", for the caption
  // The pairs furthest below their plan, by rank: their figures in print, where a map of many
  // ranks has no room for numbers.
  struct Pair {
    size_t src, dst;
    float gbps, planned_gbps;
  };
  std::vector<Pair> slowest;
  std::vector<std::string> names;  // per rank, to name the slowest pairs' hosts (empty: ranks only)
};

// `report` is the JSON the command also prints; fabric_svg the rendered fabric picture.
std::string accept_html(const nlohmann::json& report, const std::string& fabric_svg, const Heatmap& heat);

// Bins an n x n per-pair matrix (row = source) against the planned one into at most `max_cells`
// per side; pairs the plan does not have (planned <= 0, measured < 0, i == j) count for nothing.
Heatmap bin_heatmap(const std::vector<float>& pair_gbps, const std::vector<float>& planned_gbps, size_t n, size_t max_cells = 128);

}  // namespace ibroute::cli
