#include "ibroute/schedule/simulate.hpp"

#include <algorithm>

#include "ibroute/schedule/admission.hpp"

namespace ibroute::schedule {

Simulation simulate(const EvalContext& ctx, const Schedule& s, uint64_t message_size) {
  Simulation sim;
  sim.n = s.hosts.size();
  sim.pair_gbps.assign(sim.n * sim.n, 0.f);
  fabric::PathFinder finder(ctx.fabric, ctx.links);
  const double cap_gbps = s.timing.rate > 0 ? s.timing.rate * 8 / 1e9 : 0;  // a pair shown at most at the node's rate
  // Phases start at their planned times (as the runner posts them): a phase lasts its planned
  // length, or longer where its slowest transfer takes longer.
  const bool timed = s.timing.slot_s > 0 && s.timing.message_size == message_size;
  const std::vector<uint64_t> start = slot_starts(s);
  size_t k = 0;
  std::vector<std::vector<int32_t>> flows;
  std::vector<size_t> src_of;
  for (const Phase& ph : s.phases) {
    flows.clear(), src_of.clear();
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      std::vector<int32_t> path;
      const Host& h = s.hosts[i];
      if (h.node < 0 || finder.path(h.node, h.port, ph.dlid[i], path) != fabric::RouteStatus::ok || path.empty()) {
        ++sim.broken;
        continue;
      }
      flows.push_back(std::move(path));
      src_of.push_back(i);
    }
    std::vector<double> rate = fabric::max_min_rates(flows, ctx.gbps);
    double slowest = 0;
    for (size_t f = 0; f < flows.size(); ++f) {
      double r = cap_gbps > 0 ? std::min(rate[f], cap_gbps) : rate[f];
      size_t i = src_of[f];
      sim.pair_gbps[i * sim.n + static_cast<size_t>(ph.dst[i])] = static_cast<float>(r);
      if (rate[f] > 0) slowest = std::max(slowest, static_cast<double>(message_size) * 8 / (rate[f] * 1e9));
    }
    if (timed) slowest = std::max(slowest, static_cast<double>(start[k + 1] - start[k]) * s.timing.slot_s);
    ++k;
    sim.phase_seconds.push_back(slowest);
    sim.seconds += slowest;
  }
  // What the busiest sender moves over the exchange's time (planned_rate's definition).
  if (sim.seconds > 0)
    sim.node_bytes_per_s = static_cast<double>(message_size) * static_cast<double>(messages_per_node(s)) / sim.seconds;
  return sim;
}

}  // namespace ibroute::schedule
