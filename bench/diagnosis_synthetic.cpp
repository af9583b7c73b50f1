// bench/diagnosis_synthetic: what the run's diagnosis costs — planned pair rates and the greedy
// peeling over every pair's path — on fat-trees built in memory (two levels at 864 and 2 048
// ranks, three levels at 10 000), an emulated round-robin all-to-all run with one leaf up-link at
// 40 % and every other pair within ±5 % of plan. Prints one JSON line per size: ranks, pairs,
// seconds (median of RUNS), the process's resident memory before the diagnosis (fabric, schedule,
// the pair matrix, the tables) and the most the diagnosis added to it (the peak reset through
// /proc/self/clear_refs), and where the faulty cable was ranked.
//
//   diagnosis_synthetic [RUNS] [MAX_RANKS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/diagnosis.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

// The process's resident memory now, or its peak since reset_peak() (Linux: /proc/self).
double status_mib(const char* field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0) return std::strtod(line.c_str() + std::strlen(field), nullptr) / 1024.0;
  return 0;
}
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

// The emulated run, by this bench's own reckoning (not the diagnosis's code): per phase each
// pair's path walked through the tables, its planned rate the least share of a link's rate among
// the phase's transfers over it, times the fault on its path and a ±5 % jitter.
std::vector<float> emulate(const EvalContext& ctx, const Schedule& s, int32_t bad, double slowed) {
  const size_t n = s.hosts.size();
  std::vector<float> observed(n * n, -1.f);
  PathFinder finder(ctx.fabric, ctx.links);
  std::vector<std::vector<int32_t>> paths(n);
  std::vector<int> load(ctx.links.size(), 0);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> jitter(0.95f, 1.05f);
  for (const Phase& ph : s.phases) {
    for (size_t i = 0; i < n; ++i) {
      paths[i].clear();
      if (ph.dst[i] >= 0 && finder.path(s.hosts[i].node, s.hosts[i].port, ph.dlid[i], paths[i]) == RouteStatus::ok)
        for (int32_t l : paths[i]) ++load[static_cast<size_t>(l)];
    }
    for (size_t i = 0; i < n; ++i) {
      if (paths[i].empty()) continue;
      double g = 1e30;
      bool over = false;
      for (int32_t l : paths[i])
        g = std::min(g, ctx.gbps[static_cast<size_t>(l)] / load[static_cast<size_t>(l)]), over |= l == bad;
      observed[i * n + static_cast<size_t>(ph.dst[i])] = static_cast<float>(g * jitter(rng) * (over ? slowed : 1.0));
    }
    for (size_t i = 0; i < n; ++i)
      for (int32_t l : paths[i]) load[static_cast<size_t>(l)] = 0;
  }
  return observed;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const size_t max_ranks = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 10000;
  std::vector<FatTreeSpec> sizes(3);
  sizes[0].leaves = 36, sizes[0].hosts_per_leaf = 24, sizes[0].uplinks = sizes[0].spines = 12;
  sizes[1].leaves = 64, sizes[1].hosts_per_leaf = 32, sizes[1].uplinks = sizes[1].spines = 16;
  // bench/plan's 10 000-host three-level tree: 36 pods of 18 leaves of 18 hosts, 18 aggregation
  // switches per pod, 324 cores.
  sizes[2].levels = 3, sizes[2].hosts = 10000, sizes[2].pods = 36, sizes[2].leaves = 18, sizes[2].hosts_per_leaf = 18;
  sizes[2].aggs = sizes[2].uplinks = 18, sizes[2].cores = 324;
  for (FatTreeSpec t : sizes) {
    t.lmc = 2, t.shuffle_names = true;
    const Fabric f = build_fat_tree(t);
    if (all_hosts(f).size() > max_ranks) continue;
    const LinkIndex links(f);
    const FabricStructure st = analyze_structure(f);
    const EvalContext ctx(f, links, st);
    Schedule s;
    s.hosts = all_hosts(f);
    s.phases = shift_phases(s.hosts.size());
    apply_lid_policy(f, s.hosts, s.phases, LidPolicy::spread);
    // The fault: an up-link of the sixth leaf at 40 %.
    int32_t bad = -1;
    for (int p = 1; p <= f.nodes[st.leaves[5]].num_ports() && bad < 0; ++p) {
      const Port& port = f.nodes[st.leaves[5]].ports[p];
      if (port.connected() && f.nodes[port.peer_node].is_switch()) bad = links.id(st.leaves[5], p);
    }
    const std::vector<float> observed = emulate(ctx, s, bad, 0.4);
    ctx.switch_paths();  // built once, as a run's diagnosis finds it: not timed
    std::vector<double> secs;
    RunDiagnosis d;
    double before = 0, added = 0;
    for (int r = 0; r < runs; ++r) {
      std::vector<float> matrix = observed;  // what the run hands over (moved in)
      reset_peak();
      before = status_mib("VmRSS:");
      const auto t0 = std::chrono::steady_clock::now();
      d = diagnose_run(ctx, s, std::move(matrix));
      secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      added = std::max(added, status_mib("VmHWM:") - before);
    }
    std::sort(secs.begin(), secs.end());
    size_t place = d.suspects.size();
    for (size_t i = 0; i < d.suspects.size(); ++i)
      if (d.suspects[i].link == bad) place = i;
    std::printf(
        "{\"ranks\": %zu, \"pairs\": %zu, \"seconds_median\": %.3f, \"resident_mib_before\": %.0f, \"added_mib\": "
        "%.0f, "
        "\"pair_matrix_mib\": %.0f, \"fault_ranked\": %zu, \"confidence\": %.2f, \"suspects\": %zu}\n",
        s.hosts.size(), d.pairs, secs[secs.size() / 2], before, added,
        static_cast<double>(observed.size() * sizeof(float)) / (1 << 20), place + 1,
        place < d.suspects.size() ? d.suspects[place].confidence : 0.0, d.suspects.size());
    std::fflush(stdout);
  }
}
