// Tree routing at the scale ibsim cannot hold here: the tables of a three-level fat-tree built in
// memory, their check, and the round-robin all-to-all over them in tree order and in host-name
// order (base LIDs). bench/routing calls it for 10 000 hosts. Prints one JSON object. A last
// argument `spread` builds the spread construction instead of the hubs'.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/fabric/tree_routing.hpp"
#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;

int main(int argc, char** argv) {
  if (argc != 7 && !(argc == 8 && std::string(argv[7]) == "spread")) {
    std::cerr << "usage: routing_synthetic HOSTS PODS LEAVES HOSTS_PER_LEAF AGGS CORES [spread]\n";
    return 2;
  }
  auto seconds_since = [](auto t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  FatTreeSpec t;
  t.levels = 3, t.hosts = std::atoi(argv[1]), t.pods = std::atoi(argv[2]), t.leaves = std::atoi(argv[3]);
  t.hosts_per_leaf = std::atoi(argv[4]), t.aggs = std::atoi(argv[5]), t.cores = std::atoi(argv[6]);
  t.shuffle_names = true;
  Fabric f = build_fat_tree(t);
  const FabricStructure s = analyze_structure(f);
  const std::vector<Host> by_name = all_hosts(f);
  std::vector<CaPort> refs;
  for (const Host& h : by_name) refs.push_back({h.node, h.port});
  const std::vector<CaPort> order = tree_order(f, s, refs);
  auto t0 = std::chrono::steady_clock::now();
  const TreeStyle style = argc == 8 ? TreeStyle::spread : TreeStyle::hubs;
  TreeRouting r = route_tree(f, s, order, style);
  const double route_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const RefineStats refined = refine_for_shift(f, s, order, r);
  const double refine_s = seconds_since(t0);
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!r.lft[i].empty()) f.nodes[i].lft = r.lft[i];
  t0 = std::chrono::steady_clock::now();
  const RoutingCheck check = check_tree_routing(f, s);
  const double check_s = seconds_since(t0);
  LinkIndex links(f);
  EvalContext ctx(f, links, s);
  auto worst = [&](const std::vector<Host>& hosts) {
    std::vector<Phase> rr = shift_phases(hosts.size());
    apply_lid_policy(f, hosts, rr, LidPolicy::base);
    return evaluate(ctx, hosts, rr, false).max_load;
  };
  std::vector<Host> tree;
  for (CaPort p : order)
    for (const Host& h : by_name)
      if (h.node == p.node && h.port == p.port) tree.push_back(h);
  nlohmann::json j{
      {"hosts", by_name.size()},    {"bound", s.transfer_bound},         {"route_seconds", route_s},
      {"refine_seconds", refine_s}, {"refine_skipped", refined.skipped}, {"check_seconds", check_s},
      {"check_ok", check.ok()},     {"tree_order_max", worst(tree)},     {"name_order_max", worst(by_name)}};
  std::cout << j.dump() << "\n";
  return check.ok() ? 0 : 1;
}
