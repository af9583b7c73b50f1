#include "plan_pipeline.hpp"

#include <chrono>

#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/patterns.hpp"

namespace ibroute::workflow {

using namespace ibroute::schedule;

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Exchange select_exchange(const fabric::Fabric& f, const std::string& hosts, const std::string& senders, const std::string& receivers,
                         bool topology) {
  Exchange x;
  if (!senders.empty() || !receivers.empty()) {
    if (!hosts.empty()) throw InputError("--senders/--receivers exclude --hosts");
    Groups g = select_groups(f, senders, receivers, topology);
    x.hosts = std::move(g.hosts), x.senders = std::move(g.senders), x.receivers = std::move(g.receivers);
    return x;
  }
  x.hosts = select_hosts(f, hosts);
  if (topology) x.hosts = topology_order(f, x.hosts);
  return x;
}

ExchangeFigures exchange_figures(const EvalContext& ctx, const Exchange& x, const LoadReport& load, const Schedule* timed) {
  ExchangeFigures out;
  out.least = least_times(ctx, x.hosts, x.senders, x.receivers);
  out.efficiency = efficiency_of(ctx, out.least, load, x.max_sends(), timed);
  return out;
}

PlanOutcome plan_exchange(const EvalContext& ctx, const Exchange& x, const PlanRequest& r) {
  if (x.hosts.size() < 2) throw InputError("a plan needs at least two hosts");
  PlanOutcome o;
  auto t0 = std::chrono::steady_clock::now();
  o.schedule = plan_groups(ctx, x.hosts, x.senders, x.receivers, {.method = r.method, .packing = r.packing, .progress = r.progress}, &o.stats);
  o.plan_seconds = since(t0);
  o.load = evaluate(ctx, o.schedule.hosts, o.schedule.phases, r.fair_share, r.progress);
  t0 = std::chrono::steady_clock::now();
  // The plan's own loads cap each phase's bound (pruning) when every transfer of it is routed.
  o.least = worst_load_lower_bound(ctx, o.schedule.hosts, o.schedule.phases, 0, o.load.broken ? nullptr : &o.load.phase_max, r.progress);
  o.bound_seconds = since(t0);
  // Each phase as long as its busiest link needs, at least one message at the rate asked.
  o.fastest_rate = time_schedule(ctx, o.load, r.message_size, r.rate, o.schedule);
  const Exchange planned{o.schedule.hosts, o.schedule.senders, o.schedule.receivers};
  o.figures = exchange_figures(ctx, planned, o.load, &o.schedule);

  o.bound_gbps = x.groups() ? 0 : all_to_all_bound_gbps(ctx, x.hosts);  // the bisection bound is an all-to-all's
  if (!r.baseline) return o;
  std::vector<Phase> rr = x.groups() ? group_phases(x.hosts.size(), x.senders, x.receivers) : shift_phases(x.hosts.size());
  apply_lid_policy(ctx.fabric, x.hosts, rr, LidPolicy::base);
  o.round_robin = evaluate(ctx, x.hosts, rr, false, [&](std::string_view, size_t done, size_t total) {
    if (r.progress) r.progress("round-robin", done, total);
  });
  o.round_robin_efficiency = efficiency_of(ctx, o.figures.least, o.round_robin, x.max_sends());
  return o;
}

}  // namespace ibroute::workflow
