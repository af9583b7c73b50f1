#include "pair_heatmap.hpp"

#include <algorithm>

#include "ibroute/schedule/diagnosis.hpp"

namespace ibroute::workflow {

using namespace ibroute::schedule;

Heatmap bin_heatmap(const std::vector<float>& pair_gbps, const std::vector<float>& planned_gbps, size_t n,
                    size_t max_cells) {
  Heatmap h;
  h.ranks = n;
  h.cells = pair_gbps.size() == n * n && planned_gbps.size() == n * n ? std::min(n, max_cells)
                                                                      : 0;  // no matrix: not measured
  if (h.cells == 0) return h;
  auto planned = [&](size_t i, size_t j) { return i == j || pair_gbps[i * n + j] < 0 ? 0.f : planned_gbps[i * n + j]; };
  // The ten furthest below their plan, kept in a sorted list of ten while the matrix is walked (not
  // a copy of its n^2 pairs: 4 million at 2048 ranks).
  constexpr size_t kSlowest = 10;
  auto share_of = [](const Heatmap::Pair& p) { return p.gbps / p.planned_gbps; };
  auto lower = [&](const Heatmap::Pair& a, const Heatmap::Pair& b) { return share_of(a) < share_of(b); };
  std::vector<double> sum(h.cells * h.cells, 0);
  std::vector<int> count(h.cells * h.cells, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      const float plan = planned(i, j);
      if (!(plan > 0)) continue;
      const Heatmap::Pair p{i, j, pair_gbps[i * n + j], plan};
      const size_t c = (i * h.cells / n) * h.cells + j * h.cells / n;
      sum[c] += std::min(1.f, share_of(p));
      ++count[c];
      if (h.slowest.size() == kSlowest && !lower(p, h.slowest.back())) continue;
      h.slowest.insert(std::upper_bound(h.slowest.begin(), h.slowest.end(), p, lower), p);
      if (h.slowest.size() > kSlowest) h.slowest.pop_back();
    }
  h.share.resize(h.cells * h.cells);
  for (size_t c = 0; c < sum.size(); ++c) h.share[c] = count[c] ? static_cast<float>(sum[c] / count[c]) : -1.f;
  return h;
}

// The pairs' heat map: each pair against its own planned rate (its phase's share of its path's
// links), so that a pair at 59 % of its plan is not green because it still beats the rate the
// expectation asks of a node (that is the verdict's rate_per_node). Binned before the diagnosis
// turns the pair matrix into its own figures (400 MB at 10 000 hosts: not copied).
Heatmap heat_of(const FabricContext& c, const Schedule& plan, std::vector<float>& pair, bool simulated) {
  const size_t n = plan.hosts.size();
  if (pair.size() != n * n) return bin_heatmap({}, {}, n);  // no matrix: not measured
  // Pairs the plan does not have are no transfer, not one that moved nothing (the diagnosis reads
  // none of them either).
  if (!plan.all_to_all()) {
    std::vector<char> sends(n, 0), receives(n, 0);
    for (int32_t r : plan.senders) sends[static_cast<size_t>(r)] = 1;
    for (int32_t r : plan.receivers) receives[static_cast<size_t>(r)] = 1;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (!sends[i] || !receives[j]) pair[i * n + j] = -1.f;
  }
  // A simulation shows a pair at most the rate the plan times a node's sending for; a run's transfer
  // goes at what its links give it (as the diagnosis reads it).
  const double cap_gbps = simulated ? plan.timing.rate * 8 / 1e9 : 0;
  Heatmap heat = bin_heatmap(pair, schedule::planned_pair_gbps(c.eval, plan, cap_gbps), n);
  for (const Host& h : plan.hosts) heat.names.push_back(h.name);
  heat.measured_by = simulated ? "the simulation (max-min fair sharing on the scanned routes; no hardware)" : "the run";
  return heat;
}

}  // namespace ibroute::workflow
