// The per-pair heat map of an acceptance report: the run's (or simulation's) pair matrix against
// each pair's planned rate, binned for the page, with the pairs furthest below their plan.
#pragma once

#include <string>
#include <vector>

#include "fabric_context.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::workflow {

struct Heatmap {
  size_t cells = 0;  // cells per side (ranks binned when there are many)
  size_t ranks = 0;
  // cells x cells: the mean share of their planned rate the cell's pairs reached; < 0: no transfer.
  // Each pair against its own plan (its phase's share of its path's links), not one rate for all:
  // against a node's expected rate a pair at 59 % of its plan can look green.
  std::vector<float> share;
  std::string measured_by;  // "the run" or "the simulation", for the caption
  // The pairs furthest below their plan, by rank: their figures in print, where a map of many
  // ranks has no room for numbers.
  struct Pair {
    size_t src, dst;
    float gbps, planned_gbps;
  };
  std::vector<Pair> slowest;
  std::vector<std::string> names;  // per rank, to name the slowest pairs' hosts (empty: ranks only)
};

// Bins an n x n per-pair matrix (row = source) against the planned one into at most `max_cells`
// per side; pairs the plan does not have (planned <= 0, measured < 0, i == j) count for nothing.
Heatmap bin_heatmap(const std::vector<float>& pair_gbps, const std::vector<float>& planned_gbps, size_t n,
                    size_t max_cells = 128);

// The pairs of `plan` from a run's (or simulation's) n x n matrix, pairs the plan does not have
// set to -1 in `pair` (it is not copied: 16 MB at 2048 ranks).
Heatmap heat_of(const FabricContext& c, const schedule::Schedule& plan, std::vector<float>& pair, bool simulated);

}  // namespace ibroute::workflow
