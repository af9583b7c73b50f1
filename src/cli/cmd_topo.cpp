// ibroute topo: the fabric of a scan as a Graphviz picture (DOT text or SVG).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>

#include "commands.hpp"
#include "common.hpp"
#include "fabric_context.hpp"
#include "ibroute/fabric/dot.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "options.hpp"
#include "round_robin.hpp"
#include "slurm_topology.hpp"
#include "whole_file.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;

namespace {

struct TopoOptions : StoreOptions {
  std::string format = "dot";
  std::string output;
  bool hosts = false;
  std::string schedule, pattern, lids = "base", load = "worst";
};

// topology.conf for Slurm's tree plugin: the text out, what was left out and why on stderr.
int run_slurm(store::FabricStore& store, const TopoOptions& o) {
  if (!o.schedule.empty() || !o.pattern.empty() || o.hosts)
    throw InputError("--format " + o.format + " takes no --schedule, --pattern or --hosts");
  ScanContext c(store, o.scan);
  const bool block = o.format == "slurm-block";
  const workflow::SlurmTopology t =
      block ? workflow::slurm_blocks(c.fabric, c.structure) : workflow::slurm_topology(c.fabric, c.structure);
  if (t.hosts == 0)
    throw InputError("scan " + std::to_string(c.scan_id) + ": no host with a Slurm node name" +
                     (t.left_out.empty() ? std::string() : " (" + t.left_out.front() + ")"));
  const std::string head =
      block ? "# Slurm topology.yaml (topology/block) from ibroute scan " + std::to_string(c.scan_id) + ": " +
                  std::to_string(t.switches) + " blocks (one per switch hosts are cabled to), " +
                  std::to_string(t.hosts) + " hosts\n"
            : "# Slurm topology.conf (TopologyPlugin=topology/tree) from ibroute scan " + std::to_string(c.scan_id) +
                  ": " + std::to_string(t.switches) + " switches, " + std::to_string(t.hosts) + " hosts\n";
  if (o.output.empty() || o.output == "-")
    std::cout << head << t.text;
  else
    write_whole_file(o.output, head + t.text);
  for (const std::string& n : t.notes)
    std::cerr << "topo: " << n << "\n";  // names were checked for control characters where they entered
  for (const std::string& l : t.left_out) std::cerr << "topo: left out " << l << "\n";
  // Hosts the fabric lost since the scan before: not in the file, said.
  int64_t before = 0;
  for (const store::ScanInfo& i : store.scans())
    if (i.id < c.scan_id) before = std::max(before, i.id);
  if (before) {
    std::set<std::string> now;
    for (const Node& n : c.fabric.nodes)
      if (!n.is_switch() && node_kind(n) == NodeKind::host) now.insert(n.desc);
    for (const Node& n : store.load_fabric(before, false).nodes)
      if (!n.is_switch() && node_kind(n) == NodeKind::host && !now.count(n.desc))
        std::cerr << "topo: left out " << n.desc << ": in scan " << before << ", gone from scan " << c.scan_id << "\n";
  }
  return kExitOk;
}

int run_topo(const TopoOptions& o) {
  store::FabricStore store(o.db, store::Access::read_only);
  if (o.format == "slurm" || o.format == "slurm-block") return run_slurm(store, o);
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
    ScanContext c(store, scan);
    c.require_routes("link load (--schedule, --pattern)");
    if (o.schedule.empty()) {
      schedule::LidPolicy pol;
      if (!schedule::lid_policy_from(o.lids, pol)) throw InputError("--lids takes base, spread or random");
      s.hosts = o.pattern == "rr-topo" ? schedule::topology_order(c.fabric, schedule::all_hosts(c.fabric))
                                       : schedule::all_hosts(c.fabric);
      s.phases = workflow::round_robin_phases(c.fabric, {.hosts = s.hosts}, {.lids = pol});
      s.name = o.pattern + " (" + o.lids + " LIDs)";
    }
    schedule::LoadReport r = schedule::evaluate(c.eval, s.hosts, s.phases, false);
    const bool worst = o.load == "worst";
    for (size_t l = 0; l < c.links.size(); ++l) {
      long v = worst ? r.link_worst[l] : static_cast<long>(r.link_total[l]);
      if (v)
        opt.load[{c.links.node(static_cast<int32_t>(l)), c.links.port(static_cast<int32_t>(l))}] = {
            v, worst ? c.eval.capacity[l] : 0};
    }
    opt.title = s.name + ": " +
                (worst ? "most transfers at once per link direction (a/b: each direction), worst " +
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
  auto* c = add_store_command(app, *o, "topo", kWithScan);
  c->add_option("--format", o->format,
                "dot, svg (Graphviz; parallel links folded per switch pair beyond 40 switches) or matrix (SVG: per "
                "pair of levels, lower x upper switches, a cell per switch pair - readable at any size), slurm "
                "(topology.conf) or "
                "slurm-block (topology.yaml)")
      ->check(CLI::IsMember({"dot", "svg", "matrix", "slurm", "slurm-block"}))
      ->capture_default_str();
  c->add_option("-o,--output", o->output, "output file (default: standard output)");
  c->add_flag("--hosts", o->hosts, "draw every host instead of one box per leaf");
  c->add_option("--schedule", o->schedule, "colour links by the load of this stored schedule (name or id)");
  c->add_option("--pattern", o->pattern, "colour links by the load of round-robin all-to-all")
      ->check(CLI::IsMember({"rr-name", "rr-topo"}));
  c->add_option("--lids", o->lids, "DLID policy of --pattern: base, spread, random")->capture_default_str();
  c->add_option("--load", o->load, "worst (most at once, against capacity) or total (over all phases)")
      ->check(CLI::IsMember({"worst", "total"}))
      ->capture_default_str();
  return [o] { return run_topo(*o); };
}

}  // namespace ibroute::cli
