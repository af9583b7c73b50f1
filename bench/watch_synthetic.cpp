// bench/watch_synthetic: what `ibroute watch` does after a fabric change, at sizes ibsim cannot
// hold — up to the epoch on disk (total_s): the last scan loaded and compared with the read by its
// tables, the scan stored without its routes, loaded for the plan, the host set planned again, its
// schedule stored and the epoch written (schedule, host table, every slice); after it
// (after_epoch_s): the routes resolved and stored, and those changed counted (diff). Also what an
// interval costs where nothing changed (the last scan loaded and compared, no routes).
// The change: a leaf's up-link cable removed and the tables computed again (route_tree, as a
// subnet manager's sweep would; not timed). Prints one JSON line per change: the seconds of each
// step and the epoch's figures; the last line has the medians.
//
//   watch_synthetic HOSTS PODS LEAVES HOSTS_PER_LEAF AGGS CORES LMC CHANGES   (three levels)
//   watch_synthetic 864 0 36 24 12 12 2 3                                      (PODS 0: two levels)
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "epoch_plan.hpp"
#include "export_files.hpp"
#include "fabric_context.hpp"
#include "fabric_store.hpp"
#include "ibroute/fabric/diff.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/fabric/tree_routing.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/planner.hpp"
#include "ibroute/schedule/validate.hpp"

#include <unistd.h>

using namespace ibroute;
using namespace ibroute::fabric;

namespace {

double since(std::chrono::steady_clock::time_point& t) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

// Tables as a subnet manager would compute them for the fabric as it is (missing links routed around).
void route(Fabric& f) {
  const FabricStructure s = analyze_structure(f);
  std::vector<CaPort> refs;
  for (const schedule::Host& h : schedule::all_hosts(f)) refs.push_back({h.node, h.port});
  const TreeRouting r = route_tree(f, s, tree_order(f, s, refs), TreeStyle::hubs);
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!r.lft[i].empty()) f.nodes[i].lft = r.lft[i];
}

// The k-th leaf's first up-link, unplugged at both ends.
void unplug(Fabric& f, size_t k) {
  const FabricStructure s = analyze_structure(f);
  const int32_t leaf = s.leaves[(k * 7) % s.leaves.size()];
  for (int p = 1; p <= f.nodes[leaf].num_ports(); ++p) {
    Port& a = f.nodes[leaf].ports[p];
    if (!a.connected() || !f.nodes[a.peer_node].is_switch()) continue;
    Port& b = f.nodes[a.peer_node].ports[a.peer_port];
    b.peer_node = -1, b.peer_port = 0, b.state = PortState::down;
    a.peer_node = -1, a.peer_port = 0, a.state = PortState::down;
    return;
  }
}

}  // namespace

namespace {

// HOSTS PODS LEAVES HOSTS_PER_LEAF AGGS CORES LMC: three levels where PODS > 0, else two
// (AGGS up-links per leaf to CORES spines).
FatTreeSpec spec_of(char** argv) {
  FatTreeSpec t;
  t.hosts = std::atoi(argv[1]), t.pods = std::atoi(argv[2]), t.leaves = std::atoi(argv[3]), t.hosts_per_leaf = std::atoi(argv[4]);
  t.levels = t.pods > 0 ? 3 : 2;
  if (t.levels == 3) t.aggs = t.uplinks = std::atoi(argv[5]), t.cores = std::atoi(argv[6]);
  else t.uplinks = std::atoi(argv[5]), t.spines = std::atoi(argv[6]), t.pods = 1, t.hosts = 0;
  t.lmc = static_cast<uint8_t>(std::atoi(argv[7]));
  t.shuffle_names = true;
  return t;
}

// The followed set: every host, all-to-all, as fast as the links allow.
workflow::FollowedSet followed_set(const Fabric& f) {
  workflow::FollowedSet set;
  set.name = "daq";
  set.hosts = schedule::identify_hosts(f, schedule::all_hosts(f));
  set.request.message_size = 1 << 20;
  if (const char* v = std::getenv("WATCH_BENCH_NO_PACKING")) set.request.packing = std::string(v) != "1";
  if (const char* v = std::getenv("WATCH_BENCH_METHOD")) schedule::method_from(v, set.request.method);
  return set;
}

// The epoch watch starts from: the set planned on the first scan.
void publish_first(store::FabricStore& store, int64_t scan, const workflow::FollowedSet& set,
                   const std::filesystem::path& dir, uint64_t epoch) {
  const workflow::FabricContext c(store, scan);
  const workflow::EpochPlan e = workflow::plan_epoch(c.eval, set);
  workflow::publish_epoch(dir / "epochs", workflow::epoch_doc(c.fabric, c.info, e.outcome.schedule, epoch, 0, store::now_iso()), 3);
}

void print_medians(size_t hosts, std::vector<double> totals, std::vector<double> sames) {
  std::sort(totals.begin(), totals.end());
  std::sort(sames.begin(), sames.end());
  std::cout << nlohmann::json{{"hosts", hosts}, {"changes", totals.size()}, {"median_total_s", totals[totals.size() / 2]},
                              {"median_same_read_s", sames[sames.size() / 2]}}.dump()
            << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 9) {
    std::cerr << "usage: watch_synthetic HOSTS PODS LEAVES HOSTS_PER_LEAF AGGS CORES LMC CHANGES\n";
    return 2;
  }
  const FatTreeSpec t = spec_of(argv);
  const int changes = std::atoi(argv[8]);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("watch-bench-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "w.db").string();

  Fabric before = build_fat_tree(t);
  route(before);
  store::FabricStore store(db, store::Access::create);
  store::ScanInfo info{.source = "offline", .origin = "watch_synthetic"};
  int64_t scan = store.save_scan(info, before, resolve_routes(before));
  const workflow::FollowedSet set = followed_set(before);
  uint64_t epoch = 0;
  publish_first(store, scan, set, dir, ++epoch);
  std::vector<double> totals, sames;
  for (int k = 0; k < changes; ++k) {
    Fabric after = before;
    unplug(after, static_cast<size_t>(k));
    route(after);  // the subnet manager's sweep: not timed
    // An interval where nothing changed (the watch's every few seconds): the last scan's fabric
    // loaded and compared with the read by its tables, no route resolved or loaded.
    auto t1 = std::chrono::steady_clock::now();
    if (!same_tables(store.load_fabric(scan, true), before)) throw std::logic_error("an unchanged read compared as changed");
    sames.push_back(since(t1));
    // The change: as watch's read (a process of its own) and then watch itself do it, up to the
    // epoch on disk; the read stores the scan's routes after it (off the budget's path).
    const auto t0 = std::chrono::steady_clock::now();
    t1 = t0;
    const Fabric last = store.load_fabric(scan, true);
    const bool same = same_tables(last, after);
    const double compare_s = since(t1);
    const FabricDiff quick = diff_fabrics(last, RouteSet{}, after, RouteSet{}, 1);
    const double quick_diff_s = since(t1);
    scan = store.save_scan_tables(info, after);
    const double store_s = since(t1);
    const workflow::FabricContext c(store, scan);  // watch itself, from here on
    const double load_s = since(t1);
    const workflow::EpochPlan e = workflow::plan_epoch(c.eval, set);
    const double plan_s = since(t1);
    schedule::Schedule named = e.outcome.schedule;
    named.name = set.name + ".e" + std::to_string(epoch + 1);
    store.save_schedule(scan, named, e.outcome.load.max_load, static_cast<int64_t>(e.outcome.load.congested), e.outcome.plan_seconds, true);
    const double save_schedule_s = since(t1);
    workflow::publish_epoch(dir / "epochs", workflow::epoch_doc(c.fabric, c.info, named, ++epoch, 0, store::now_iso()), 3);
    const double write_s = since(t1);
    totals.push_back(std::chrono::duration<double>(t1 - t0).count());
    // After the epoch: the paused read resolves the routes, stores them and counts those changed.
    const auto t2 = std::chrono::steady_clock::now();
    const RouteSet after_routes = resolve_routes(after);
    const double routes_s = since(t1);
    store.save_routes(scan, after_routes, {});
    const double store_routes_s = since(t1);
    const FabricDiff d = diff_fabrics(last, resolve_routes(last), after, after_routes, 1);
    const double diff_s = since(t1);
    const double after_epoch_s = std::chrono::duration<double>(t1 - t2).count();
    const nlohmann::json j{{"hosts", set.hosts.size()}, {"change", k + 1}, {"seen_as_change", !same && !quick.empty()}, {"links_gone", d.links_removed.size()},
                           {"routes_changed", d.routes_changed}, {"same_read_s", sames.back()}, {"compare_s", compare_s},
                           {"quick_diff_s", quick_diff_s}, {"store_tables_s", store_s}, {"load_s", load_s}, {"plan_s", plan_s},
                           {"routes_s", routes_s}, {"store_routes_s", store_routes_s}, {"diff_s", diff_s}, {"after_epoch_s", after_epoch_s},
                           {"planner_s", e.outcome.plan_seconds}, {"bound_s", e.outcome.bound_seconds}, {"save_schedule_s", save_schedule_s},
                           {"write_s", write_s}, {"total_s", totals.back()}, {"efficiency", e.outcome.figures.efficiency.value}, {"efficiency_tables", e.outcome.figures.efficiency.value_tables},
                           {"broken", e.broken}, {"max_load", e.outcome.load.max_load}, {"bound", e.outcome.schedule.bound},
                           {"method", e.outcome.schedule.method}, {"packings", e.outcome.stats.packings},
                           {"packings_over_budget", e.outcome.stats.packings_over_budget}, {"packing_work", e.outcome.stats.packing_work},
                           {"packing_budget", e.outcome.stats.packing_budget}};
    std::cout << j.dump() << std::endl;
    before = std::move(after);
  }
  print_medians(set.hosts.size(), totals, sames);
  std::filesystem::remove_all(dir);
}
