// ibroute topo: the fabric of a scan as a Graphviz picture (DOT text or SVG).
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "whole_file.hpp"
#include "options.hpp"
#include "ibroute/fabric/dot.hpp"
#include "fabric_context.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"

namespace ibroute::cli {

using namespace ibroute::fabric;

namespace {

struct TopoOptions {
  std::string db = kDefaultDb;
  std::optional<int64_t> scan;
  std::string format = "dot";
  std::string output;
  bool hosts = false;
  std::string schedule, pattern, lids = "base", load = "worst";
};

int run_topo(const TopoOptions& o) {
  store::FabricStore store(o.db, store::Access::read_only);
  DotOptions opt{.fold_hosts = !o.hosts};
  std::string text;
  if (o.schedule.empty() && o.pattern.empty()) {
    Fabric f = store.load_fabric(pick_scan(store, o.scan), false);
    text = o.format == "matrix" ? matrix_svg(f, opt) : to_dot(f, opt);
  } else {
    if (!o.schedule.empty() && !o.pattern.empty()) throw InputError("--schedule and --pattern exclude each other");
    std::optional<int64_t> scan = o.scan;
    schedule::Schedule s;
    if (!o.schedule.empty()) {
      store::ScheduleInfo info = store.schedule_info(o.schedule);
      s = store.load_schedule(info.id);
      if (!scan) scan = info.scan_id;
    }
    FabricContext c(store, scan);
    c.require_routes("link load (--schedule, --pattern)");
    if (o.schedule.empty()) {
      schedule::LidPolicy pol;
      if (!schedule::lid_policy_from(o.lids, pol)) throw InputError("--lids takes base, spread or random");
      s.hosts = o.pattern == "rr-topo" ? schedule::topology_order(c.fabric, schedule::all_hosts(c.fabric)) : schedule::all_hosts(c.fabric);
      s.phases = schedule::shift_phases(s.hosts.size());
      schedule::apply_lid_policy(c.fabric, s.hosts, s.phases, pol);
      s.name = o.pattern + " (" + o.lids + " LIDs)";
    }
    schedule::LoadReport r = schedule::evaluate(c.eval, s.hosts, s.phases, false);
    const bool worst = o.load == "worst";
    for (size_t l = 0; l < c.links.size(); ++l) {
      long v = worst ? r.link_worst[l] : static_cast<long>(r.link_total[l]);
      if (v) opt.load[{c.links.node(static_cast<int32_t>(l)), c.links.port(static_cast<int32_t>(l))}] = {v, worst ? c.eval.capacity[l] : 0};
    }
    opt.title = s.name + ": " + (worst ? "most transfers at once per link direction (a/b: each direction), worst " +
                                             std::to_string(r.max_load) + ", bound " + std::to_string(c.structure.transfer_bound)
                                       : "transfers per link direction over all " + std::to_string(s.phases.size()) + " phases");
    text = o.format == "matrix" ? matrix_svg(c.fabric, opt) : to_dot(c.fabric, opt);
  }
  if (o.format == "svg") text = render_svg(text);
  if (o.output.empty() || o.output == "-") {
    std::cout << text;
  } else {
    write_whole_file(o.output, text);
  }
  return kExitOk;
}

}  // namespace

Runner setup_topo(CLI::App& app) {
  auto o = std::make_shared<TopoOptions>();
  auto* c = app.add_subcommand("topo", "The fabric as a Graphviz picture (DOT or SVG).");
  c->footer(
      "Draw the fabric: switches as boxes (leaves blue, spines orange), hosts folded per leaf,\n"
      "links at reduced width or speed orange, links down red, switches with unread LFTs red; one row\n"
      "per switch level. --format matrix draws the links between adjacent levels as a grid instead:\n"
      "link counts (missing and slow links stand out) or, with --schedule/--pattern, the worst load\n"
      "per link direction against the capacity (over capacity red).\n"
      "Exit: 0 written, 1 Graphviz failed, 2 bad input.");
  add_db_option(c, o->db);
  add_scan_option(c, o->scan);
  c->add_option("--format", o->format,
                "dot, svg (Graphviz; parallel links folded per switch pair beyond 40 switches) or matrix (SVG: per "
                "pair of levels, lower x upper switches, a cell per switch pair - readable at any size)")
      ->check(CLI::IsMember({"dot", "svg", "matrix"}))
      ->capture_default_str();
  c->add_option("-o,--output", o->output, "output file (default: standard output)");
  c->add_flag("--hosts", o->hosts, "draw every host instead of one box per leaf");
  c->add_option("--schedule", o->schedule, "colour links by the load of this stored schedule (name or id)");
  c->add_option("--pattern", o->pattern, "colour links by the load of round-robin all-to-all")->check(CLI::IsMember({"rr-name", "rr-topo"}));
  c->add_option("--lids", o->lids, "DLID policy of --pattern: base, spread, random")->capture_default_str();
  c->add_option("--load", o->load, "worst (most at once, against capacity) or total (over all phases)")
      ->check(CLI::IsMember({"worst", "total"}))->capture_default_str();
  return [o] { return run_topo(*o); };
}

}  // namespace ibroute::cli
