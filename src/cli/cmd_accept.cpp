// ibroute accept: the all-to-all acceptance test of a cluster. Structure and routing from the
// scan, a congestion-free plan, then the plan played (--simulate) or run on the hardware
// (--launch, or the report of an earlier `ibroute run`), each check against the expectation file
// (docs/acceptance.md); a self-contained HTML report and the same data as JSON.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>

#include <sys/wait.h>
#include <unistd.h>

#include "accept_checks.hpp"
#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/link_measures.hpp"
#include "ibroute/fabric/live_scan.hpp"
#include "accept_html.hpp"
#include "accept_input.hpp"
#include "counter_window.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "fabric_context.hpp"
#include "ibroute/fabric/dot.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/lower_bound.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"
#include "ibroute/schedule/simulate.hpp"

namespace ibroute::cli {

using namespace ibroute::schedule;
using nlohmann::json;

namespace {

struct AcceptOptions {
  std::string db = kDefaultDb;
  std::optional<int64_t> scan;
  std::string expect;
  std::string hosts, senders, receivers;
  std::string order = "auto";
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
  bool json = false;
};

json load_json(const LoadReport& l) {
  json h = json::object();
  for (auto [load, n] : l.histogram) h[std::to_string(load)] = n;
  return {{"max_load", l.max_load}, {"congested_share", l.congested_share()}, {"histogram", h},
          {"phase_max", phase_max_histogram(l.phase_max)}};
}

// A plan in one rank order, with its load.
struct Attempt {
  std::string order;
  Schedule plan;
  PlanStats stats;
  LoadReport load;
  // Within the bound first, then the lowest worst link, then the fewest phases and transfers over.
  auto rank() const { return std::tuple(stats.phases_over > 0, load.max_load, stats.phases_over, load.congested); }
};

// `named`: two groups in the order given (null: all-to-all among `given`).
Attempt plan_in(const FabricContext& c, const std::string& order, const std::vector<Host>& given, const Groups* named, bool shifts_only) {
  Attempt a{order, {}, {}, {}};
  Progress progress;
  const PlanOptions po{.packing = !shifts_only, .progress = std::ref(progress)};
  if (named) {
    const Groups g = order == "topology" ? topology_ordered(c.fabric, *named) : *named;
    a.plan = plan_groups(c.eval, g.hosts, g.senders, g.receivers, po, &a.stats);
  } else {
    a.plan = plan_all_to_all(c.eval, order == "topology" ? topology_order(c.fabric, given) : given, po, &a.stats);
  }
  a.load = evaluate(c.eval, a.plan.hosts, a.plan.phases, false, std::ref(progress));
  progress.finish();
  return a;
}

// The links above their capacity in some phase, worst first (then the busiest over all phases):
// where to look, rather than the first one found.
std::vector<int32_t> links_over(const EvalContext& ctx, const LoadReport& l) {
  std::vector<int32_t> over;
  for (size_t k = 0; k < l.link_worst.size(); ++k)
    if (l.link_worst[k] > ctx.capacity[k]) over.push_back(static_cast<int32_t>(k));
  auto key = [&](int32_t k) { return std::tuple(-l.link_worst[k], -static_cast<int64_t>(l.link_total[k]), k); };
  std::sort(over.begin(), over.end(), [&](int32_t a, int32_t b) { return key(a) < key(b); });
  return over;
}

constexpr size_t kWorstShown = 5;

json worst_json(const FabricContext& c, const LoadReport& l, const std::vector<int32_t>& over) {
  json out = json::array();
  for (size_t k = 0; k < over.size() && k < kWorstShown; ++k)
    out.push_back({{"link", link_name(c, over[k])}, {"load", l.link_worst[over[k]]}, {"capacity", c.eval.capacity[over[k]]},
                   {"transfers", l.link_total[over[k]]}});
  return out;
}

// "worst: A carries 4 (capacity 2), B carries 3 (capacity 2) and 12 more links"
std::string worst_text(const json& worst, size_t count) {
  if (worst.empty()) return "";
  std::string t = "worst: ";
  for (const json& w : worst)
    t += (&w == &worst.front() ? "" : ", ") + w["link"].get<std::string>() + " carries " + std::to_string(w["load"].get<int>()) +
         " (capacity " + std::to_string(w["capacity"].get<int>()) + ")";
  if (count > worst.size()) t += " and " + std::to_string(count - worst.size()) + " more links";
  return t;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// --rescan: the fabric as it is now, through `ibroute scan` (same options, same database).
void rescan(const AcceptOptions& o) {
  std::string cmd = quoted(own_executable()) + " scan --db " + quoted(o.db);
  for (const std::string& a : o.scan_args) cmd += " " + quoted(a);
  cmd += " 1>&2";
  std::cerr << "accept: " << cmd << "\n";
  int rc = std::system(cmd.c_str());
  if (rc != 0) throw InputError("the scan failed (exit status " + std::to_string(WEXITSTATUS(rc)) + "): " + cmd);
}

// Runs `LAUNCH ibroute run ...` and returns the text of its report (the launcher starts one rank per host).
// With `find_rate_limit`, the run searches the rate it can hold (--find-rate) within that skipped share.
// The report comes back through the database, where rank 0 stores every run: under srun or a
// multi-host mpirun rank 0 runs on another node, whose /tmp this process cannot read.
std::string launch_run(const AcceptOptions& o, store::FabricStore& store, const std::string& schedule, size_t ranks,
                       std::optional<double> find_rate_limit) {
  const std::string self = own_executable();
  const int64_t schedule_id = store.schedule_info(schedule).id, before = store.last_run_id();
  std::string launch = o.launch;
  for (size_t p; (p = launch.find("{ranks}")) != std::string::npos;) launch.replace(p, 7, std::to_string(ranks));
  std::string cmd = launch + " " + quoted(self) + " run --db " + quoted(std::filesystem::absolute(o.db).string()) + " --schedule " + quoted(schedule);
  for (const std::string& a : o.run_args) cmd += " " + quoted(a);
  if (find_rate_limit) cmd += " --find-rate --max-skipped " + std::to_string(*find_rate_limit);
  cmd += " 1>&2";  // the run's summary is progress here; accept's own output stays parseable
  std::cerr << "accept: " << cmd << "\n";
  const int rc = std::system(cmd.c_str());
  const std::optional<store::RunRow> row = store.newest_run_of(schedule_id, before);
  if (!row)
    throw std::runtime_error("the run stored no report in " + o.db + " (exit status " + std::to_string(rc) +
                             "; rank 0 stores it there: the database must be on a file system every node reaches): " + cmd);
  return row->report_json;
}

using fabric::CounterSnapshot;
using fabric::PortDelta;

// The links whose error counters rose, worst first.
CounterFacts counter_facts(const FabricContext& c, const CounterWindow& w) {
  CounterFacts out{w.between, {}};
  for (const PortDelta& d : w.deltas) {
    if (!d.errors()) continue;
    std::string what;
    for (size_t i = 0; i < fabric::kCounters; ++i)
      if (fabric::counter_info(i).error && d.delta[i])
        what += (what.empty() ? "" : ", ") + std::string(fabric::counter_info(i).ib) + " +" + std::to_string(d.delta[i]);
    out.links.push_back({link_name(c, c.links.id(d.node, d.port)), what, d.errors()});
  }
  std::stable_sort(out.links.begin(), out.links.end(), [](const auto& a, const auto& b) { return a.errors > b.errors; });
  return out;
}

std::optional<CounterWindow> stored_window(store::FabricStore& store, const FabricContext& c, std::string& why) {
  const std::vector<store::CounterSnapshotInfo> snaps = store.counter_snapshots(c.scan_id);
  if (snaps.size() < 2) {
    why = std::to_string(snaps.size()) + " counter snapshot(s) of scan " + std::to_string(c.scan_id) +
          "; take 'ibroute counters' before and after the traffic";
    return std::nullopt;
  }
  const auto& a = snaps[snaps.size() - 2];
  const auto& b = snaps.back();
  return CounterWindow{"snapshots " + std::to_string(a.id) + " and " + std::to_string(b.id) + " of scan " + std::to_string(c.scan_id) + ", " +
                           a.taken_at + " to " + b.taken_at,
                       counter_deltas(store.load_counters(a.id), store.load_counters(b.id))};
}

int run_accept(const AcceptOptions& o) {
  const int modes = int(o.simulate) + int(!o.launch.empty()) + int(!o.run_report.empty());
  if (modes != 1) throw InputError("give exactly one of --simulate, --launch CMD, --run-report FILE");
  Expectation ex = read_expectation(o.expect);
  const json& e = ex.doc;
  if (o.rescan) rescan(o);
  store::FabricStore store(o.db, false);
  FabricContext c(store, o.scan);
  c.require_routes("the acceptance test");
  const fabric::Fabric& f = c.fabric;
  const fabric::FabricStructure& st = c.structure;
  Checks checks;

  check_fabric(e, f, st, checks);
  check_routing(e, f, st, checks);
  // 3. Does a congestion-free all-to-all exist? In the ranks' given (name) order, or by leaf and
  // port: routing engines such as ftree make the topology order's shifts congestion-free, which at
  // LMC 0 (one path per pair) no choice of DLIDs can do for another order.
  const bool groups = !o.senders.empty() || !o.receivers.empty();
  if (groups && !o.hosts.empty()) throw InputError("--senders/--receivers exclude --hosts");
  Groups named;  // in the order given: the round-robin baseline's ranks
  if (groups) named = select_groups(f, o.senders, o.receivers, false);
  const std::vector<Host> given = groups ? named.hosts : select_hosts(f, o.hosts);
  if (given.size() < 2) throw InputError("an all-to-all needs at least 2 hosts");
  const auto message_size = static_cast<uint64_t>(parse_quantity(e.contains("message_size") ? e["message_size"].get<std::string>() : o.message_size, true, "message size"));
  Stopwatch sw;
  const Groups* two = groups ? &named : nullptr;
  std::vector<Attempt> tried{plan_in(c, o.order == "topology" ? "topology" : "name", given, two, o.shifts_only)};
  if (o.order == "auto" && tried[0].stats.phases_over > 0) tried.push_back(plan_in(c, "topology", given, two, o.shifts_only));
  const Attempt& chosen = *std::min_element(tried.begin(), tried.end(), [](const Attempt& a, const Attempt& b) { return a.rank() < b.rank(); });
  Schedule plan = chosen.plan;
  const PlanStats& ps = chosen.stats;
  const LoadReport& load = chosen.load;
  const std::vector<Host>& hosts = plan.hosts;
  time_schedule(c.eval, load, message_size, o.rate.empty() ? 0 : parse_quantity(o.rate, false, "--rate"), plan);
  const LeastTime least_t = least_time(c.eval, hosts, plan.senders, plan.receivers);
  const Efficiency eff = efficiency_of(c.eval, least_t, load, groups ? plan.receivers.size() : hosts.size() - 1, &plan);
  plan.name = "accept-" + std::to_string(hosts.size()) + "-scan" + std::to_string(c.scan_id);
  const double plan_s = sw.lap();
  const LowerBound least = worst_load_lower_bound(c.eval, hosts, plan.phases, 0, load.broken ? nullptr : &load.phase_max);  // how far from the best possible
  std::vector<Phase> rr = groups ? group_phases(given.size(), named.senders, named.receivers) : shift_phases(given.size());
  apply_lid_policy(f, given, rr, LidPolicy::base);
  LoadReport rr_load = evaluate(c.eval, given, rr, false);
  const std::vector<int32_t> over = links_over(c.eval, load);
  const json worst = worst_json(c, load, over);
  std::string why = worst_text(worst, over.size());
  if (least.worst > plan.bound) why += "; no choice of DLIDs gets below " + std::to_string(least.worst) + ": " + least.where;
  check_plan(e, {.max_load = load.max_load, .least_worst = least.worst, .bound = plan.bound, .phases_over = ps.phases_over,
                 .phases = plan.phases.size(), .why = why, .efficiency = eff},
             checks);

  // 4. Does the fabric deliver it?
  json clock = json::array(), suspects = json::array(), not_ok = json::array();
  std::vector<float> pair(hosts.size() * hosts.size(), 0.f);
  double node_rate = 0;  // bytes/s, the slowest node
  std::optional<double> skipped_share, clock_unc_us;
  std::optional<size_t> missing_ranks;
  std::optional<double> sustainable;  // bytes/s per node, from a rate search
  std::string mode = o.simulate ? "simulate" : "run";
  std::optional<CounterSnapshot> counters_before;
  std::optional<CounterWindow> window;
  std::string counters_why;
  uint64_t rounds = 1;            // of the plan, for the planned bytes per link
  double seconds = 0;             // of the run; --simulate: one round of the plan
  if (o.simulate) {
    Simulation sim = simulate(c.eval, plan, message_size);
    pair = sim.pair_gbps;
    node_rate = sim.node_bytes_per_s;
  } else {
    // The report is checked value by value (accept_input.hpp): a damaged one is exit 2, one line.
    RunReportInput run;
    if (!o.launch.empty()) {
      counters_before = live_counters(&store, c, "accept-before", counters_why);
      store.save_schedule(c.scan_id, plan, load.max_load, static_cast<int64_t>(load.congested), plan_s, true);
      std::optional<double> limit;
      if (e.contains("min_sustainable_rate")) limit = e.contains("max_skipped_share") ? e["max_skipped_share"].get<double>() : 0.0;
      run = parse_run_report(launch_run(o, store, plan.name, hosts.size(), limit), "the report of the run", hosts.size());
      if (counters_before)
        if (std::optional<CounterSnapshot> after = live_counters(&store, c, "accept-after", counters_why))
          window = CounterWindow{"around the run", counter_deltas(*counters_before, *after)};
    } else {
      run = parse_run_report(read_file(o.run_report), o.run_report, hosts.size());
      plan.name = run.schedule;
    }
    node_rate = run.node_rate;
    rounds = run.rounds_run ? run.rounds_run : 1;
    seconds = run.seconds;
    if (groups && run.node_rates.size() == hosts.size()) {  // receivers need not send: the slowest sender
      node_rate = INFINITY;
      for (int32_t r : plan.senders) node_rate = std::min(node_rate, run.node_rates[static_cast<size_t>(r)]);
    }
    skipped_share = run.skipped_share;
    clock_unc_us = run.max_uncertainty_ns / 1000;
    clock = std::move(run.clock);
    suspects = std::move(run.suspects);
    not_ok = std::move(run.not_ok);
    missing_ranks = run.missing_ranks;
    // Above 2048 ranks the report carries no per-pair matrix: no heatmap then, not zeros.
    if (run.ranks == hosts.size() && run.pair_gbps.size() == hosts.size() * hosts.size()) pair = std::move(run.pair_gbps);
    else pair.clear();
    sustainable = run.sustainable_rate;
  }
  // bytes/s each node must send; also the heatmap's full mark
  const std::optional<double> min_rate =
      check_delivery(e, {.simulated = o.simulate, .node_rate = node_rate, .skipped_share = skipped_share, .clock_uncertainty_us = clock_unc_us,
                         .sustainable_rate = sustainable, .missing_ranks = missing_ranks, .plan_over_bound = !over.empty(), .why = why},
                     checks);
  // 5. Did the links stay clean? 6. Did they wait for credits? Around the launched run, else the
  // scan's last two snapshots; beside the plan, link by link.
  if (o.launch.empty()) window = stored_window(store, c, counters_why);
  if (o.simulate) seconds = planned_seconds(plan);
  const double tick_ns = e.contains("xmit_wait_tick_ns") ? e["xmit_wait_tick_ns"].get<double>() : 0;
  std::optional<fabric::LinkMeasures> measures;
  std::optional<CounterFacts> counters;
  std::optional<CongestionFacts> congestion;
  if (window) {
    measures = fabric::measure_links(window->deltas, c.links, fabric::planned_bytes(load.link_total, message_size * rounds), seconds, tick_ns);
    counters = counter_facts(c, *window);
    congestion = CongestionFacts{window->between, {}};
    for (const fabric::LinkMeasure& m : measures->rows)
      if (m.wait_share) congestion->links.emplace_back(link_name(c, m.link), *m.wait_share);
    std::stable_sort(congestion->links.begin(), congestion->links.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  check_counters(e, counters, counters_why, checks);
  check_congestion(e, congestion, counters_why, checks);
  const bool accepted = checks.failed == 0;
  json orders = json::array();
  for (const Attempt& a : tried)
    orders.push_back({{"order", a.order}, {"max_load", a.load.max_load}, {"phases_over", a.stats.phases_over}});
  json plan_load = load_json(load);
  plan_load["lower_bound"] = {{"worst", least.worst}, {"phase", least.phase}, {"where", least.where}};
  plan_load["links_over"] = over.size();
  plan_load["worst_links"] = worst;
  json report{{"format", "ibroute-accept"},
              {"version", 1},
              {"created_at", store::now_iso()},
              {"accepted", accepted},
              {"passed", checks.passed},
              {"failed", checks.failed},
              {"mode", mode},
              {"expect_file", o.expect},
              {"expectation", e},
              {"checks", checks.list},
              {"fabric",
               {{"name", o.db},
                {"scan_id", c.scan_id},
                {"scanned_at", c.info.started_at},
                {"hosts", st.hosts.size()},
                {"levels", st.levels},
                {"leaves", st.leaves.size()},
                {"top_switches", st.top.size()},
                {"oversubscription", st.oversubscription},
                {"transfer_bound", st.transfer_bound}}},
              {"plan",
               {{"name", plan.name},
                {"hosts", hosts.size()},
                {"senders", groups ? plan.senders.size() : hosts.size()},
                {"receivers", groups ? plan.receivers.size() : hosts.size()},
                {"order", chosen.order},
                {"orders_tried", orders},
                {"method", plan.method},
                {"seconds", plan_s},
                {"message_size", message_size},
                {"rate", plan.timing.rate},
                {"efficiency", efficiency_json(eff)}}},
              {"load", {{"plan", plan_load}, {"round_robin", load_json(rr_load)}}},
              {"rate_per_node", node_rate},
              {"all_to_all_bound_gbps", all_to_all_bound_gbps(c.eval, hosts)},  // as analyze names it
              {"clock", clock},
              {"suspect_links", suspects},
              {"not_ok", not_ok},
              {"links_measured", links_measured_json(c, window ? &*window : nullptr, measures ? &*measures : nullptr, counters_why, rounds, seconds, tick_ns)}};

  // The picture: every link coloured by its worst concurrent load in the plan.
  fabric::DotOptions d;
  d.title = "plan " + plan.name + ": worst concurrent transfers per link direction";
  for (size_t l = 0; l < load.link_worst.size(); ++l)
    if (load.link_worst[l] > 0)
      d.load[{c.links.node(static_cast<int32_t>(l)), c.links.port(static_cast<int32_t>(l))}] = {load.link_worst[l], c.eval.capacity[l]};
  // Beyond a few dozen switches a node-link drawing is a wall of edges at the width of a page: the
  // level-pair matrix takes its place (every switch pair a labelled cell, topo --format matrix).
  size_t switches = 0;
  for (const fabric::Node& n : f.nodes) switches += n.is_switch();
  std::string svg = switches > fabric::DotOptions::kLargeFabric ? fabric::matrix_svg(f, d) : fabric::render_svg(fabric::to_dot(f, d));
  if (auto p = svg.find("<svg"); p != std::string::npos) svg = svg.substr(p);  // inline: no XML prolog
  std::ofstream html(o.report);
  // Pairs the plan does not have (two groups) are no transfer, not a transfer that moved nothing.
  if (groups && !pair.empty()) {
    std::vector<char> sends(hosts.size(), 0), receives(hosts.size(), 0);
    for (int32_t r : plan.senders) sends[static_cast<size_t>(r)] = 1;
    for (int32_t r : plan.receivers) receives[static_cast<size_t>(r)] = 1;
    for (size_t i = 0; i < hosts.size(); ++i)
      for (size_t j = 0; j < hosts.size(); ++j)
        if (!sends[i] || !receives[j]) pair[i * hosts.size() + j] = -1.f;
  }
  // The heatmap's full mark: what each pair must deliver — the rate the expectation demands of a
  // node, else the plan's (each node sends to one peer at a time). Not the plan's alone: a plan
  // over the bound is planned slower, and its run would look good against its own low rate.
  Heatmap heat = bin_heatmap(pair, hosts.size(), plan.timing.rate * 8 / 1e9);
  for (const Host& h : hosts) heat.names.push_back(h.name);
  heat.full_mark_source = "the plan's rate per node";
  if (min_rate) {
    heat.expected_gbps = *min_rate * 8 / 1e9;
    heat.full_mark_source = "min_rate_per_node of the expectation";
  }
  if (!(html << accept_html(report, svg, heat))) throw InputError("cannot write " + o.report);
  report["report"] = o.report;

  if (o.json) print_json(report);
  else std::fputs(accept_text(report).c_str(), stdout);
  return accepted ? kExitOk : kExitFailure;
}

}  // namespace

Runner setup_accept(CLI::App& app) {
  auto o = std::make_shared<AcceptOptions>();
  auto* c = app.add_subcommand("accept", "Acceptance test: structure, routing, a congestion-free plan, and the plan played or run.");
  c->footer(
      "Checks the newest scan (or --scan; --rescan scans first) against an expectation file (docs/acceptance.md): topology,\n"
      "hosts, link width and speed, broken links, LMC, routing balance, a congestion-free all-to-all\n"
      "(planned in name order, or in topology order when that is better: --order), its least possible worst link,\n"
      "the rate per node, skipped transfers, clock-sync uncertainty. Each check: pass/fail with the\n"
      "measured value beside the threshold. Writes a self-contained HTML report (--report).\n"
      "Exit code 0 only when every check passes; 1 when one fails; 2 on bad input.\n"
      "Modes: --simulate plays the plan by max-min fair sharing over the scanned links (no hardware);\n"
      "--launch 'srun --mpi=pmix -N {ranks} --ntasks-per-node=1' runs it through `ibroute run`; --run-report uses\n"
      "the report of an earlier `ibroute run -o FILE` of the same fabric.");
  c->add_option("--db", o->db, "fabric database (scan it first: ibroute scan)")->capture_default_str();
  c->add_option("--scan", o->scan, "scan id (default: the newest)");
  c->add_option("--expect", o->expect, "expectation file (JSON)")->required();
  c->add_flag("--rescan", o->rescan, "scan the fabric first (ibroute scan into --db), then judge that scan");
  c->add_option("--scan-arg", o->scan_args, "extra argument for `ibroute scan` (repeatable), e.g. --scan-arg=-C --scan-arg=mlx5_0");
  c->add_option("--hosts", o->hosts, "hosts in rank order: a,b,c, node[001-100] (Slurm) or @FILE, each a node description, hostname, node-name-map name, GUID or LID (default: all, in name order)");
  c->add_option("--senders", o->senders, "two groups instead of all-to-all: the hosts that send (as --hosts), with --receivers");
  c->add_option("--receivers", o->receivers, "two groups: the hosts that receive from every sender");
  c->add_flag("--shifts-only", o->shifts_only, "plan only the shifts of the rank order (as plan --shifts-only): is the all-to-all congestion-free as N-1 permutations");
  c->add_option("--order", o->order,
                "rank order of the plan: name (as given), topology (by leaf and port), auto (name; topology when that "
                "leaves a link over the bound, the better kept)")
      ->check(CLI::IsMember({"name", "topology", "auto"}))
      ->capture_default_str();
  c->add_flag("--simulate", o->simulate, "play the plan on the scanned fabric instead of running it");
  c->add_option("--launch", o->launch, "launcher prefix for `ibroute run`; {ranks} = number of hosts");
  c->add_option("--run-arg", o->run_args, "extra argument for `ibroute run` (repeatable), e.g. --run-arg=--rounds=10");
  c->add_option("--run-report", o->run_report, "use this `ibroute run -o` report instead of running");
  c->add_option("--message-size", o->message_size, "bytes per transfer of the plan (or message_size in the expectation)")
      ->capture_default_str();
  c->add_option("--rate", o->rate, "per-node rate of the plan: 5G or 5GB/s (bytes), 5GiB/s, or 40Gb/s (bits); default: the most the fabric carries");
  c->add_option("--report", o->report, "HTML report to write")->capture_default_str();
  c->add_flag("--json", o->json, "print the report data as JSON");
  return [o] { return run_accept(*o); };
}

}  // namespace ibroute::cli
