#include "ibroute/schedule/simulate.hpp"

#include <algorithm>

namespace ibroute::schedule {

Simulation simulate(const EvalContext& ctx, const Schedule& s, uint64_t message_size) {
  Simulation sim;
  sim.n = s.hosts.size();
  sim.pair_gbps.assign(sim.n * sim.n, 0.f);
  fabric::PathFinder finder(ctx.fabric, ctx.links);
  const double cap_gbps = s.timing.rate > 0 ? s.timing.rate * 8 / 1e9 : 0;
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
      if (r > 0) slowest = std::max(slowest, static_cast<double>(message_size) * 8 / (r * 1e9));
    }
    sim.phase_seconds.push_back(slowest);
    sim.seconds += slowest;
  }
  // What a sender moves over the exchange's time (phases of waiting transfers packed apart: fewer
  // than one message per phase).
  size_t transfers = 0;
  std::vector<char> sends(sim.n, 0);
  for (const Phase& ph : s.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] >= 0) ++transfers, sends[i] = 1;
  const auto senders = static_cast<size_t>(std::count(sends.begin(), sends.end(), 1));
  if (sim.seconds > 0 && senders > 0)
    sim.node_bytes_per_s = static_cast<double>(message_size) * static_cast<double>(transfers) / static_cast<double>(senders) / sim.seconds;
  return sim;
}

}  // namespace ibroute::schedule
