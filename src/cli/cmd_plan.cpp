// ibroute plan: a congestion-free all-to-all schedule, stored in the database.
#include <cmath>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "fabric_context.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/lower_bound.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"

namespace ibroute::cli {

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

struct PlanCliOptions {
  std::string db = kDefaultDb;
  std::optional<int64_t> scan;
  std::string hosts, senders, receivers;
  bool all = false;
  std::string order = "name";
  std::string message_size = "1MiB";
  std::string rate;
  std::string method = "auto";
  std::string name;
  bool replace = false;
  bool shifts_only = false;
  bool json = false;
};

int run_plan(const PlanCliOptions& o) {
  if (o.all && !o.hosts.empty()) throw InputError("--all and --hosts exclude each other");
  const bool groups = !o.senders.empty() || !o.receivers.empty();
  if (groups && (o.all || !o.hosts.empty())) throw InputError("--senders/--receivers exclude --hosts and --all");
  Method method;
  if (!method_from(o.method, method)) throw InputError("--method takes auto, free or structure");
  const auto message_size = static_cast<uint64_t>(parse_quantity(o.message_size, true, "--message-size"));
  const double rate = o.rate.empty() ? 0 : parse_quantity(o.rate, false, "--rate");

  store::FabricStore store(o.db, false);
  FabricContext c(store, o.scan);
  c.require_routes("planning");
  std::vector<Host> hosts;
  std::vector<int32_t> senders, receivers;
  if (groups) {
    Groups g = select_groups(c.fabric, o.senders, o.receivers, o.order == "topology");
    hosts = std::move(g.hosts), senders = std::move(g.senders), receivers = std::move(g.receivers);
  } else {
    hosts = select_hosts(c.fabric, o.hosts);
    if (o.order == "topology") hosts = topology_order(c.fabric, hosts);
  }
  if (hosts.size() < 2) throw InputError("a plan needs at least two hosts");
  if (method == Method::structure && !c.structure.two_level)
    throw InputError("--method structure needs a two-level tree; this fabric has " + std::to_string(c.structure.levels) + " levels");

  Stopwatch clock;
  PlanStats st;
  Progress progress;
  Schedule s = plan_groups(c.eval, hosts, senders, receivers,
                           {.method = method, .packing = !o.shifts_only, .progress = std::ref(progress)}, &st);
  const double seconds = clock.seconds();
  LoadReport load = evaluate(c.eval, s.hosts, s.phases, true, std::ref(progress));
  Stopwatch lb_clock;
  // How far from the best possible; the plan's own loads cap each phase's bound (pruning) when
  // every transfer of it is routed.
  const LowerBound least = worst_load_lower_bound(c.eval, s.hosts, s.phases, 0, load.broken ? nullptr : &load.phase_max,
                                                   std::ref(progress));
  const double lb_seconds = lb_clock.seconds();
  // Each phase as long as its busiest link needs, at least one message at the rate asked; refuses
  // a rate the fabric cannot carry.
  const double fastest = time_schedule(c.eval, load, message_size, rate, s);
  const LeastTime least_t = least_time(c.eval, hosts, senders, receivers);
  const Efficiency eff = efficiency_of(c.eval, least_t, load, groups ? receivers.size() : hosts.size() - 1, &s);

  std::vector<Phase> rr = groups ? group_phases(hosts.size(), senders, receivers) : shift_phases(hosts.size());
  apply_lid_policy(c.fabric, hosts, rr, LidPolicy::base);
  LoadReport naive = evaluate(c.eval, hosts, rr, false, [&](std::string_view, size_t done, size_t total) {
    progress("round-robin", done, total);
  });
  const Efficiency naive_eff = efficiency_of(c.eval, least_t, naive, groups ? receivers.size() : hosts.size() - 1);
  progress.finish();

  s.name = o.name;
  if (s.name.empty()) {
    const std::string stem = (groups ? "groups-" + std::to_string(senders.size()) + "-" + std::to_string(receivers.size())
                                     : "a2a-" + std::to_string(hosts.size())) + "-scan" + std::to_string(c.scan_id);
    s.name = stem;
    for (int k = 2; store.schedule_exists(s.name); ++k) s.name = stem + "-" + std::to_string(k);
  }
  int64_t id = store.save_schedule(c.scan_id, s, load.max_load, static_cast<int64_t>(load.congested), seconds, o.replace);
  const double bound = groups ? 0 : all_to_all_bound_gbps(c.eval, hosts);  // the bisection bound is an all-to-all's

  nlohmann::json over = nlohmann::json::array();
  for (size_t i = 0; i < load.over.size() && i < 50; ++i)
    over.push_back({{"phase", load.over[i].phase}, {"link", link_name(c, load.over[i].link)}, {"load", load.over[i].load},
                    {"capacity", load.over[i].capacity}});
  nlohmann::json j{{"schedule_id", id},
                   {"phase_max_histogram", phase_max_histogram(load.phase_max)},
                   {"name", s.name},
                   {"scan_id", c.scan_id},
                   {"hosts", hosts.size()},
                   {"senders", groups ? senders.size() : hosts.size()},
                   {"receivers", groups ? receivers.size() : hosts.size()},
                   {"phases", s.phases.size()},
                   {"method", s.method},
                   {"composition", st.composition.empty() ? "shifts of the given order" : st.composition},
                   {"bound", s.bound},
                   {"max_load", load.max_load},
                   {"lower_bound", {{"worst", least.worst}, {"phase", least.phase}, {"where", least.where}, {"seconds", lb_seconds}}},
                   {"phases_over_bound", st.phases_over},
                   {"congested", load.congested},
                   {"congested_share", load.congested_share()},
                   {"unroutable", st.unroutable},
                   {"over", over},
                   {"fair_share", {{"mean_gbps", groups ? load.mean_gbps : std::min(load.mean_gbps, bound)}, {"min_gbps", load.min_gbps}, {"bound_gbps", bound}, {"estimate", true}}},
                   {"timing", {{"message_size", s.timing.message_size}, {"rate", s.timing.rate}, {"rate_asked", rate > 0 ? nlohmann::json(rate) : nlohmann::json(nullptr)},
                               {"slot_s", s.timing.slot_s}, {"round_s", planned_seconds(s)}, {"max_rate", fastest}}},
                   {"seconds", seconds},
                   {"efficiency", efficiency_json(eff)},
                   {"phase_slots", s.slots.empty() ? nlohmann::json(nullptr) : nlohmann::json(slot_histogram(s.slots))},
                   {"round_robin_base", {{"max_load", naive.max_load}, {"congested_share", naive.congested_share()},
                                         {"efficiency", naive_eff.value}, {"planned_time", naive_eff.planned}}}};
  if (o.json) {
    print_json(j);
  } else {
    const std::string who = groups ? std::to_string(senders.size()) + " senders to " + std::to_string(receivers.size()) + " receivers (" +
                                         std::to_string(hosts.size()) + " hosts)"
                                   : std::to_string(hosts.size()) + " hosts";
    std::printf("schedule '%s' (id %lld) for scan %lld: %s, %zu phases, method %s, planned in %.2f s\n", s.name.c_str(),
                static_cast<long long>(id), static_cast<long long>(c.scan_id), who.c_str(), s.phases.size(), s.method.c_str(), seconds);
    if (!st.composition.empty())  // the ranks as given, their phases the shifts of another order
      std::printf("  composition      %s\n", st.composition.c_str());
    std::printf("  efficiency       %.2f = least possible time %.0f / planned %.0f message-times at full speed\n", eff.value,
                eff.least, eff.planned);
    std::printf("  limited by       %s\n", eff.limited_by.c_str());
    std::printf("  worst link load  %d (bound %d, least possible %d); %zu of %zu phases above the bound%s\n", load.max_load, s.bound,
                least.worst, st.phases_over, s.phases.size(), s.slots.empty() ? "" : "; phases timed by their own load");
    if (load.max_load > s.bound && least.worst > s.bound)
      std::printf("  least possible   %d with these tables: phase %d, %s\n", least.worst, least.phase, least.where.c_str());
    std::printf("  congested        %zu transfers (%.1f %%)%s\n", load.congested, 100 * load.congested_share(),
                st.unroutable ? (", " + std::to_string(st.unroutable) + " with no working route").c_str() : "");
    for (size_t i = 0; i < load.over.size() && i < 5; ++i)
      std::printf("    phase %d: %s carries %d (capacity %d)\n", load.over[i].phase, link_name(c, load.over[i].link).c_str(),
                  load.over[i].load, load.over[i].capacity);
    if (groups)
      std::printf("  per transfer     %.1f Gb/s estimated by max-min fair sharing of a phase (lowest %.1f)\n", load.mean_gbps, load.min_gbps);
    else  // an estimate without the schedule's timing: never above what the leaves' up-links allow
      std::printf("  bound            %.1f Gb/s per node: what the leaves' up-links allow over a whole exchange (%.0f %% of a host link); "
                  "a phase's transfers at once by max-min fair sharing, estimated: %.1f Gb/s\n",
                  bound, c.structure.host_gbps > 0 ? 100 * bound / c.structure.host_gbps : 0, std::min(load.mean_gbps, bound));
    std::printf("  rate             %s per node%s: %llu-byte messages, a round of %zu phases in %.3g ms (at most %s per node)\n",
                format_rate(s.timing.rate).c_str(), rate > 0 ? (" (asked " + format_rate(rate) + ")").c_str() : " (as fast as the links allow)",
                static_cast<unsigned long long>(s.timing.message_size), s.phases.size(), planned_seconds(s) * 1e3, format_rate(fastest).c_str());
    std::printf("  round-robin in the same order with base LIDs: worst link %d, %.1f %% congested, efficiency %.2f\n", naive.max_load,
                100 * naive.congested_share(), naive_eff.value);
    std::printf("export: ibroute export --db %s --schedule %s --format json -o %s.json\n", o.db.c_str(), s.name.c_str(), s.name.c_str());
  }
  return kExitOk;
}

}  // namespace

Runner setup_plan(CLI::App& app) {
  auto o = std::make_shared<PlanCliOptions>();
  auto* c = app.add_subcommand("plan", "Plan a congestion-free all-to-all (or two-group) schedule and store it.");
  c->footer(
      "N-1 phases; in phase k rank i sends to rank i+k mod N. Two groups (--senders, --receivers; they\n"
      "may overlap): max(S, R) phases, in phase k sender i sends to receiver i+k mod max(S, R), each\n"
      "receiver getting from at most one sender at a time. For every transfer the planner picks the\n"
      "destination LID (the path) so that no link direction carries more transfers at once than the\n"
      "fabric's bound (2 on a half fat-tree, 1 on a non-blocking tree). Methods: structure (edge colouring\n"
      "of leaf-to-leaf traffic by spine, for two-level trees), free (routes whose links are still free,\n"
      "with ejection chains, any topology), auto (structure on two-level trees of 64+ hosts, else free;\n"
      "the other one too where congestion remains). Where no congestion-free choice exists the worst\n"
      "link is minimised and reported. The rate is checked per source, switch out-port and destination.\n"
      "Every phase aims at its least possible load (what its leaves' up-links allow), not the bound, and\n"
      "lasts as long as that load needs at its links' own rates, and at least one message at --rate: the\n"
      "schedule moves each node's bytes at the rate asked (docs/background.md#the-admission-rule).\n"
      "Where the shifts still take 10 % longer than the least possible time of the exchange (a leaf\n"
      "holding more of the hosts than it has up-links, unequal groups), the groups are interleaved by\n"
      "leaf and the busy leaves' excess transfers wait, packed into phases of their own (--shifts-only: not). Efficiency = least possible time / planned time, in message-times\n"
      "at the host link rate; 'limited by' names the bottleneck: a host link, a leaf's up-links, a link.\n"
      "Exit: 0 planned and stored, 1 planning failed, 2 bad input (hosts, units, a rate above what the fabric carries).");
  c->add_option("--db", o->db, "fabric database")->capture_default_str();
  c->add_option("--scan", o->scan, "scan id (default: the newest)");
  c->add_option("--hosts", o->hosts, "hosts in rank order: a,b,c, node[001-100] (Slurm) or @FILE, each a node description, hostname, node-name-map name, node or port GUID, or LID");
  c->add_flag("--all", o->all, "all hosts (the default), in name order");
  c->add_option("--senders", o->senders, "two groups: the hosts that send (as --hosts), with --receivers");
  c->add_option("--receivers", o->receivers, "two groups: the hosts that receive; every sender sends to every receiver once");
  c->add_option("--order", o->order, "rank order: name (as given) or topology (by leaf and port)")
      ->check(CLI::IsMember({"name", "topology"}))->capture_default_str();
  c->add_option("--message-size", o->message_size, "bytes per transfer: 64KiB, 1MiB (1024^n), 64K, 1MB (1000^n) or bytes")->capture_default_str();
  c->add_option("--rate", o->rate, "per-node rate: 5G or 5GB/s (bytes, 1000^n), 5GiB/s (1024^n) or 40Gb/s, 40Gbit/s (bits); a unit is required; default: as fast as the links allow");
  c->add_option("--method", o->method, "auto, free or structure")->capture_default_str();
  c->add_option("--name", o->name, "schedule name (default: a2a-N-scanID)");
  c->add_flag("--replace", o->replace, "replace a schedule of the same name");
  c->add_flag("--shifts-only", o->shifts_only,
              "only the shifts of the rank order as phases (N-1 for an all-to-all; a version-2 file), never packed");
  c->add_flag("--json", o->json, "print JSON");
  return [o] { return run_plan(*o); };
}

}  // namespace ibroute::cli
