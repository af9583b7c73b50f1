// ibroute routing: forwarding tables for OpenSM's file engine that make the all-to-all in a rank
// order congestion-free without LMC, checked before they are written, with the rank order.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/text_export.hpp"
#include "ibroute/fabric/tree_routing.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "options.hpp"
#include "tree_tables.hpp"
#include "whole_file.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

// The computation's request (hosts, order, style, refinement, --plan) with what the command adds.
struct RoutingCliOptions : TreeTablesRequest, StoreOptions {
  std::string output, ranks;
  bool no_refine = false;
};

nlohmann::json over_links(const Fabric& f, const LoadReport& load, size_t most) {
  const LinkIndex links(f);
  nlohmann::json a = nlohmann::json::array();
  for (size_t i = 0; i < load.over.size() && i < most; ++i)
    a.push_back({{"phase", load.over[i].phase},
                 {"link", describe_link(f, links, load.over[i].link)},
                 {"load", load.over[i].load},
                 {"capacity", load.over[i].capacity}});
  return a;
}

// Why tables can fail their check on a fabric that is not a tree: up*/down* tables use no link
// within a level or across levels, and hosts reached only that way get no route. Empty on a tree.
std::string not_a_tree(const Fabric& f, const FabricStructure& s) {
  if (s.tree || s.lateral.empty()) return "";
  const LinkRef& l = s.lateral.front();
  return "the fabric is not a tree: " + std::to_string(s.lateral.size()) +
         " switch links within a level or across levels (first: " + f.nodes[l.a_node].desc + "[" +
         std::to_string(l.a_port) + "] -- " + f.nodes[l.b_node].desc + "[" + std::to_string(l.b_port) +
         "]), which up*/down* tables do not use; route it with OpenSM (updn, dfsssp)";
}

// Written only where the tables pass their check.
void write_outputs(const ScanContext& c, const RoutingCliOptions& o, const TreeTablesOutcome& r) {
  if (!r.check.ok()) return;
  if (!o.output.empty()) {
    const std::string info = "ibroute routing: scan " + std::to_string(c.scan_id) + ", " +
                             std::to_string(r.best.hosts.size()) + " hosts in " + r.order +
                             " order, round-robin worst link " + std::to_string(r.best.load.max_load) + " (bound " +
                             std::to_string(c.structure.transfer_bound) + ")";
    write_whole_file(o.output,
                     write_lft_dump(r.fabric, r.best.routing.lft, {info, "load with: opensm -R file -U " + o.output}));
  }
  if (!o.ranks.empty()) {
    std::string text;
    for (const Host& h : r.best.hosts) text += h.name + "\n";
    write_whole_file(o.ranks, text);
  }
}

nlohmann::json routing_json(const ScanContext& c, const RoutingCliOptions& o, const TreeTablesOutcome& r) {
  const TreeTables& best = r.best;
  const int bound = c.structure.transfer_bound;
  nlohmann::json j{
      {"scan_id", c.scan_id},
      {"hosts", best.hosts.size()},
      {"order", r.order},
      {"levels", c.structure.levels},
      {"style", best.style == TreeStyle::spread ? "spread" : "hubs"},
      {"other_lids", best.other_lids ? nlohmann::json(*best.other_lids == TreeStyle::spread ? "spread" : "hubs")
                                     : nlohmann::json(nullptr)},
      {"hubs", best.routing.hubs.size()},
      {"least_time",
       {{"tables", best.least.tables.time},
        {"fabric", best.least.fabric.time},
        {"efficiency_ceiling", r.ceiling()},
        {"limited_by", best.least.tables.limited_by}}},
      {"lmc", c.fabric.max_lmc()},
      {"bound", bound},
      {"seconds", r.seconds},
      {"routed_lids", best.routing.routed_lids},
      {"moved_roots", best.routing.moved_roots},
      {"detours", best.routing.detours},
      {"refine",
       {{"excess_before", best.refine.excess_before},
        {"excess_after", best.refine.excess_after},
        {"moves", best.refine.moves},
        {"passes", best.refine.passes},
        {"skipped", best.refine.skipped},
        {"work", best.refine.work},
        {"out_of_budget", best.refine.out_of_budget}}},
      {"check",
       {{"ok", r.check.ok()}, {"walked", r.check.walked}, {"failures", r.check.failures}, {"first", r.check.first}}},
      {"round_robin",
       {{"max_load", best.load.max_load},
        {"congested_share", best.load.congested_share()},
        {"phases_over_bound",
         std::count_if(best.load.phase_max.begin(), best.load.phase_max.end(), [&](int m) { return m > bound; })},
        {"broken", best.load.broken},
        {"over", over_links(r.fabric, best.load, 20)},
        {"efficiency", efficiency_json(best.efficiency)}}},
      {"congestion_free", best.load.max_load <= bound && best.load.broken == 0},
      {"tables", r.check.ok() && !o.output.empty() ? nlohmann::json(o.output) : nlohmann::json(nullptr)},
      {"ranks", r.check.ok() && !o.ranks.empty() ? nlohmann::json(o.ranks) : nlohmann::json(nullptr)}};
  j["check"]["no_way"] = r.check.no_way;
  j["check"]["lateral_links"] = c.structure.lateral.size();
  if (r.before)
    j["scanned_tables"] = {{"max_load", r.before->load.max_load},
                           {"congested_share", r.before->load.congested_share()},
                           {"efficiency", efficiency_json(r.before->figures.efficiency)}};
  if (r.planned) j["plan"] = {{"max_load", r.planned->max_load}, {"congested_share", r.planned->congested_share()}};
  return j;
}

void print_routing(const ScanContext& c, const RoutingCliOptions& o, const TreeTablesOutcome& r) {
  const TreeTables& best = r.best;
  const int bound = c.structure.transfer_bound;
  const std::string how = best.style == TreeStyle::spread
                              ? std::string("spread (every switch balances its own choices)")
                              : std::to_string(best.routing.hubs.size()) + " hubs";
  const std::string others = !best.other_lids                        ? ""
                             : *best.other_lids == TreeStyle::spread ? ", the other LIDs spread"
                                                                     : ", the other LIDs by hubs";
  std::printf("routing for scan %lld: %zu hosts in %s order, %d switch levels, %s%s, LMC %d, computed in %.2f s\n",
              static_cast<long long>(c.scan_id), best.hosts.size(), r.order.c_str(), c.structure.levels, how.c_str(),
              others.c_str(), int{c.fabric.max_lmc()}, r.seconds);
  std::printf(
      "  least possible all-to-all time over these tables %.0f message-times, the fabric's %.0f: at most %.2f "
      "efficiency for any plan\n",
      best.least.tables.time, best.least.fabric.time, r.ceiling());
  if (r.ceiling() < 0.995) std::printf("    the tables' limit: %s\n", best.least.tables.limited_by.c_str());
  std::printf("  round-robin, base LIDs: worst link %d (bound %d), %.1f %% congested, efficiency %s%s\n",
              best.load.max_load, bound, 100 * best.load.congested_share(), efficiency_figure(best.efficiency).c_str(),
              best.load.max_load <= bound ? ": congestion-free" : "");
  for (const auto& x : over_links(r.fabric, best.load, 5))
    std::printf("    phase %d: %s carries %d (capacity %d)\n", x["phase"].get<int>(),
                x["link"].get<std::string>().c_str(), x["load"].get<int>(), x["capacity"].get<int>());
  if (r.before)
    std::printf("  the scanned tables, same order: worst link %d, %.1f %% congested, efficiency %s\n",
                r.before->load.max_load, 100 * r.before->load.congested_share(),
                efficiency_figure(r.before->figures.efficiency).c_str());
  if (r.planned)
    std::printf("  planned over these tables (LMC %d): worst link %d\n", int{c.fabric.max_lmc()}, r.planned->max_load);
  if (best.refine.moves || best.refine.skipped)
    std::printf("  refined: %s\n",
                best.refine.skipped
                    ? "skipped (too many links x ranks for the load table)"
                    : (std::to_string(best.refine.excess_before) + " transfers above capacity -> " +
                       std::to_string(best.refine.excess_after) + " in " + std::to_string(best.refine.moves) +
                       " moves" + (best.refine.out_of_budget ? " (work budget spent)" : ""))
                          .c_str());
  if (best.routing.moved_roots || best.routing.detours)
    std::printf(
        "  missing links: %zu LIDs turn at another hub than their rank picks, %zu entries of host switches climb "
        "another way\n",
        best.routing.moved_roots, best.routing.detours);
  std::printf("  check: %zu (switch, LID) routes walked, %s\n", r.check.walked,
              r.check.ok() ? "every LID arrives, up*/down*, ports in range"
                           : (std::to_string(r.check.failures) + " failed").c_str());
  for (const std::string& line : r.check.first) std::printf("    %s\n", line.c_str());
  if (const std::string cause = not_a_tree(c.fabric, c.structure); !r.check.ok() && !cause.empty())
    std::printf("    %s\n", cause.c_str());
  if (r.check.no_way)
    std::printf(
        "    %zu (switch, CA LID) pairs outside the hosts have no up*/down* way (aggregation nodes on two top "
        "switches: only a turn from down to up would join them); left unrouted\n",
        r.check.no_way);
  if (r.check.ok() && !o.output.empty())
    std::printf("tables: %s (opensm -R file -U %s)\n", o.output.c_str(), o.output.c_str());
  if (r.check.ok() && !o.ranks.empty()) std::printf("ranks: %s (one host per line, rank order)\n", o.ranks.c_str());
}

int run_routing(RoutingCliOptions o) {
  o.refine = !o.no_refine;
  store::FabricStore store(o.db, store::Access::read_only);
  ScanContext c(store, o.scan);
  TreeTablesOutcome r = compute_tree_tables(c, o);
  write_outputs(c, o, r);
  if (o.json)
    print_json(routing_json(c, o, r));
  else
    print_routing(c, o, r);
  if (!r.check.ok()) {
    const std::string cause = not_a_tree(c.fabric, c.structure);
    std::cerr << "ibroute: the computed tables fail the check (" << r.check.first.front() << ")"
              << (cause.empty() ? "" : "; " + cause) << "; nothing written\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

Runner setup_routing(CLI::App& app) {
  auto o = std::make_shared<RoutingCliOptions>();
  auto* c = add_store_command(app, *o, "routing", kScanAndJson);
  add_hosts_option(c, o->hosts);
  c->add_option("--order", o->order,
                "rank order: auto, name (as given; also 'given') or topology (by leaf and port as the tree is cabled; "
                "also 'tree'), "
                "the words plan and accept take")
      ->check(CLI::IsMember({"auto", "name", "topology", "given", "tree"}))
      ->capture_default_str();
  c->add_option("--style", o->style, "construction: auto (both, the better kept), hubs or spread")
      ->check(CLI::IsMember({"auto", "hubs", "spread"}))
      ->capture_default_str();
  c->add_option("-o,--output", o->output, "write the tables here (dump_lfts.sh format, for opensm -R file -U)");
  c->add_option("--ranks", o->ranks, "write the rank order here, one host per line (for --hosts @FILE)");
  c->add_flag("--plan", o->plan, "also plan the all-to-all over the new tables (uses LMC > 0)");
  c->add_flag("--no-refine", o->no_refine, "skip the local search on the first hops (construction only)");
  c->add_option("--refine-work", o->refine_work,
                "work budget of the local search, in millions of transfer-hops weighed (not a time: the same tables on "
                "any machine)")
      ->check(decimal_in(0.0, 1e6))
      ->capture_default_str();
  return [o] { return run_routing(*o); };
}

}  // namespace ibroute::cli
