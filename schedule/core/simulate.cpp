#include "ibroute/schedule/simulate.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "ibroute/fabric/parallel.hpp"
#include "ibroute/fabric/prefetch.hpp"
#include "ibroute/schedule/admission.hpp"
#include "path_of.hpp"

namespace ibroute::schedule {

namespace {

// A pair's figure where the schedule sends it in more than one phase: its slowest (the order in
// which the threads finish phases must not decide it). 0 stands for "not sent".
void keep_slowest(float& cell, float r) {
  std::atomic_ref<float> a(cell);
  float cur = a.load(std::memory_order_relaxed);
  while ((cur == 0.f || r < cur) && !a.compare_exchange_weak(cur, r, std::memory_order_relaxed)) {
  }
}

// Per rank: its own link at the host rate both ways. Empty where `known` cannot be used.
std::vector<char> hosts_at_host_rate(const EvalContext& ctx, const Schedule& s, const LoadReport* known) {
  if (!known || known->broken != 0 || known->phase_time.size() != s.phases.size()) return {};
  std::vector<char> plain(s.hosts.size(), 0);
  for (size_t r = 0; r < s.hosts.size(); ++r) {
    const Host& h = s.hosts[r];
    if (h.node < 0) continue;
    const fabric::Port& p = ctx.fabric.nodes[h.node].ports[h.port];
    plain[r] = p.connected() && ctx.at_host_rate[ctx.links.id(h.node, h.port)] &&
               ctx.at_host_rate[ctx.links.id(p.peer_node, p.peer_port)];
  }
  return plain;
}

// Whether phase k is played from `known` alone. Within every link's rate (phase_time 1: each link
// shares out at least the host rate per transfer, so a host link slower than that is not in it,
// and no host link at that rate carries two), the fill reaches the host rate before any link is
// full, and there freezes every transfer with an end at the host rate (alone on that end's link):
// exactly the host rate. Only a transfer between two hosts on faster links may run faster: such a
// phase is walked.
bool within_rates(const Phase& ph, size_t k, const LoadReport* known, const std::vector<char>& plain) {
  if (plain.empty() || !(known->phase_time[k] <= 1.0)) return false;
  for (size_t i = 0; i < ph.dst.size(); ++i)
    if (ph.dst[i] >= 0 && !plain[i] && !plain[static_cast<size_t>(ph.dst[i])]) return false;
  return true;
}

}  // namespace

Simulation simulate(const EvalContext& ctx, const Schedule& s, uint64_t message_size, const LoadReport* known) {
  Simulation sim;
  sim.n = s.hosts.size();
  sim.pair_gbps.assign(sim.n * sim.n, 0.f);
  sim.phase_seconds.assign(s.phases.size(), 0);
  const double cap_gbps = s.timing.rate > 0 ? s.timing.rate * 8 / 1e9 : 0;  // a pair shown at most at the node's rate
  // Phases start at their planned times (as the runner posts them): a phase lasts its planned
  // length, or longer where its slowest transfer takes longer.
  const bool timed = s.timing.slot_s > 0 && s.timing.message_size == message_size;
  const std::vector<uint64_t> start = slot_starts(s);
  // Paths from the table of (ingress switch, DLID) paths where the exchange is most of the
  // fabric's hosts (one memory access each; 10^8 transfers at 10 000 hosts), else walked. The
  // phases on every core: each is played on its own.
  const fabric::SwitchPaths* table = ctx.switch_paths_for(sim.n);
  const std::vector<char> plain = hosts_at_host_rate(ctx, s, known);
  const double host_gbps =
      ctx.structure.host_gbps > 0 ? ctx.structure.host_gbps : 1;  // the rate EvalContext::at_host_rate marks
  std::atomic<size_t> next{0}, broken{0};
  const unsigned threads = static_cast<unsigned>(
      std::clamp<size_t>(s.phases.size() / 16, 1, std::max(1u, std::thread::hardware_concurrency())));
  fabric::run_parallel(threads, [&](unsigned) {
    PathOf path_of(ctx, s.hosts, table);
    fabric::MaxMinFill fill(ctx.gbps);
    std::vector<std::vector<int32_t>> flows;  // kept from phase to phase: no allocation per transfer
    std::vector<size_t> src_of;
    size_t lost = 0;
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < s.phases.size();) {
      const Phase& ph = s.phases[k];
      if (within_rates(ph, k, known, plain)) {
        const float r = static_cast<float>(cap_gbps > 0 ? std::min(host_gbps, cap_gbps) : host_gbps);
        double slowest = 0;
        for (size_t i = 0; i < ph.dst.size(); ++i) {
          if (const size_t j = i + kPathsAhead; j < ph.dst.size() && ph.dst[j] >= 0)
            fabric::prefetch_read(&sim.pair_gbps[j * sim.n + static_cast<size_t>(ph.dst[j])]);
          if (ph.dst[i] < 0) continue;
          keep_slowest(sim.pair_gbps[i * sim.n + static_cast<size_t>(ph.dst[i])], r);
          slowest = static_cast<double>(message_size) * 8 / (host_gbps * 1e9);
        }
        if (timed) slowest = std::max(slowest, static_cast<double>(start[k + 1] - start[k]) * s.timing.slot_s);
        sim.phase_seconds[k] = slowest;
        continue;
      }
      src_of.clear();
      for (size_t i = 0; i < ph.dst.size(); ++i) {
        if (const size_t j = i + kPathsAhead; j < ph.dst.size() && ph.dst[j] >= 0) path_of.prefetch(j, ph.dlid[j]);
        if (ph.dst[i] < 0) continue;
        if (flows.size() <= src_of.size()) flows.emplace_back();
        std::vector<int32_t>& path = flows[src_of.size()];
        if (!path_of(i, ph.dlid[i], path) || path.empty()) {
          ++lost;
          continue;
        }
        src_of.push_back(i);
      }
      const std::vector<double>& rate = fill.rates(flows, src_of.size());
      double slowest = 0;
      for (size_t f = 0; f < src_of.size(); ++f) {
        if (const size_t g = f + kPathsAhead; g < src_of.size())  // one row apart: a miss each unless asked for ahead
          fabric::prefetch_read(&sim.pair_gbps[src_of[g] * sim.n + static_cast<size_t>(ph.dst[src_of[g]])]);
        const double r = cap_gbps > 0 ? std::min(rate[f], cap_gbps) : rate[f];
        const size_t i = src_of[f];
        keep_slowest(sim.pair_gbps[i * sim.n + static_cast<size_t>(ph.dst[i])], static_cast<float>(r));
        if (rate[f] > 0) slowest = std::max(slowest, static_cast<double>(message_size) * 8 / (rate[f] * 1e9));
      }
      if (timed) slowest = std::max(slowest, static_cast<double>(start[k + 1] - start[k]) * s.timing.slot_s);
      sim.phase_seconds[k] = slowest;
    }
    broken += lost;
  });
  sim.broken = broken;
  for (double x : sim.phase_seconds) sim.seconds += x;  // in phase order: the same sum on any number of threads
  // What the busiest sender moves over the exchange's time (planned_rate's definition).
  if (sim.seconds > 0)
    sim.node_bytes_per_s = static_cast<double>(message_size) * static_cast<double>(messages_per_node(s)) / sim.seconds;
  return sim;
}

}  // namespace ibroute::schedule
