// Planner time and peak memory on a fat-tree built in memory, beyond what ibsim runs here:
// bench/plan calls it for the 10 000-host three-level tree. After planning it does what
// `ibroute plan` does next, each step timed: the plan's load with max-min fair rates, the lower
// bound over all phases, round-robin with base LIDs. Prints one JSON object.
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/lower_bound.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;

int main(int argc, char** argv) {
  // plan_synthetic HOSTS PODS LEAVES HOSTS_PER_LEAF AGGS CORES LMC ORDER(name|topology) [REPAIR_ROUNDS]
  if (argc != 9 && argc != 10) {
    std::cerr
        << "usage: plan_synthetic HOSTS PODS LEAVES HOSTS_PER_LEAF AGGS CORES LMC name|topology [REPAIR_ROUNDS]\n";
    return 2;
  }
  auto now = [] { return std::chrono::steady_clock::now(); };
  FatTreeSpec t;
  t.levels = 3, t.hosts = std::atoi(argv[1]), t.pods = std::atoi(argv[2]), t.leaves = std::atoi(argv[3]);
  t.hosts_per_leaf = std::atoi(argv[4]), t.aggs = std::atoi(argv[5]), t.cores = std::atoi(argv[6]);
  t.lmc = static_cast<uint8_t>(std::atoi(argv[7]));
  t.shuffle_names = true;
  const std::string order = argv[8];
  auto t0 = now();
  Fabric f = build_fat_tree(t);
  LinkIndex links(f);
  FabricStructure s = analyze_structure(f);
  EvalContext ctx(f, links, s);
  std::vector<Host> hosts = all_hosts(f);
  if (order == "topology") hosts = topology_order(f, hosts);
  auto cpu = [] {  // user + system seconds of this process: comparable on a busy machine
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
  };
  const double c1 = cpu();
  auto t1 = now();
  PlanStats st;
  PlanOptions po;
  if (argc == 10) po.repair_rounds = std::atoi(argv[9]);  // 0: the greedy start alone
  Schedule plan = plan_all_to_all(ctx, hosts, po, &st);
  auto t2 = now();
  const double c2 = cpu();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const long plan_rss = ru.ru_maxrss;
  // The rest of `ibroute plan`, after the planner's peak-memory reading.
  LoadReport load = evaluate(ctx, plan.hosts, plan.phases, true);
  auto t3 = now();
  LowerBound least = worst_load_lower_bound(ctx, plan.hosts, plan.phases, 0, load.broken ? nullptr : &load.phase_max);
  auto t4 = now();
  std::vector<Phase> rr = shift_phases(hosts.size());
  apply_lid_policy(f, hosts, rr, LidPolicy::base);
  LoadReport naive = evaluate(ctx, hosts, rr, false);
  auto t5 = now();
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  size_t switches = 0;
  for (const Node& n : f.nodes) switches += n.is_switch();
  std::cout << nlohmann::json{{"hosts", hosts.size()},
                              {"switches", switches},
                              {"levels", s.levels},
                              {"lmc", t.lmc},
                              {"order", order},
                              {"bound", s.transfer_bound},
                              {"phases", plan.phases.size()},
                              {"method", st.method},
                              {"build_s", secs(t0, t1)},
                              {"plan_s", secs(t1, t2)},
                              {"plan_cpu_s", c2 - c1},
                              {"evaluate_s", secs(t2, t3)},
                              {"lower_bound_s", secs(t3, t4)},
                              {"round_robin_s", secs(t4, t5)},
                              {"after_plan_cpu_s", cpu() - c2},
                              {"round_robin_max_load", naive.max_load},
                              {"phases_over", st.phases_over},
                              {"worst_overflow", st.worst_overflow},
                              {"max_load", load.max_load},
                              {"least", least.worst},
                              {"congested_share", load.congested_share()},
                              {"peak_rss_mib", plan_rss / 1024},
                              {"peak_rss_all_mib", ru.ru_maxrss / 1024}}
                   .dump()
            << "\n";
}
