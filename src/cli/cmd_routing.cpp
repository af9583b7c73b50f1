// ibroute routing: forwarding tables for OpenSM's file engine that make the all-to-all in a rank
// order congestion-free without LMC, checked before they are written, with the rank order.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "commands.hpp"
#include "common.hpp"
#include "fabric_context.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/text_export.hpp"
#include "ibroute/fabric/tree_routing.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"

namespace ibroute::cli {

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

struct RoutingCliOptions {
  std::string db = kDefaultDb;
  std::optional<int64_t> scan;
  std::string hosts;
  std::string order = "auto";
  std::string style = "auto";
  std::string output, ranks;
  bool plan = false;
  bool no_refine = false;
  double refine_work = 8192;  // millions of units (RefineLimits::work)
  bool json = false;
};

// Written next to the target and renamed over it: OpenSM never reads half a table.
void write_whole(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!(out << text) || !out.flush()) throw InputError("cannot write " + path);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw InputError("cannot write " + path + ": " + ec.message());
}

std::vector<CaPort> port_refs(const std::vector<Host>& hosts) {
  std::vector<CaPort> out;
  out.reserve(hosts.size());
  for (const Host& h : hosts) out.push_back({h.node, h.port});
  return out;
}

std::vector<Host> reorder(const std::vector<Host>& hosts, const std::vector<CaPort>& order) {
  std::map<std::pair<int32_t, uint8_t>, const Host*> by_port;
  for (const Host& h : hosts) by_port[{h.node, h.port}] = &h;
  std::vector<Host> out;
  for (CaPort p : order) out.push_back(*by_port.at({p.node, p.port}));
  return out;
}

// Round-robin all-to-all with base LIDs over a fabric's tables: what LMC 0 gives.
struct Outcome {
  LoadReport load;
  std::vector<Host> hosts;
  TreeRouting routing;
  RefineStats refine;
  TreeStyle style = TreeStyle::hubs;
  LeastTime least;  // over these tables: what any plan of the all-to-all needs at least
  // Better: a least time lower by more than 2 % (what every plan inherits), else a lower worst link.
  bool better_than(const Outcome& o) const {
    if (least.time < 0.98 * o.least.time || o.least.time < 0.98 * least.time) return least.time < o.least.time;
    return std::pair(load.max_load, load.congested_share()) < std::pair(o.load.max_load, o.load.congested_share());
  }
};

Outcome route_one(const FabricContext& c, Fabric& routed, const std::vector<Host>& hosts, const RoutingCliOptions& o, TreeStyle style) {
  Outcome out;
  out.hosts = hosts;
  out.style = style;
  out.routing = route_tree(c.fabric, c.structure, port_refs(hosts), style);
  if (!o.no_refine) out.refine = refine_for_shift(c.fabric, c.structure, port_refs(hosts), out.routing, {.work = static_cast<uint64_t>(o.refine_work * 1e6)});
  for (size_t i = 0; i < routed.nodes.size(); ++i)
    if (routed.nodes[i].is_switch() && !out.routing.lft[i].empty()) routed.nodes[i].lft = out.routing.lft[i], routed.nodes[i].lft_read = true;
  routed.has_lfts = true;
  const LinkIndex links(routed);
  const EvalContext eval(routed, links, c.structure);
  std::vector<Phase> rr = shift_phases(hosts.size());
  apply_lid_policy(routed, hosts, rr, LidPolicy::base);
  out.load = evaluate(eval, hosts, rr, false);
  out.least = least_time(eval, hosts, {}, {});
  return out;
}

// Both constructions where the style is auto: the hubs' (congestion-free shifts on k-ary trees)
// and the spread one (even link totals where edges are cabled to several directors).
Outcome route_in_order(const FabricContext& c, Fabric& routed, const std::vector<Host>& hosts, const RoutingCliOptions& o) {
  if (o.style != "auto") return route_one(c, routed, hosts, o, o.style == "spread" ? TreeStyle::spread : TreeStyle::hubs);
  Outcome best = route_one(c, routed, hosts, o, TreeStyle::hubs);
  Fabric again = c.fabric;
  Outcome other = route_one(c, again, hosts, o, TreeStyle::spread);
  if (other.better_than(best)) best = std::move(other), routed = std::move(again);
  return best;
}

nlohmann::json over_links(const Fabric& f, const LoadReport& load, size_t most) {
  const LinkIndex links(f);
  nlohmann::json a = nlohmann::json::array();
  for (size_t i = 0; i < load.over.size() && i < most; ++i)
    a.push_back({{"phase", load.over[i].phase}, {"link", describe_link(f, links, load.over[i].link)}, {"load", load.over[i].load},
                 {"capacity", load.over[i].capacity}});
  return a;
}

int run_routing(const RoutingCliOptions& o) {
  store::FabricStore store(o.db, store::Access::read_only);
  FabricContext c(store, o.scan);
  const std::vector<Host> given = select_hosts(c.fabric, o.hosts);
  const int bound = c.structure.transfer_bound;
  Stopwatch clock;

  // The order: as given, the tree's, or (auto) the given one where it reaches the bound, else the tree's.
  const std::vector<Host> tree = reorder(given, tree_order(c.fabric, c.structure, port_refs(given)));
  Fabric routed = c.fabric;
  std::string used = o.order;
  Outcome best;
  if (o.order == "given" || (o.order == "auto" && !o.hosts.empty())) {
    best = route_in_order(c, routed, given, o);
    used = "given";
    if (o.order == "auto" && best.load.max_load > bound) {
      Fabric again = c.fabric;
      Outcome t = route_in_order(c, again, tree, o);
      if (t.load.max_load < best.load.max_load) best = std::move(t), routed = std::move(again), used = "tree";
    }
  } else {
    best = route_in_order(c, routed, tree, o);
    used = "tree";
  }
  const double seconds = clock.seconds();

  const RoutingCheck check = check_tree_routing(routed, c.structure);
  // What the scanned tables give the same order, for comparison.
  std::optional<LoadReport> before;
  if (c.fabric.has_lfts) {
    std::vector<Phase> rr = shift_phases(best.hosts.size());
    apply_lid_policy(c.fabric, best.hosts, rr, LidPolicy::base);
    before = evaluate(c.eval, best.hosts, rr, false);
  }
  std::optional<LoadReport> planned;
  if (o.plan) {
    const LinkIndex links(routed);
    const EvalContext eval(routed, links, c.structure);
    Schedule s = plan_groups(eval, best.hosts, {}, {}, {});
    planned = evaluate(eval, s.hosts, s.phases, false);
  }

  bool wrote = false;
  if (check.ok() && !o.output.empty()) {
    const std::string info = "ibroute routing: scan " + std::to_string(c.scan_id) + ", " + std::to_string(best.hosts.size()) +
                             " hosts in " + used + " order, round-robin worst link " + std::to_string(best.load.max_load) +
                             " (bound " + std::to_string(bound) + ")";
    write_whole(o.output, write_lft_dump(routed, best.routing.lft, {info, "load with: opensm -R file -U " + o.output}));
    wrote = true;
  }
  if (check.ok() && !o.ranks.empty()) {
    std::string text;
    for (const Host& h : best.hosts) text += h.name + "\n";
    write_whole(o.ranks, text);
  }

  // What the tables leave to any plan: the least time over them against the fabric's own.
  const LeastTime fabric_least = [&] {
    const LinkIndex links(routed);
    const EvalContext eval(routed, links, c.structure);
    return least_time(eval, best.hosts, {}, {}, false);
  }();
  const double ceiling = best.least.time > 0 ? fabric_least.time / best.least.time : 0.0;
  const char* style = best.style == TreeStyle::spread ? "spread" : "hubs";
  nlohmann::json j{{"scan_id", c.scan_id},
                   {"hosts", best.hosts.size()},
                   {"order", used},
                   {"levels", c.structure.levels},
                   {"style", style},
                   {"hubs", best.routing.hubs.size()},
                   {"least_time", {{"tables", best.least.time}, {"fabric", fabric_least.time}, {"efficiency_ceiling", ceiling},
                                   {"limited_by", best.least.limited_by}}},
                   {"lmc", c.fabric.max_lmc()},
                   {"bound", bound},
                   {"seconds", seconds},
                   {"routed_lids", best.routing.routed_lids},
                   {"moved_roots", best.routing.moved_roots},
                   {"detours", best.routing.detours},
                   {"refine", {{"excess_before", best.refine.excess_before}, {"excess_after", best.refine.excess_after},
                               {"moves", best.refine.moves}, {"passes", best.refine.passes}, {"skipped", best.refine.skipped},
                               {"work", best.refine.work}, {"out_of_budget", best.refine.out_of_budget}}},
                   {"check", {{"ok", check.ok()}, {"walked", check.walked}, {"failures", check.failures}, {"first", check.first}}},
                   {"round_robin", {{"max_load", best.load.max_load},
                                    {"congested_share", best.load.congested_share()},
                                    {"phases_over_bound", std::count_if(best.load.phase_max.begin(), best.load.phase_max.end(),
                                                                        [&](int m) { return m > bound; })},
                                    {"broken", best.load.broken},
                                    {"over", over_links(routed, best.load, 20)}}},
                   {"congestion_free", best.load.max_load <= bound && best.load.broken == 0},
                   {"tables", wrote ? nlohmann::json(o.output) : nlohmann::json(nullptr)},
                   {"ranks", check.ok() && !o.ranks.empty() ? nlohmann::json(o.ranks) : nlohmann::json(nullptr)}};
  if (before) j["scanned_tables"] = {{"max_load", before->max_load}, {"congested_share", before->congested_share()}};
  if (planned) j["plan"] = {{"max_load", planned->max_load}, {"congested_share", planned->congested_share()}};
  if (o.json) {
    print_json(j);
  } else {
    const std::string how = best.style == TreeStyle::spread ? std::string("spread (every switch balances its own choices)")
                                                             : std::to_string(best.routing.hubs.size()) + " hubs";
    std::printf("routing for scan %lld: %zu hosts in %s order, %d switch levels, %s, LMC %d, computed in %.2f s\n",
                static_cast<long long>(c.scan_id), best.hosts.size(), used.c_str(), c.structure.levels, how.c_str(),
                int{c.fabric.max_lmc()}, seconds);
    std::printf("  least possible all-to-all time over these tables %.0f message-times, the fabric's %.0f: at most %.2f efficiency for any plan\n",
                best.least.time, fabric_least.time, ceiling);
    std::printf("  round-robin, base LIDs: worst link %d (bound %d), %.1f %% congested%s\n", best.load.max_load, bound,
                100 * best.load.congested_share(), best.load.max_load <= bound ? ": congestion-free" : "");
    const auto over = over_links(routed, best.load, 5);
    for (const auto& x : over)
      std::printf("    phase %d: %s carries %d (capacity %d)\n", x["phase"].get<int>(), x["link"].get<std::string>().c_str(),
                  x["load"].get<int>(), x["capacity"].get<int>());
    if (before) std::printf("  the scanned tables, same order: worst link %d, %.1f %% congested\n", before->max_load, 100 * before->congested_share());
    if (planned) std::printf("  planned over these tables (LMC %d): worst link %d\n", int{c.fabric.max_lmc()}, planned->max_load);
    if (best.refine.moves || best.refine.skipped)
      std::printf("  refined: %s\n", best.refine.skipped ? "skipped (too many links x ranks for the load table)"
                                                         : (std::to_string(best.refine.excess_before) + " transfers above capacity -> " +
                                                            std::to_string(best.refine.excess_after) + " in " + std::to_string(best.refine.moves) +
                                                            " moves" + (best.refine.out_of_budget ? " (work budget spent)" : "")).c_str());
    if (best.routing.moved_roots || best.routing.detours)
      std::printf("  missing links: %zu LIDs turn at another hub than their rank picks, %zu entries of host switches climb another way\n",
                  best.routing.moved_roots, best.routing.detours);
    std::printf("  check: %zu (switch, LID) routes walked, %s\n", check.walked,
                check.ok() ? "every LID arrives, up*/down*, ports in range" : (std::to_string(check.failures) + " failed").c_str());
    for (const std::string& line : check.first) std::printf("    %s\n", line.c_str());
    if (wrote) std::printf("tables: %s (opensm -R file -U %s)\n", o.output.c_str(), o.output.c_str());
    if (check.ok() && !o.ranks.empty()) std::printf("ranks: %s (one host per line, rank order)\n", o.ranks.c_str());
  }
  if (!check.ok()) {
    std::cerr << "ibroute: the computed tables fail the check (" << check.first.front() << "); nothing written\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

Runner setup_routing(CLI::App& app) {
  auto o = std::make_shared<RoutingCliOptions>();
  auto* c = app.add_subcommand("routing", "Compute forwarding tables for OpenSM's file engine: the all-to-all congestion-free at LMC 0.");
  c->footer(
      "Every destination LID turns at a hub (the lowest switches that reach most leaves: the spines of\n"
      "a two-level tree, the cores of a pod tree, the line ASICs of a director) picked by its host's\n"
      "rank, the hubs taken in turn so that consecutive ranks climb by different up-links at every\n"
      "level; a route climbs towards its hub until it meets the hub's way down. On a regular tree the\n"
      "round-robin all-to-all in that rank order is then congestion-free with base LIDs (LMC 0).\n"
      "Missing links are routed around; then a local search moves the first hop of (leaf, destination)\n"
      "pairs where that lowers the transfers above capacity in some phase, and the worst link left is\n"
      "reported. With LMC > 0 a port's LIDs start at hubs that differ at every level, so that\n"
      "'ibroute plan' has real choices.\n"
      "Where edge switches are cabled to several directors (no pods: the hubs would pin each\n"
      "destination to one link into its leaf), the spread construction lays each destination's\n"
      "traffic over the links' loads: sources climb towards the directors with the most spare capacity\n"
      "into the target's leaf, every switch above it descends by its lightest way. --style auto builds\n"
      "both and keeps the one whose least possible all-to-all time is lower (by more than 2 %), else\n"
      "the one with the lower worst link. The least possible time over the tables against the\n"
      "fabric's own is printed: the most efficiency any plan over them can reach.\n"
      "Orders: given (--hosts as listed), tree (by the switches above each leaf, then leaf and port:\n"
      "proposed), auto (given where it reaches the bound, else tree; tree without --hosts).\n"
      "Checked before anything is written: every LID arrives from every switch that a CA hangs off (a\n"
      "switch's LID from every switch with an up*/down* way to it), every route climbs and then only\n"
      "descends (up*/down*: no credit loops), no port beyond its switch's count. -o writes the tables in\n"
      "the dump_lfts.sh format with port GUIDs ('opensm -R file -U FILE'; OpenSM re-maps changed\n"
      "LIDs by GUID); --ranks the rank order, one host per line (for --hosts @FILE).\n"
      "Exit: 0 tables computed (and written), 1 they fail the check (nothing written), 2 bad input.");
  c->add_option("--db", o->db, "fabric database")->capture_default_str();
  c->add_option("--scan", o->scan, "scan id (default: the newest)");
  c->add_option("--hosts", o->hosts, "hosts of the all-to-all in rank order: a,b,c, node[001-100] (Slurm) or @FILE, each a node description, hostname, node-name-map name, GUID or LID (default: every host)");
  c->add_option("--order", o->order, "rank order: auto, given or tree")->check(CLI::IsMember({"auto", "given", "tree"}))->capture_default_str();
  c->add_option("--style", o->style, "construction: auto (both, the better kept), hubs or spread")
      ->check(CLI::IsMember({"auto", "hubs", "spread"}))
      ->capture_default_str();
  c->add_option("-o,--output", o->output, "write the tables here (dump_lfts.sh format, for opensm -R file -U)");
  c->add_option("--ranks", o->ranks, "write the rank order here, one host per line (for --hosts @FILE)");
  c->add_flag("--plan", o->plan, "also plan the all-to-all over the new tables (uses LMC > 0)");
  c->add_flag("--no-refine", o->no_refine, "skip the local search on the first hops (construction only)");
  c->add_option("--refine-work", o->refine_work,
                "work budget of the local search, in millions of transfer-hops weighed (not a time: the same tables on any machine)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  c->add_flag("--json", o->json, "print JSON");
  return [o] { return run_routing(*o); };
}

}  // namespace ibroute::cli
