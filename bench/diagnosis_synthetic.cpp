// bench/diagnosis_synthetic: what the run's diagnosis costs — planned pair rates and the greedy
// peeling over every pair's path — on half fat-trees built in memory, an emulated run of the
// round-robin all-to-all with one cable at 40 % and noise. Prints one JSON line per size: ranks,
// pairs, seconds (median of RUNS), peak resident memory, and where the faulty cable was ranked.
//
//   diagnosis_synthetic [RUNS]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/diagnosis.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 3;
  struct Size { int leaves, hosts, up; };
  for (const Size z : {Size{36, 24, 12}, Size{64, 32, 16}}) {
    FatTreeSpec t;
    t.leaves = z.leaves, t.hosts_per_leaf = z.hosts, t.uplinks = z.up, t.spines = z.up, t.lmc = 2, t.shuffle_names = true;
    const Fabric f = build_fat_tree(t);
    const LinkIndex links(f);
    const FabricStructure st = analyze_structure(f);
    const EvalContext ctx(f, links, st);
    Schedule s;
    s.hosts = all_hosts(f);
    s.phases = shift_phases(s.hosts.size());
    apply_lid_policy(f, s.hosts, s.phases, LidPolicy::spread);
    // The emulated run: a leaf's up-link at 40 %, every pair within 5 % of plan otherwise.
    int32_t bad = -1;
    for (int p = 1; p <= f.nodes[st.leaves[5]].num_ports() && bad < 0; ++p) {
      const Port& port = f.nodes[st.leaves[5]].ports[p];
      if (port.connected() && f.nodes[port.peer_node].is_switch()) bad = links.id(st.leaves[5], p);
    }
    std::vector<float> observed = planned_pair_gbps(ctx, s);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> jitter(0.95f, 1.05f);
    PathFinder finder(f, links);
    std::vector<int32_t> path;
    const size_t n = s.hosts.size();
    for (const Phase& ph : s.phases)
      for (size_t i = 0; i < n; ++i)
        if (ph.dst[i] >= 0) {
          float& g = observed[i * n + static_cast<size_t>(ph.dst[i])];
          finder.path(s.hosts[i].node, s.hosts[i].port, ph.dlid[i], path);
          g *= jitter(rng) * (std::find(path.begin(), path.end(), bad) != path.end() ? 0.4f : 1.f);
        }
    std::vector<double> secs;
    RunDiagnosis d;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      d = diagnose_run(ctx, s, observed);
      secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(secs.begin(), secs.end());
    size_t place = d.suspects.size();
    for (size_t i = 0; i < d.suspects.size(); ++i)
      if (d.suspects[i].link == bad) place = i;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("{\"ranks\": %zu, \"pairs\": %zu, \"seconds_median\": %.3f, \"peak_mib\": %.0f, \"fault_ranked\": %zu, \"suspects\": %zu}\n", n,
                d.pairs, secs[secs.size() / 2], ru.ru_maxrss / 1024.0, place + 1, d.suspects.size());
  }
}
