// `ibroute plan`'s whole pipeline (plan_exchange: the planner, its load, the least possible
// times, round-robin in the given and the topology order, the best returned) on a three-level
// fat-tree built in memory, under the routing a user's subnet manager gives it: d-mod-k (what
// OpenSM's ftree computes on a regular tree), minhop (OpenSM's minhop and updn on a tree: each
// switch gives each LID in LID order its least-used shortest port) or tree (`ibroute routing`).
// bench/plan_times calls it for 10 000 hosts (issue 37: ≤ 30 s on any routing). One JSON object.
// With a ninth argument, a database path: the fabric and its tables are stored there as a scan
// instead (no plan), for the real `ibroute plan` and `ibroute accept` to run on.
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "fabric_store.hpp"
#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/fabric/tree_routing.hpp"
#include "plan_pipeline.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

void route(Fabric& f, const std::string& routing) {
  if (routing == "minhop") return route_minhop(f);
  if (routing == "dmodk") return;  // build_fat_tree's own tables
  const FabricStructure s = analyze_structure(f);
  std::vector<CaPort> refs;
  for (const Host& h : all_hosts(f)) refs.push_back({h.node, h.port});
  const std::vector<CaPort> order = tree_order(f, s, refs);
  TreeRouting r = route_tree(f, s, order, TreeStyle::hubs);
  refine_for_shift(f, s, order, r);
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!r.lft[i].empty()) f.nodes[i].lft = r.lft[i];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string routing = argc >= 9 ? argv[8] : "";
  if (argc < 9 || argc > 10 || (routing != "dmodk" && routing != "minhop" && routing != "tree")) {
    std::cerr
        << "usage: plan_routing_synthetic HOSTS PODS LEAVES HOSTS_PER_LEAF AGGS CORES LMC dmodk|minhop|tree [DB]\n";
    return 2;
  }
  FatTreeSpec t;
  t.levels = 3, t.hosts = std::atoi(argv[1]), t.pods = std::atoi(argv[2]), t.leaves = std::atoi(argv[3]);
  t.hosts_per_leaf = std::atoi(argv[4]), t.aggs = std::atoi(argv[5]), t.cores = std::atoi(argv[6]);
  t.lmc = static_cast<uint8_t>(std::atoi(argv[7]));
  t.shuffle_names = true;
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  auto t0 = now();
  Fabric f = build_fat_tree(t);
  route(f, routing);
  if (argc == 10) {  // the scan as `ibroute scan` would store it, its routes answered from the tables
    ibroute::store::FabricStore store(argv[9], ibroute::store::Access::create);
    const int64_t scan =
        store.save_scan_tables({.source = "offline", .origin = "plan_routing_synthetic " + routing, .lmc = t.lmc}, f);
    std::cout
        << nlohmann::json{{"db", argv[9]}, {"scan", scan}, {"hosts", all_hosts(f).size()}, {"routing", routing}}.dump()
        << "\n";
    return 0;
  }
  LinkIndex links(f);
  FabricStructure s = analyze_structure(f);
  EvalContext ctx(f, links, s);
  ibroute::workflow::Exchange x;
  x.hosts = all_hosts(f);  // name order, as `ibroute plan` without --hosts
  auto t1 = now();
  const ibroute::workflow::PlanOutcome o = ibroute::workflow::plan_exchange(ctx, x, {});
  auto t2 = now();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::cout << nlohmann::json{{"hosts", x.hosts.size()},
                              {"routing", routing},
                              {"lmc", t.lmc},
                              {"build_route_s", secs(t0, t1)},
                              {"plan_s", secs(t1, t2)},
                              {"planner_s", o.plan_seconds},
                              {"lower_bound_s", o.bound_seconds},
                              {"load_s", o.load_seconds},
                              {"least_s", o.least_seconds},
                              {"baseline_s", o.baseline_seconds},
                              {"method", o.schedule.method},
                              {"composition", o.stats.composition},
                              {"greedy_start", o.stats.greedy_start},
                              {"repair_skipped", o.stats.repair_skipped},
                              {"efficiency", o.figures.efficiency.value},
                              {"efficiency_tables", o.figures.efficiency.value_tables},
                              {"planner_efficiency", o.planner_efficiency},
                              {"round_robin_efficiency", o.round_robin_efficiency.value},
                              {"max_load", o.load.max_load},
                              {"round_robin_max_load", o.round_robin.max_load},
                              {"topology_round_robin_max_load", o.topology_round_robin_max_load},
                              {"packings", o.stats.packings},
                              {"packings_over_budget", o.stats.packings_over_budget},
                              {"packing_work", o.stats.packing_work},
                              {"packing_budget", o.stats.packing_budget},
                              {"peak_rss_mib", ru.ru_maxrss / 1024}}
                   .dump()
            << "\n";
}
