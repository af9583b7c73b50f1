// The acceptance report as one self-contained HTML file: verdict table first, then the fabric
// coloured by link load (Graphviz SVG), the per-pair bandwidth heatmap (as mpiGraph draws it, each
// pair coloured by the share of its planned rate it reached, with a legend),
// histograms of transfers per link for round-robin against the plan, the clock table and the
// skipped and failed transfers mapped to links. No scripts, no network: inline CSS and SVG.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pair_heatmap.hpp"

namespace ibroute::cli {

// `report` is the JSON the command also prints; fabric_svg the rendered fabric picture.
std::string accept_html(const nlohmann::json& report, const std::string& fabric_svg, const workflow::Heatmap& heat);

// The terminal summary of a finished report (what --json prints whole).
std::string accept_text(const nlohmann::json& report);

}  // namespace ibroute::cli
