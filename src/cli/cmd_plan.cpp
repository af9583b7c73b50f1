// ibroute plan: a congestion-free all-to-all schedule, stored in the database.
#include <cmath>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/lower_bound.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"
#include "options.hpp"
#include "plan_pipeline.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

struct PlanCliOptions : StoreOptions {
  std::string hosts, senders, receivers;
  bool all = false;
  std::string order = "name";
  std::string message_size = "1MiB";
  std::string rate;
  std::string method = "auto";
  std::string name;
  bool replace = false;
  bool shifts_only = false;
  std::string lids = "all";
};

// The stored name: --name, else a2a-N-scanID (two groups: groups-S-R-scanID), made unique.
std::string schedule_name(store::FabricStore& store, const PlanCliOptions& o, const ScanContext& c, const Exchange& x) {
  if (!o.name.empty()) return o.name;
  const std::string stem =
      (x.groups() ? "groups-" + std::to_string(x.senders.size()) + "-" + std::to_string(x.receivers.size())
                  : "a2a-" + std::to_string(x.hosts.size())) +
      "-scan" + std::to_string(c.scan_id);
  std::string name = stem;
  for (int k = 2; store.schedule_exists(name); ++k) name = stem + "-" + std::to_string(k);
  return name;
}

// How the planner found its plan: the probe's shortcuts and every entry of its strategy table
// (docs/planner.md#the-strategy-table) with its result, work and why it stopped.
nlohmann::json solver_json(const PlanStats& st) {
  nlohmann::json tried = nlohmann::json::array();
  for (const StrategyOutcome& o : st.tried)
    tried.push_back({{"name", o.name},
                     {"outcome", o.outcome},
                     {"why", o.why},
                     {"slots", o.slots > 0 ? nlohmann::json(o.slots) : nlohmann::json(nullptr)},
                     {"unroutable", o.unroutable},
                     {"work", o.work},
                     {"seconds", o.seconds}});
  return {{"greedy_start", st.greedy_start},
          {"repair_skipped", st.repair_skipped},
          {"tried", std::move(tried)},
          {"work_budget", st.work_budget},
          {"work_spent", st.work_spent}};
}

nlohmann::json plan_json(const ScanContext& c, const Exchange& x, const PlanOutcome& p, int64_t id, double rate_asked,
                         const std::optional<RoutingAdvice>& advice) {
  const Schedule& s = p.schedule;
  const LoadReport& load = p.load;
  nlohmann::json over = nlohmann::json::array();
  for (size_t i = 0; i < load.over.size() && i < 50; ++i)
    over.push_back({{"phase", load.over[i].phase},
                    {"link", link_name(c, load.over[i].link)},
                    {"load", load.over[i].load},
                    {"capacity", load.over[i].capacity}});
  const double fair =
      x.groups() ? load.mean_gbps : std::min(load.mean_gbps, p.bound_gbps);  // an estimate, never above the bound
  return {{"schedule_id", id},
          {"phase_max_histogram", phase_max_histogram(load.phase_max)},
          {"name", s.name},
          {"scan_id", c.scan_id},
          {"hosts", x.hosts.size()},
          {"senders", x.groups() ? x.senders.size() : x.hosts.size()},
          {"receivers", x.groups() ? x.receivers.size() : x.hosts.size()},
          {"phases", s.phases.size()},
          {"method", s.method},
          {"composition", p.stats.composition.empty() ? "shifts of the given order" : p.stats.composition},
          {"bound", s.bound},
          {"max_load", load.max_load},
          {"lower_bound",
           {{"worst", p.least.worst},
            {"phase", p.least.phase},
            {"where", p.least.where},
            {"phases", p.least.phases},
            {"seconds", p.bound_seconds}}},
          {"phases_over_bound", p.stats.phases_over},
          {"packing",
           {{"tried", p.stats.packings},
            {"over_budget", p.stats.packings_over_budget},
            {"work", p.stats.packing_work},
            {"budget", p.stats.packing_budget},
            {"phases_compacted", p.stats.phases_compacted},
            {"compaction_work", p.stats.compaction_work}}},
          {"solver", solver_json(p.stats)},
          {"congested", load.congested},
          {"congested_share", load.congested_share()},
          {"unroutable", p.stats.unroutable},
          {"broken", load.broken},
          {"unknown", load.unknown},
          {"over", over},
          {"fair_share",
           {{"mean_gbps", fair}, {"min_gbps", load.min_gbps}, {"bound_gbps", p.bound_gbps}, {"estimate", true}}},
          {"timing",
           {{"message_size", s.timing.message_size},
            {"rate", s.timing.rate},
            {"rate_asked", rate_asked > 0 ? nlohmann::json(rate_asked) : nlohmann::json(nullptr)},
            {"slot_s", s.timing.slot_s},
            {"round_s", planned_seconds(s)},
            {"max_rate", p.fastest_rate}}},
          {"seconds", p.plan_seconds},
          {"stage_seconds", p.stage_seconds()},
          {"efficiency", efficiency_json(p.figures.efficiency, advice ? &*advice : nullptr)},
          {"phase_slots", s.slots.empty() ? nlohmann::json(nullptr) : nlohmann::json(slot_histogram(s.slots))},
          {"round_robin_base",
           {{"max_load", p.round_robin.max_load},
            {"congested_share", p.round_robin.congested_share()},
            {"efficiency", p.round_robin_efficiency.value},
            {"planned_time", p.round_robin_efficiency.planned},
            {"broken", p.round_robin.broken},
            {"returned", p.planner_efficiency > 0},
            {"sampled_phases", p.round_robin_sampled ? nlohmann::json(p.round_robin_sampled) : nlohmann::json(nullptr)},
            {"planner_efficiency",
             p.planner_efficiency > 0 ? nlohmann::json(p.planner_efficiency) : nlohmann::json(nullptr)}}}};
}

void print_plan(const ScanContext& c, const Exchange& x, const PlanOutcome& p, int64_t id, double rate_asked,
                const std::optional<RoutingAdvice>& advice) {
  const Schedule& s = p.schedule;
  const LoadReport& load = p.load;
  const std::string who = x.groups()
                              ? std::to_string(x.senders.size()) + " senders to " + std::to_string(x.receivers.size()) +
                                    " receivers (" + std::to_string(x.hosts.size()) + " hosts)"
                              : std::to_string(x.hosts.size()) + " hosts";
  std::printf("schedule '%s' (id %lld) for scan %lld: %s, %zu phases, method %s, planned in %.2f s\n", s.name.c_str(),
              static_cast<long long>(id), static_cast<long long>(c.scan_id), who.c_str(), s.phases.size(),
              s.method.c_str(), p.plan_seconds);
  if (!p.stats.composition.empty())  // the ranks as given, their phases the shifts of another order
    std::printf("  composition      %s\n", p.stats.composition.c_str());
  if (p.planner_efficiency > 0)
    std::printf(
        "  returned         round-robin in this order with base LIDs: the planner's own schedule reached only %.3f\n",
        p.planner_efficiency);
  std::fputs(efficiency_text(p.figures.efficiency, advice ? &*advice : nullptr).c_str(), stdout);
  // Where the work budget stopped the bound short, it is over the phases it reached (still a bound).
  const std::string bounded = p.least.phases < s.phases.size() && p.least.phases > 0
                                  ? " over " + std::to_string(p.least.phases) + " phases, a work budget"
                                  : "";
  std::printf("  worst link load  %d (bound %d, least possible %d%s); %zu of %zu phases above the bound%s\n",
              load.max_load, s.bound, p.least.worst, bounded.c_str(), p.stats.phases_over, s.phases.size(),
              s.slots.empty() ? "" : "; phases timed by their own load");
  if (load.max_load > s.bound && p.least.worst > s.bound)
    std::printf("  least possible   %d with these tables: phase %d, %s\n", p.least.worst, p.least.phase,
                p.least.where.c_str());
  std::printf("  congested        %zu transfers (%.1f %%)%s\n", load.congested, 100 * load.congested_share(),
              p.stats.unroutable ? (", " + std::to_string(p.stats.unroutable) + " with no working route").c_str() : "");
  for (size_t i = 0; i < load.over.size() && i < 5; ++i)
    std::printf("    phase %d: %s carries %d (capacity %d)\n", load.over[i].phase,
                link_name(c, load.over[i].link).c_str(), load.over[i].load, load.over[i].capacity);
  if (x.groups())
    std::printf("  per transfer     %.1f Gb/s estimated by max-min fair sharing of a phase (lowest %.1f)\n",
                load.mean_gbps, load.min_gbps);
  else  // an estimate without the schedule's timing: never above what the leaves' up-links allow
    std::printf(
        "  bound            %.1f Gb/s per node: what the leaves' up-links allow over a whole exchange (%.0f %% of a "
        "host link); "
        "a phase's transfers at once by max-min fair sharing, estimated: %.1f Gb/s\n",
        p.bound_gbps, c.structure.host_gbps > 0 ? 100 * p.bound_gbps / c.structure.host_gbps : 0,
        std::min(load.mean_gbps, p.bound_gbps));
  std::printf(
      "  rate             %s per node%s: %llu-byte messages, a round of %zu phases in %.3g ms (at most %s per node)\n",
      format_rate(s.timing.rate).c_str(),
      rate_asked > 0 ? (" (asked " + format_rate(rate_asked) + ")").c_str() : " (as fast as the links allow)",
      static_cast<unsigned long long>(s.timing.message_size), s.phases.size(), planned_seconds(s) * 1e3,
      format_rate(p.fastest_rate).c_str());
  const std::string sampled = p.round_robin_sampled ? " (estimated from " + std::to_string(p.round_robin_sampled) +
                                                          " of its " + std::to_string(p.round_robin_phases) + " shifts)"
                                                    : "";
  std::printf("  round-robin in the same order with base LIDs: worst link %d, %.1f %% congested, efficiency %s%s%s\n",
              p.round_robin.max_load, 100 * p.round_robin.congested_share(),
              efficiency_figure(p.round_robin_efficiency).c_str(),
              p.round_robin.broken ? (", " + std::to_string(p.round_robin.broken) + " transfers broken").c_str() : "",
              sampled.c_str());
}

int run_plan(const PlanCliOptions& o) {
  if (o.all && !o.hosts.empty()) throw InputError("--all and --hosts exclude each other");
  if ((!o.senders.empty() || !o.receivers.empty()) && o.all)
    throw InputError("--senders/--receivers exclude --hosts and --all");
  PlanRequest req;
  if (!method_from(o.method, req.method)) throw InputError("--method takes auto, free or structure");
  req.packing = !o.shifts_only;
  req.base_lids = o.lids == "base";
  req.message_size = static_cast<uint64_t>(parse_quantity(o.message_size, true, "--message-size"));
  req.rate = o.rate.empty() ? 0 : parse_quantity(o.rate, false, "--rate");

  store::FabricStore store(o.db, store::Access::read_write);
  ScanContext c(store, o.scan);
  c.require_routes("planning");
  const Exchange x = select_exchange(c.fabric, o.hosts, o.senders, o.receivers, o.order == "topology");
  if (x.hosts.size() < 2) throw InputError("a plan needs at least two hosts");
  if (req.method == Method::structure && !c.structure.two_level)
    throw InputError("--method structure needs a two-level tree; this fabric has " +
                     std::to_string(c.structure.levels) + " levels");
  Progress progress;
  req.progress = std::ref(progress);
  PlanOutcome p = plan_exchange(c.eval, x, req);
  progress.finish();
  // Unknown is not lost, nor planned: no rate is printed for transfers whose routes nobody read.
  if (p.load.unknown)
    throw InputError(std::to_string(p.load.unknown) + " of the plan's transfers cross " + unread_tables(c.fabric) +
                     " (ibroute scans --problems " + std::to_string(c.scan_id) +
                     "): their routes are unknown; rescan, or leave those hosts out (--hosts)");
  p.schedule.name = schedule_name(store, o, c, x);
  const int64_t id = store.save_schedule(c.scan_id, p.schedule, p.load.max_load, static_cast<int64_t>(p.load.congested),
                                         p.plan_seconds, o.replace);
  const std::optional<RoutingAdvice> advice = advise_if_limited(c, p.figures.efficiency, x.hosts);
  if (o.json) {
    print_json(plan_json(c, x, p, id, req.rate, advice));
    return kExitOk;
  }
  print_plan(c, x, p, id, req.rate, advice);
  std::printf("export: ibroute export --db %s --schedule %s --format json -o %s.json\n", o.db.c_str(),
              p.schedule.name.c_str(), p.schedule.name.c_str());
  return kExitOk;
}

}  // namespace

Runner setup_plan(CLI::App& app) {
  auto o = std::make_shared<PlanCliOptions>();
  auto* c = add_store_command(app, *o, "plan", kScanAndJson);
  add_hosts_option(c, o->hosts);
  c->add_flag("--all", o->all, "all hosts (the default), in name order");
  add_group_options(c, o->senders, o->receivers);
  c->add_option("--order", o->order, "rank order: name (as given) or topology (by leaf and port)")
      ->check(CLI::IsMember({"name", "topology"}))
      ->capture_default_str();
  add_rate_options(c, o->rate, o->message_size, "as fast as the links allow");
  c->add_option("--method", o->method, "auto, free or structure")->capture_default_str();
  c->add_option("--name", o->name, "schedule name (default: a2a-N-scanID)")->check(printable_name());
  c->add_flag("--replace", o->replace, "replace a schedule of the same name");
  c->add_flag("--shifts-only", o->shifts_only,
              "only the shifts of the rank order as phases (N-1 for an all-to-all; a version-2 file), never packed");
  c->add_option("--lids", o->lids,
                "all: each transfer to whichever of its destination's 2^LMC LIDs (paths) plans best; base: the base "
                "LIDs alone, as at "
                "LMC 0 (for peers that address base LIDs only, or to compare)")
      ->check(CLI::IsMember({"all", "base"}))
      ->capture_default_str();
  return [o] { return run_plan(*o); };
}

}  // namespace ibroute::cli
