// One plan pipeline behind plan, accept, analyze's patterns, routing and validate: the hosts an
// exchange names, its plan, the plan's load, its least worst load, its timing at the rate asked,
// its least possible time over the fabric and over the routing tables, its efficiency against
// both, and round-robin with base LIDs in the same order — the baseline a user would run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric_context.hpp"
#include "ibroute/fabric/progress.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/lower_bound.hpp"
#include "ibroute/schedule/planner.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::workflow {

// The hosts of an exchange in rank order and, for two groups, the ranks that send and receive
// (both empty: all-to-all).
struct Exchange {
  std::vector<schedule::Host> hosts;
  std::vector<int32_t> senders, receivers;
  bool groups() const { return !senders.empty() || !receivers.empty(); }
  // Messages the busiest node sends: receivers for two groups, N-1 for an all-to-all.
  size_t max_sends() const { return groups() ? receivers.size() : hosts.empty() ? 0 : hosts.size() - 1; }
};

// From the options every command takes (`--hosts`, or `--senders` with `--receivers`), in the
// order given or by leaf and port (`topology`). InputError on names that are no host.
Exchange select_exchange(const fabric::Fabric& f, const std::string& hosts, const std::string& senders,
                         const std::string& receivers, bool topology);

// What every command says of one exchange's phases: the least possible time (fabric, tables)
// and the efficiency against both, timed by the schedule when there is one.
struct ExchangeFigures {
  schedule::LeastTimes least;
  schedule::Efficiency efficiency;
};
ExchangeFigures exchange_figures(const schedule::EvalContext& ctx, const Exchange& x, const schedule::LoadReport& load,
                                 const schedule::Schedule* timed = nullptr);
// The same over least times already computed for this exchange's hosts and groups.
ExchangeFigures figures_over(const schedule::EvalContext& ctx, const schedule::LeastTimes& least, const Exchange& x,
                             const schedule::LoadReport& load, const schedule::Schedule* timed = nullptr);

struct PlanRequest {
  schedule::Method method = schedule::Method::automatic;
  bool packing = true;     // false: only the shifts of the rank order (--shifts-only)
  bool base_lids = false;  // every transfer to its destination's base LID (--lids base)
  uint64_t message_size = 1 << 20;
  double rate = 0;          // bytes/s per node; 0: as fast as the links allow
  bool fair_share = true;   // the max-min fair estimate of a phase's rates (costs an evaluation)
  bool baseline = true;     // round-robin in the same order, evaluated beside the plan (costs an evaluation)
  bool lower_bound = true;  // the least worst link any choice of DLIDs allows (PlanOutcome::least; 5 s at 10 000 hosts)
  // Above this many transfers, round-robin is first measured on evenly spaced phases holding about
  // as many (PlanOutcome::round_robin_sampled), and whole only where it may beat the plan.
  size_t baseline_sample = 10'000'000;
  fabric::ProgressFn progress;
};

struct PlanOutcome {
  schedule::Schedule schedule;  // timed; its name left to the caller
  schedule::PlanStats stats;
  schedule::LoadReport load;
  schedule::LowerBound least;  // no choice of DLIDs gets the worst link below this
  double fastest_rate = 0;     // bytes/s per node the links allow
  ExchangeFigures figures;
  schedule::LoadReport round_robin;  // the same exchange in the same order with base LIDs
  schedule::Efficiency round_robin_efficiency;
  // > 0: round_robin was measured on this many evenly spaced of its round_robin_phases phases (a
  // big exchange), and its figures are estimates from them.
  size_t round_robin_sampled = 0, round_robin_phases = 0;
  double bound_gbps = 0;  // what the leaves' up-links allow per node over an all-to-all (0: two groups)
  double plan_seconds = 0, bound_seconds = 0;
  // The rest of the pipeline's time: the plan's load, its least possible times (fabric and
  // tables), and the round-robin baselines (their loads, and a better one measured as a plan).
  double load_seconds = 0, least_seconds = 0, baseline_seconds = 0;
  // Those times by name, as plan --json and accept --json give them.
  nlohmann::json stage_seconds() const {
    return {{"planner", plan_seconds},
            {"load", load_seconds},
            {"lower_bound", bound_seconds},
            {"least_times", least_seconds},
            {"baselines", baseline_seconds}};
  }
  // > 0: the planner's own schedule reached only this efficiency, and round-robin in the same
  // order (better) was returned instead.
  double planner_efficiency = 0;
  // Round-robin in the hosts' topology order with base LIDs, where it was measured (all-to-all,
  // packing allowed, that order not the given one): its worst link, or where its look was given
  // up as slower than the plan, the worst of the phases looked at (on a big exchange perhaps only
  // the sample of its shifts that the given order is first measured on). 0: not measured.
  int topology_round_robin_max_load = 0;
};

// Plans `x` (hosts in the rank order to plan in) and measures it. InputError for a rate above
// what the links carry (naming the busiest link) and for fewer than two hosts.
PlanOutcome plan_exchange(const schedule::EvalContext& ctx, const Exchange& x, const PlanRequest& r);

}  // namespace ibroute::workflow
