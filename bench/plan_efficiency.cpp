// Efficiency (least possible time of the exchange / planned time) of host subsets and two groups on
// a two- or three-level fat-tree built in memory, for the planner and the baselines a user would
// pick: round-robin in name and in topology order with base LIDs, and the planner without packing.
// Every T is recomputed here from the evaluation of the phases (evaluate(), the LFT walk), not
// taken from the planner. bench/plan calls it; prints one JSON object (with the packings tried, their
// work and budget).
//
//   plan_efficiency LEVELS LEAVES HOSTS_PER_LEAF UPLINKS SPINES_OR_AGGS [PODS CORES] LMC
//                   all|SUBSET|S:R SEED [order name|topology]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

struct Args {
  FatTreeSpec t;
  std::string set, order;
  uint32_t seed = 0;
};

Args parse_args(const std::vector<std::string>& a) {
  Args r;
  FatTreeSpec& t = r.t;
  size_t x = 0;
  t.levels = std::stoi(a[x++]);
  t.leaves = std::stoi(a[x++]), t.hosts_per_leaf = std::stoi(a[x++]);
  if (t.levels == 2) {
    t.uplinks = std::stoi(a[x++]), t.spines = std::stoi(a[x++]);
  } else {
    t.aggs = t.uplinks = std::stoi(a[x++]), t.pods = std::stoi(a[x++]), t.cores = std::stoi(a[x++]);
  }
  t.lmc = static_cast<uint8_t>(std::stoi(a[x++]));
  r.set = a.at(x++);
  r.seed = static_cast<uint32_t>(std::stoul(a.at(x++)));
  r.order = x < a.size() ? a[x] : "name";
  t.shuffle_names = true;
  t.seed = r.seed;
  if (r.set.rfind("fabric", 0) == 0)
    t.hosts = std::stoi(r.set.substr(6));  // "fabric10000": a fabric of that many hosts, all in the set
  return r;
}

struct HostSet {
  std::vector<Host> hosts;
  std::vector<int32_t> senders, receivers;
};

// all | N (a random N, name order) | S:R (disjoint groups: the first S of a random draw send, the rest receive).
HostSet draw_set(const std::vector<Host>& all, const std::string& set, uint32_t seed) {
  std::mt19937 rng(seed * 7919u +
                   17u);  // not the generator's own name shuffle (same seed, same size: it would undo it)
  HostSet r;
  auto draw = [&](size_t k) {
    std::vector<Host> pool = all;
    std::shuffle(pool.begin(), pool.end(), rng);
    pool.resize(std::min(k, pool.size()));
    std::sort(pool.begin(), pool.end(), [](const Host& p, const Host& q) { return natural_less(p.name, q.name); });
    return pool;
  };
  const auto colon = set.find(':');
  if (set == "all" || set.rfind("fabric", 0) == 0)
    r.hosts = all;
  else if (colon == std::string::npos)
    r.hosts = draw(std::stoul(set));
  else {
    const size_t ns = std::stoul(set.substr(0, colon)), nr = std::stoul(set.substr(colon + 1));
    r.hosts = draw(ns + nr);
    std::vector<size_t> idx(r.hosts.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::shuffle(idx.begin(), idx.end(), rng);
    for (size_t i = 0; i < idx.size(); ++i) (i < ns ? r.senders : r.receivers).push_back(static_cast<int32_t>(idx[i]));
    std::sort(r.senders.begin(), r.senders.end());
    std::sort(r.receivers.begin(), r.receivers.end());
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() < 8) {
    std::cerr << "usage: plan_efficiency 2 LEAVES HOSTS_PER_LEAF UPLINKS SPINES LMC all|N|S:R SEED [name|topology]\n"
                 "       plan_efficiency 3 LEAVES HOSTS_PER_LEAF AGGS PODS CORES LMC all|N|S:R SEED [name|topology]\n";
    return 2;
  }
  const Args args = parse_args(a);
  const std::string& order = args.order;
  Fabric f = build_fat_tree(args.t);
  LinkIndex links(f);
  FabricStructure st = analyze_structure(f);
  EvalContext ctx(f, links, st);
  HostSet drawn = draw_set(all_hosts(f), args.set, args.seed);  // from the hosts in name order
  std::vector<Host>& hosts = drawn.hosts;
  const std::vector<int32_t>&senders = drawn.senders, &receivers = drawn.receivers;
  if (order == "topology" && senders.empty()) hosts = topology_order(f, hosts);
  const LeastTimes least = least_times(ctx, hosts, senders, receivers);
  const size_t sends = senders.empty() ? hosts.size() - 1 : receivers.size();
  nlohmann::json out{{"hosts", hosts.size()},
                     {"senders", senders.empty() ? hosts.size() : senders.size()},
                     {"receivers", receivers.empty() ? hosts.size() : receivers.size()},
                     {"least_time", least.fabric.time},
                     {"limited_by", least.fabric.limited_by},
                     {"least_time_tables", least.tables.time},
                     {"rows", nlohmann::json::array()}};
  auto row = [&](const std::string& what, const std::vector<Host>& hs, const std::vector<Phase>& phases,
                 double seconds) {
    LoadReport load = evaluate(ctx, hs, phases, false);
    Efficiency e = efficiency_of(ctx, least, load, sends);
    out["rows"].push_back({{"what", what},
                           {"phases", phases.size()},
                           {"max_load", load.max_load},
                           {"planned_time", e.planned},
                           {"efficiency", e.value},
                           {"efficiency_tables", e.value_tables},
                           {"rate_gbps", e.rate_gbps},
                           {"seconds", seconds},
                           {"broken", load.broken}});
  };
  for (const std::string& o : {std::string("name"), std::string("topology")}) {
    if (!senders.empty() && o == "topology") continue;
    std::vector<Host> hs = o == "topology" ? topology_order(f, hosts) : hosts;
    std::vector<Phase> rr = senders.empty() ? shift_phases(hs.size()) : group_phases(hs.size(), senders, receivers);
    apply_lid_policy(f, hs, rr, LidPolicy::base);
    row("round-robin " + o + " order, base LIDs", hs, rr, 0);
  }
  for (bool pack : {false, true}) {
    PlanOptions po;
    po.packing = pack;
    auto t0 = std::chrono::steady_clock::now();
    PlanStats st;
    Schedule s = plan_groups(ctx, hosts, senders, receivers, po, &st);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row(pack ? "ibroute plan (" + s.method + ")" : "ibroute plan, shifts only (" + s.method + ")", hosts, s.phases,
        secs);
    if (pack)
      out["packing"] = {{"tried", st.packings},
                        {"over_budget", st.packings_over_budget},
                        {"work", st.packing_work},
                        {"budget", st.packing_budget},
                        {"phases_compacted", st.phases_compacted},
                        {"compaction_work", st.compaction_work}};
  }
  std::cout << out.dump(1) << "\n";
  return 0;
}
