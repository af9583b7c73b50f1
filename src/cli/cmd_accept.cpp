// ibroute accept: the all-to-all acceptance test of a cluster. Structure and routing from the
// scan, a congestion-free plan, then the plan played (--simulate) or run on the hardware
// (--launch, or the report of an earlier `ibroute run`), each check against the expectation file
// (docs/acceptance.md); a self-contained HTML report and the same data as JSON.
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "accept_html.hpp"
#include "accept_run.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/dot.hpp"
#include "ibroute/fabric/error.hpp"
#include "options.hpp"
#include "whole_file.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::schedule;
using nlohmann::json;

namespace {

struct AcceptOptions : StoreOptions {
  std::string expect;
  std::string hosts, senders, receivers;
  std::string order = "auto";
  std::string method = "auto";
  bool shifts_only = false;
  bool simulate = false;
  std::string launch;
  std::vector<std::string> run_args;
  bool rescan = false;
  std::vector<std::string> scan_args;
  std::string run_report;
  std::string message_size = "1MiB";
  std::string rate;
  std::string report = "accept-report.html";
  std::string counters = "auto";  // auto | snapshots | off: which counter window the links are judged by
  bool confirm = false;           // one more run of the suspects' transfers and controls (with --launch)
};

// --rescan: the fabric as it is now, through `ibroute scan` (same options, same database).
void rescan(const AcceptOptions& o) {
  std::string cmd = workflow::shell_quoted(workflow::own_executable()) + " scan --db " + workflow::shell_quoted(o.db);
  for (const std::string& a : o.scan_args) cmd += " " + workflow::shell_quoted(a);
  cmd += " 1>&2";
  std::cerr << "accept: " << cmd << "\n";
  const int rc = workflow::run_shell(cmd);
  if (rc != 0) throw InputError("the scan failed (exit status " + std::to_string(rc) + "): " + cmd);
}

// The link directions the repair list names with confidence, as (node, port), for the picture.
std::set<std::pair<int, int>> suspect_ports(const workflow::FabricContext& c, const json& report) {
  std::set<std::pair<int, int>> out;
  if (!report.contains("diagnosis")) return out;
  std::map<std::string, int> node_of;
  for (size_t i = 0; i < c.fabric.nodes.size(); ++i)
    node_of.emplace(fabric::guid_hex(c.fabric.nodes[i].guid), static_cast<int>(i));
  for (const json& s : report["diagnosis"]["suspects"])
    if (s["confidence"].get<double>() >= 0.5 && s.value("guid", json()).is_string() &&
        s.value("port", json()).is_number_integer())
      if (auto it = node_of.find(s["guid"].get<std::string>()); it != node_of.end())
        out.emplace(it->second, s["port"].get<int>());
  return out;
}

// The self-contained page: the plan's picture (every link coloured by its worst concurrent load)
// and the pairs' heat map.
void write_html(const AcceptOptions& o, const workflow::FabricContext& c, const PlanOutcome& p, const json& report,
                const workflow::Heatmap& heat) {
  const Schedule& plan = p.schedule;
  fabric::DotOptions d;
  d.title = "plan " + plan.name + ": worst concurrent transfers per link direction";
  for (size_t l = 0; l < p.load.link_worst.size(); ++l)
    if (p.load.link_worst[l] > 0)
      d.load[{c.links.node(static_cast<int32_t>(l)), c.links.port(static_cast<int32_t>(l))}] = {p.load.link_worst[l],
                                                                                                c.eval.capacity[l]};
  for (const fabric::LinkRef& m : c.structure.missing)
    if (m.b_node >= 0) d.missing.emplace_back(m.a_node, m.b_node);
  d.suspects = suspect_ports(c, report);
  // Beyond a few dozen switches a node-link drawing is a wall of edges at the width of a page: the
  // level-pair matrix takes its place (every switch pair a labelled cell, topo --format matrix).
  size_t switches = 0;
  for (const fabric::Node& n : c.fabric.nodes) switches += n.is_switch();
  std::string svg = switches > fabric::DotOptions::kLargeFabric ? fabric::matrix_svg(c.fabric, d)
                                                                : fabric::render_svg(fabric::to_dot(c.fabric, d));
  if (auto at = svg.find("<svg"); at != std::string::npos) svg = svg.substr(at);  // inline: no XML prolog
  write_whole_file(o.report, accept_html(report, svg, heat));
}

workflow::AcceptRequest request_of(const AcceptOptions& o) {
  workflow::AcceptRequest r;
  r.db = o.db, r.scan = o.scan, r.expect_file = o.expect;
  r.hosts = o.hosts, r.senders = o.senders, r.receivers = o.receivers, r.order = o.order, r.method = o.method;
  r.shifts_only = o.shifts_only, r.simulate = o.simulate, r.launch = o.launch, r.run_args = o.run_args,
  r.run_report = o.run_report;
  r.message_size = o.message_size, r.rate = o.rate, r.counters = o.counters, r.confirm = o.confirm;
  workflow::check_accept_modes(r);
  r.expect = workflow::read_expectation(o.expect);
  return r;
}

int run_accept(const AcceptOptions& o) {
  const workflow::AcceptRequest r = request_of(o);  // the expectation read and checked before anything runs
  if (o.rescan) rescan(o);
  Progress progress;
  const workflow::AcceptOutcome out =
      workflow::run_acceptance(r, {.progress = std::ref(progress),
                                   .hand_over = [&] { progress.finish(); },
                                   .note = [](const std::string& line) { std::cerr << line << "\n"; }});
  Stopwatch clock;
  progress("writing the report", 0, 0);
  write_html(o, *out.context, out.judged(), out.report, out.heat);
  progress.finish();
  json report = out.report;
  report["stage_seconds"]["report"] = clock.lap();
  report["report"] = o.report;
  if (o.json)
    print_json(report);
  else
    std::fputs(accept_text(report).c_str(), stdout);
  return out.accepted() ? kExitOk : kExitFailure;
}

}  // namespace

Runner setup_accept(CLI::App& app) {
  auto o = std::make_shared<AcceptOptions>();
  auto* c = add_store_command(app, *o, "accept", kScanAndJson);
  c->add_option("--expect", o->expect, "expectation file (JSON)")->required();
  c->add_flag("--rescan", o->rescan, "scan the fabric first (ibroute scan into --db), then judge that scan");
  c->add_option("--scan-arg", o->scan_args,
                "extra argument for `ibroute scan` (repeatable), e.g. --scan-arg=-C --scan-arg=mlx5_0");
  add_hosts_option(c, o->hosts);
  add_group_options(c, o->senders, o->receivers);
  c->add_flag("--shifts-only", o->shifts_only,
              "plan only the shifts of the rank order (as plan --shifts-only): is the all-to-all congestion-free as "
              "N-1 permutations");
  c->add_option("--order", o->order,
                "rank order of the plan: name (as given), topology (by leaf and port), auto (name; topology when that "
                "leaves a link over the bound, the better kept)")
      ->check(CLI::IsMember({"name", "topology", "auto"}))
      ->capture_default_str();
  c->add_flag("--simulate", o->simulate, "play the plan on the scanned fabric instead of running it");
  c->add_option("--launch", o->launch, "launcher prefix for `ibroute run`; {ranks} = number of hosts");
  c->add_option("--run-arg", o->run_args, "extra argument for `ibroute run` (repeatable), e.g. --run-arg=--rounds=10");
  c->add_option("--run-report", o->run_report, "use this `ibroute run -o` report instead of running");
  add_rate_options(c, o->rate, o->message_size, "the most the fabric carries (message_size in the expectation wins)");
  c->add_option("--method", o->method, "planning method, as plan --method: auto, free or structure")
      ->capture_default_str();
  c->add_option("--report", o->report, "HTML report to write")->capture_default_str();
  c->add_flag(
      "--confirm", o->confirm,
      "with --launch: run the top suspects' transfers once more beside the same senders' others, and confirm or clear "
      "each suspect by what that run shows");
  c->add_option(
       "--counters", o->counters,
       "the ports' counters the links are judged by: auto (the run's own reading; --run-report without one: the "
       "scan's last two snapshots; --simulate: none), snapshots (the scan's last two, from ibroute counters around "
       "traffic that ran outside ibroute), off")
      ->check(CLI::IsMember({"auto", "snapshots", "off"}))
      ->capture_default_str();
  c->get_option("--json")->description("print the report data as JSON");
  return [o] { return run_accept(*o); };
}

}  // namespace ibroute::cli
