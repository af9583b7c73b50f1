#include "accept_run.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "accept_checks.hpp"
#include "cabling_plan.hpp"
#include "counter_window.hpp"
#include "diagnosis_report.hpp"
#include "launch.hpp"
#include "routing_advice.hpp"
#include "run_binding.hpp"
#include "run_report_read.hpp"
#include "scan_changes.hpp"
#include "stopwatch.hpp"
#include "text_input.hpp"
#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/link_measures.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/diagnosis.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/simulate.hpp"

namespace ibroute::workflow {

using namespace ibroute::schedule;
using nlohmann::json;

namespace {

std::string fmt_share(const char* f, const Verdict& v) {
  char buf[200];
  std::snprintf(buf, sizeof buf, f, v.controls > 0 ? 100 * v.share / v.controls : 100.0);
  return buf;
}

json load_json(const LoadReport& l) {
  json h = json::object();
  for (auto [load, n] : l.histogram) h[std::to_string(load)] = n;
  return {{"max_load", l.max_load}, {"congested_share", l.congested_share()}, {"histogram", h},
          {"phase_max", phase_max_histogram(l.phase_max)}, {"broken", l.broken}};
}

// Runs `LAUNCH ibroute run ...` and returns the text of its report (the launcher starts one rank per host).
// With `find_rate_limit`, the run searches the rate it can hold (--find-rate) within that skipped share.
// The run reads the ports' counters around itself (its links_measured), once; the tick makes its
// PortXmitWait a share of the time. The report comes back through the database, where rank 0
// stores every run: under srun or a multi-host mpirun rank 0 runs on another node.
std::string launch_run(const AcceptRequest& o, const AcceptHooks& h, store::FabricStore& store, const std::string& schedule, size_t ranks,
                       std::optional<double> find_rate_limit, double tick_ns) {
  const int64_t before = store.last_run_id(), schedule_id = store.schedule_info(schedule).id;
  std::string launch = o.launch;
  for (size_t p; (p = launch.find("{ranks}")) != std::string::npos;) launch.replace(p, 7, std::to_string(ranks));
  std::string cmd = launch + " " + shell_quoted(own_executable()) + " run --db " + shell_quoted(std::filesystem::absolute(o.db).string()) +
                    " --schedule " + shell_quoted(schedule);
  if (tick_ns > 0) cmd += " --xmit-wait-tick " + std::to_string(tick_ns);
  for (const std::string& a : o.run_args) cmd += " " + shell_quoted(a);
  if (find_rate_limit) cmd += " --find-rate --max-skipped " + std::to_string(*find_rate_limit);
  cmd += " 1>&2";  // the run's summary is progress here; accept's own output stays parseable
  if (h.note) h.note("accept: " + cmd);
  const int rc = run_shell(cmd);
  const std::optional<store::RunRow> row = store.newest_run_of(schedule_id, before);
  if (!row)
    throw std::runtime_error("the run stored no report in " + o.db + " (exit status " + std::to_string(rc) +
                             "; rank 0 stores it there: the database must be on a file system every node reaches): " + cmd);
  return row->report_json;
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

// What accept judges the delivery and the links by: a simulation, or a run's report.
struct Delivered {
  std::vector<float> pair;       // Gb/s per (sender, receiver); empty: no heat map
  double node_rate = 0;          // bytes/s, the slowest node (sender)
  std::optional<double> skipped_share, clock_unc_us, sustainable;
  std::optional<size_t> missing_ranks;
  json clock = json::array(), suspects = json::array(), not_ok = json::array();
  uint64_t rounds = 1;           // of the plan, for the planned bytes per link
  double seconds = 0;            // of the run; a simulation: one round of the plan
  std::optional<RunReportInput> run;
  json ran;                      // --run-report: the stored schedule the run ran, which it is judged against
};

Delivered simulated(const FabricContext& c, const Schedule& plan, const LoadReport& load) {
  Delivered d;
  Simulation sim = simulate(c.eval, plan, plan.timing.message_size, &load);
  d.pair = std::move(sim.pair_gbps);
  d.node_rate = sim.node_bytes_per_s;
  d.seconds = planned_seconds(plan);
  return d;
}

// The run's report (from --launch or --run-report), checked value by value (run_report_read.hpp).
Delivered from_run(RunReportInput run, const Schedule& plan) {
  Delivered d;
  const size_t n = plan.hosts.size();
  d.node_rate = run.node_rate;
  if (!plan.all_to_all() && run.node_rates.size() == n) {  // receivers need not send: the slowest sender
    d.node_rate = INFINITY;
    for (int32_t r : plan.senders) d.node_rate = std::min(d.node_rate, run.node_rates[static_cast<size_t>(r)]);
  }
  d.rounds = run.rounds_run ? run.rounds_run : 1;
  d.seconds = run.seconds;
  d.skipped_share = run.skipped_share;
  d.clock_unc_us = run.max_uncertainty_ns / 1000;
  d.clock = std::move(run.clock), d.suspects = std::move(run.suspects), d.not_ok = std::move(run.not_ok);
  d.missing_ranks = run.missing_ranks;
  d.sustainable = run.sustainable_rate;
  // Above 2048 ranks the report carries no per-pair matrix: no heatmap then, not zeros.
  if (run.ranks == n && run.pair_gbps.size() == n * n) d.pair = std::move(run.pair_gbps);
  d.run = std::move(run);
  return d;
}

// 5 and 6: what the links did. A run's own reading of the counters (read once, by the run); for
// an earlier run's report without one, or with --counters snapshots, the scan's last two
// snapshots (`ibroute counters` taken around the traffic); a simulation sent nothing.
struct LinkFacts {
  std::optional<CounterFacts> counters;
  std::optional<CongestionFacts> congestion;
  json measured;
  std::string why;
};

LinkFacts link_facts(store::FabricStore& store, const FabricContext& c, const PlanOutcome& p, const Delivered& d, double tick_ns,
                     const AcceptRequest& o) {
  LinkFacts out;
  auto none = [&](const std::string& why) {
    out.why = why;
    out.measured = {{"measured", false}, {"why", why}};
    return out;
  };
  if (o.counters == "off") return none("not asked for (--counters off)");
  if (o.counters == "auto" && !o.simulate && d.run && d.run->measured()) {
    const std::string between = d.run->links_measured.value("between", std::string("around the run"));
    out.counters = CounterFacts{between, {}};
    out.counters->links = d.run->error_links;
    out.congestion = CongestionFacts{between, d.run->waiting};
    out.measured = d.run->links_measured;
    return out;
  }
  // A run this accept launched read the counters itself (or said why it could not): snapshots in
  // the database are older than that run and say nothing about it. A simulation sent nothing.
  if (o.counters == "auto" && !o.launch.empty()) {
    const std::string why = d.run && d.run->links_measured.is_object() ? d.run->links_measured.value("why", std::string()) : std::string();
    return none(why.empty() ? "the run did not read the ports' counters" : why);
  }
  if (o.counters == "auto" && o.simulate)
    return none("a simulation sends no traffic (--counters snapshots: judge the scan's last two snapshots, taken around traffic that ran outside ibroute)");
  const std::optional<CounterWindow> window = stored_window(store, c, out.why);
  if (!window) {
    out.measured = {{"measured", false}, {"why", out.why}};
    return out;
  }
  const uint64_t size = p.schedule.timing.message_size;
  const fabric::LinkMeasures m = fabric::measure_links(window->deltas, c.links, fabric::planned_bytes(p.load.link_total, size * d.rounds), d.seconds, tick_ns);
  out.measured = links_measured_json(c.fabric, c.links, &*window, &m, out.why, d.rounds, d.seconds, tick_ns);
  out.counters = CounterFacts{window->between, {}};
  out.counters->links = error_ports(c.fabric, c.links, *window);
  out.congestion = CongestionFacts{window->between, waiting_shares(c.fabric, c.links, m)};
  return out;
}

json fabric_json(const AcceptRequest& o, const FabricContext& c) {
  const fabric::FabricStructure& st = c.structure;
  return {{"name", o.db}, {"scan_id", c.scan_id}, {"scanned_at", c.info.started_at}, {"hosts", st.hosts.size()}, {"levels", st.levels},
          {"leaves", st.leaves.size()}, {"top_switches", st.top.size()}, {"oversubscription", st.oversubscription},
          {"transfer_bound", st.transfer_bound}};
}

json plan_json(const FabricContext& c, const AcceptPlan& a, double plan_s) {
  const Schedule& plan = a.chosen.schedule;
  const std::optional<RoutingAdvice> advice = advise_if_limited(c, a.chosen.figures.efficiency, plan.hosts);
  const bool groups = !plan.all_to_all();
  return {{"name", plan.name}, {"hosts", plan.hosts.size()}, {"senders", groups ? plan.senders.size() : plan.hosts.size()},
          {"receivers", groups ? plan.receivers.size() : plan.hosts.size()}, {"order", a.order}, {"orders_tried", a.orders_tried},
          {"method", plan.method}, {"seconds", plan_s}, {"stage_seconds", a.chosen.stage_seconds()}, {"message_size", plan.timing.message_size}, {"rate", plan.timing.rate},
          {"efficiency", efficiency_json(a.chosen.figures.efficiency, advice ? &*advice : nullptr)}};
}

json accept_report(const AcceptRequest& o, const FabricContext& c, const AcceptPlan& a, const Checks& checks,
                   const Delivered& d, const LinkFacts& links) {
  const PlanOutcome& p = a.chosen;
  json plan_load = load_json(p.load);
  plan_load["lower_bound"] = {{"worst", p.least.worst}, {"phase", p.least.phase}, {"where", p.least.where}};
  plan_load["links_over"] = a.over.size();
  plan_load["worst_links"] = a.worst_links;
  json rr_load = load_json(p.round_robin);
  if (p.round_robin_sampled) rr_load["sampled_phases"] = p.round_robin_sampled, rr_load["of_phases"] = p.round_robin_phases;
  return {{"format", "ibroute-accept"}, {"version", 1}, {"created_at", store::now_iso()}, {"accepted", checks.failed == 0},
          {"passed", checks.passed}, {"failed", checks.failed}, {"mode", o.simulate ? "simulate" : "run"}, {"expect_file", o.expect_file},
          {"expectation", o.expect.doc}, {"checks", checks.list}, {"fabric", fabric_json(o, c)},
          {"plan", plan_json(c, a, p.plan_seconds)},
          {"load", {{"plan", plan_load}, {"round_robin", rr_load}}},
          {"rate_per_node", d.node_rate},
          {"all_to_all_bound_gbps", all_to_all_bound_gbps(c.eval, p.schedule.hosts)},  // as analyze names it
          {"clock", d.clock}, {"suspect_links", d.suspects}, {"not_ok", d.not_ok}, {"links_measured", links.measured},
          {"run_schedule", d.ran}};
}

// The suspects a confirmation run can test: links (by GUID and port) and hosts (their own link,
// sending), confidence 0.3 or more, at most three.
std::vector<int32_t> suspect_links(const FabricContext& c, const Schedule& plan, const json& suspects) {
  std::map<std::string, int32_t> node_of;
  for (size_t i = 0; i < c.fabric.nodes.size(); ++i) node_of.emplace(fabric::guid_hex(c.fabric.nodes[i].guid), static_cast<int32_t>(i));
  std::vector<int32_t> out;
  for (const json& s : suspects) {
    if (out.size() >= 3 || s["confidence"].get<double>() < 0.3) break;
    if (s["kind"] == "host" && s.value("rank", json()).is_number_integer()) {
      const Host& h = plan.hosts[static_cast<size_t>(s["rank"].get<int>())];
      out.push_back(c.links.id(h.node, h.port));
    } else if (s.value("guid", json()).is_string() && s.value("port", json()).is_number_integer()) {
      if (auto it = node_of.find(s["guid"].get<std::string>()); it != node_of.end()) out.push_back(c.links.id(it->second, s["port"].get<int>()));
    }
  }
  return out;
}

// Whether suspect `s` is link `link`: a link by its transmitting port, a host by its own link.
bool names_link(const FabricContext& c, const Schedule& plan, const json& s, int32_t link) {
  if (s["kind"] == "host" && s.value("rank", json()).is_number_integer()) {
    const Host& h = plan.hosts[static_cast<size_t>(s["rank"].get<int>())];
    return c.links.id(h.node, h.port) == link;
  }
  return s.value("guid", json()) == fabric::guid_hex(c.fabric.nodes[c.links.node(link)].guid) && s.value("port", json()) == c.links.port(link);
}

// accept --confirm: the suspects' transfers and controls from the same senders run once more; a
// suspect whose transfers are slow again while the controls are not is confirmed, one whose
// transfers run as the controls do is cleared. The list is re-ranked by what the run showed.
void confirm(const AcceptRequest& o, const AcceptHooks& h, store::FabricStore& store, const FabricContext& c, const PlanOutcome& p, json& diagnosis) {
  const std::vector<int32_t> links = suspect_links(c, p.schedule, diagnosis["suspects"]);
  if (links.empty()) {
    diagnosis["confirmation"] = {{"run", false}, {"why", "no suspect of confidence 0.3 or more to confirm"}};
    return;
  }
  Confirmation conf = confirmation_schedule(c.eval, p.schedule, links);
  time_schedule(c.eval, evaluate(c.eval, conf.schedule.hosts, conf.schedule.phases, false), p.schedule.timing.message_size,
                o.rate.empty() ? 0 : parse_quantity(o.rate, false, "--rate"), conf.schedule);
  store.save_schedule(c.scan_id, conf.schedule, 0, 0, 0, true);
  RunReportInput run = parse_run_report(launch_run(o, h, store, conf.schedule.name, conf.schedule.hosts.size(), std::nullopt, 0),
                                        "the report of the confirmation run", conf.schedule.hosts.size());
  json verdicts = json::array();
  for (const Verdict& v : judge_confirmation(c.eval, conf, run.pair_gbps)) {
    const std::string where = link_name(c, v.link);
    const std::string verdict = v.confirmed ? "confirmed" : v.cleared ? "cleared" : "unclear";
    verdicts.push_back({{"link", where}, {"share", v.share}, {"controls", v.controls}, {"verdict", verdict}});
    for (json& s : diagnosis["suspects"])
      if (names_link(c, p.schedule, s, v.link)) {
        s["evidence"].push_back(fmt_share("confirmation run: its transfers at %.0f %% of the controls' rate", v) + " (" + verdict + ")");
        s["confidence"] = v.confirmed ? std::max(0.95, s["confidence"].get<double>()) : v.cleared ? 0.3 * s["confidence"].get<double>() : s["confidence"].get<double>();
      }
  }
  std::stable_sort(diagnosis["suspects"].begin(), diagnosis["suspects"].end(),
                   [](const json& a, const json& b) { return a["confidence"].get<double>() > b["confidence"].get<double>(); });
  diagnosis["confirmation"] = {{"run", true}, {"schedule", conf.schedule.name}, {"verdicts", verdicts}};
}

AcceptPlanRequest plan_request(const AcceptRequest& o) {
  if ((!o.senders.empty() || !o.receivers.empty()) && !o.hosts.empty()) throw InputError("--senders/--receivers exclude --hosts");
  AcceptPlanRequest r{o.hosts, o.senders, o.receivers, o.order, {}};
  if (!method_from(o.method, r.plan.method)) throw InputError("--method takes auto, free or structure");
  r.plan.packing = !o.shifts_only;
  r.plan.message_size = static_cast<uint64_t>((o.expect.message_size ? static_cast<double>(*o.expect.message_size) : parse_quantity(o.message_size, true, "--message-size")));
  r.plan.rate = o.rate.empty() ? 0 : parse_quantity(o.rate, false, "--rate");
  return r;
}

// 4. Does the fabric deliver it? Played, launched, or read from an earlier run's report.
// --run-report: the run is judged against the schedule it ran (its ranks, phases and DLIDs), which
// the report must prove it belongs to, measured here as a plan (its load and figures, its timing as
// it ran); the plan made above stays what the plan checks judged, and the report's "plan".
Delivered delivered_by_report(const AcceptRequest& o, const AcceptHooks& h, store::FabricStore& store, const FabricContext& c,
                              std::optional<PlanOutcome>& ran) {
  // Read once, its pair matrix at its own rank count: the binding then holds it to the schedule's.
  RunReportInput run = parse_run_report(read_file(o.run_report), o.run_report, std::nullopt);
  RunBinding bound = bind_run_report(store, c, run, o.run_report);
  if (!bound.warning.empty() && h.note) h.note("accept: warning: " + bound.warning);
  ran.emplace();
  ran->schedule = std::move(bound.schedule);
  const Schedule& plan = ran->schedule;
  ran->load = evaluate(c.eval, plan.hosts, plan.phases, false);
  ran->figures = exchange_figures(c.eval, Exchange{plan.hosts, plan.senders, plan.receivers}, ran->load, &plan);
  Delivered d = from_run(std::move(run), plan);
  d.ran = {{"schedule", plan.name}, {"planned_on_scan", bound.scan_id}, {"hosts", plan.hosts.size()}, {"phases", plan.phases.size()},
           {"method", plan.method}, {"max_load", ran->load.max_load}, {"efficiency", efficiency_json(ran->figures.efficiency)},
           {"bound_by", bound.warning.empty() ? "scan_id and port GUIDs" : "name and rank count (an older report)"}};
  return d;
}

Delivered deliver(const AcceptRequest& o, const AcceptHooks& h, store::FabricStore& store, AcceptPlan& a, std::optional<PlanOutcome>& ran) {
  Schedule& plan = a.chosen.schedule;
  if (o.simulate) return simulated(*a.context, plan, a.chosen.load);
  if (o.launch.empty()) return delivered_by_report(o, h, store, *a.context, ran);
  store.save_schedule(a.context->scan_id, plan, a.chosen.load.max_load, static_cast<int64_t>(a.chosen.load.congested), a.chosen.plan_seconds, true);
  std::optional<double> limit;
  if (o.expect.min_sustainable_rate) limit = o.expect.max_skipped_share.value_or(0.0);
  const double tick = o.expect.xmit_wait_tick_ns;
  // The run this accept launched, of the schedule it just stored (found by its id): no binding to prove.
  return from_run(parse_run_report(launch_run(o, h, store, plan.name, plan.hosts.size(), limit, tick), "the report of the run", plan.hosts.size()), plan);
}

}  // namespace

void check_accept_modes(const AcceptRequest& o) {
  if (int(o.simulate) + int(!o.launch.empty()) + int(!o.run_report.empty()) != 1)
    throw InputError("give exactly one of --simulate, --launch CMD, --run-report FILE");
  if (o.confirm && o.launch.empty()) throw InputError("--confirm runs the suspects' transfers once more: it needs --launch");
}

AcceptOutcome run_acceptance(const AcceptRequest& o, const AcceptHooks& h) {
  check_accept_modes(o);
  const Expectation& e = o.expect;
  // The cabling plan read first: a plan that does not parse is bad input, before any stage runs.
  std::vector<fabric::Cable> cabling;
  if (!e.cabling.empty()) {
    const std::filesystem::path p(e.cabling);
    cabling = read_cabling_plan(p.is_absolute() || o.expect_file.empty() ? p.string() : (std::filesystem::path(o.expect_file).parent_path() / p).string());
  }
  Stopwatch clock;
  json stages = json::object();  // each stage's seconds: where an accept at 10 000 hosts spends them
  auto progress = [&](std::string_view stage) {
    if (h.progress) h.progress(stage, 0, 0);
  };
  auto hand_over = [&] {
    if (h.hand_over) h.hand_over();
  };
  progress("reading the scan");
  store::FabricStore store(o.db, store::Access::read_write);
  AcceptOutcome out;
  out.context = std::make_unique<FabricContext>(store, o.scan);
  FabricContext& c = *out.context;
  // Judged, but never silently: some switches did not answer, so nodes, tables or routes may be missing.
  if (const std::string w = c.incomplete_warning(); !w.empty() && h.note) h.note("ibroute: warning: " + w);
  c.require_routes("the acceptance test");
  Checks checks;
  const ScanChanges changes = changes_since_previous(store, c);
  check_fabric(e, c.fabric, c.structure, changes, checks);  // 1. Is the fabric what was ordered?
  check_cabling_plan(e, cabling, c.fabric, checks);  // 1b. Is every cable where the plan says?
  check_routing(e, c.fabric, c.structure, checks);  // 2. Is the routing balanced?
  stages["read"] = clock.lap();
  AcceptPlanRequest req = plan_request(o);
  req.plan.progress = h.progress;
  out.plan = plan_for_acceptance(c, req);  // 3. Does a congestion-free all-to-all exist?
  AcceptPlan& a = out.plan;
  stages["plan"] = clock.lap();
  const PlanOutcome& p = a.chosen;
  check_plan(e, {.max_load = p.load.max_load, .least_worst = p.least.worst, .bound = p.schedule.bound, .phases_over = p.stats.phases_over,
                 .phases = p.schedule.phases.size(), .why = a.why, .efficiency = p.figures.efficiency},
             checks);
  if (o.launch.empty()) progress(o.simulate ? "simulating the plan" : "reading the run's report");
  else hand_over();  // the launched run prints its own lines
  Delivered d = deliver(o, h, store, a, out.ran);
  const PlanOutcome& judged = out.judged();  // what the delivery is judged against: the schedule that ran
  stages[o.simulate ? "simulate" : "run"] = clock.lap();
  check_delivery(e, {.simulated = o.simulate, .node_rate = d.node_rate, .skipped_share = d.skipped_share, .clock_uncertainty_us = d.clock_unc_us,
                         .sustainable_rate = d.sustainable, .missing_ranks = d.missing_ranks, .plan_over_bound = !a.over.empty(), .why = a.why},
                     checks);
  const LinkFacts links = link_facts(store, c, judged, d, e.xmit_wait_tick_ns, o);
  check_counters(e, links.counters, links.why, checks);    // 5. Did the links stay clean?
  check_congestion(e, links.congestion, links.why, checks);  // 6. Did they wait for credits?
  progress("diagnosing");
  out.heat = heat_of(c, judged.schedule, d.pair, o.simulate);
  DiagnosisInput why_slow;
  why_slow.plan = &judged.schedule, why_slow.changes = &changes, why_slow.simulated = o.simulate;
  if (!o.simulate) why_slow.pair_gbps = std::move(d.pair);
  if (why_slow.pair_gbps.empty() && d.run && d.run->run_diagnosis && d.run->ranks == judged.schedule.hosts.size())
    why_slow.run = run_diagnosis_of(c, *d.run->run_diagnosis, o.launch.empty() ? o.run_report : "the run's report");
  if (links.counters)
    why_slow.errors = links.counters->links;
  for (const json& l : d.suspects)
    why_slow.bad.push_back({l["link"], l["transfers"], l["skipped"], l["failed"]});
  if (d.run && d.run->node_rates.size() == judged.schedule.hosts.size())
    for (double bytes_per_s : d.run->node_rates) why_slow.node_send_gbps.push_back(bytes_per_s * 8 / 1e9);
  json diagnosis = diagnosis_json(c, std::move(why_slow));
  if (o.confirm) {
    hand_over();  // the confirmation run prints its own lines
    confirm(o, h, store, c, p, diagnosis);
  }
  check_faults(e, diagnosis, o.simulate, checks);  // 7. Is a slow part located?
  out.report = accept_report(o, c, a, checks, d, links);
  out.report["diagnosis"] = std::move(diagnosis);
  stages["diagnose"] = clock.lap();
  out.report["stage_seconds"] = stages;
  return out;
}

}  // namespace ibroute::workflow
