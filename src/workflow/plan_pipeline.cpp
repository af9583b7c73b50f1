#include "plan_pipeline.hpp"

#include <chrono>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "round_robin.hpp"

namespace ibroute::workflow {

using namespace ibroute::schedule;

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The ranks of `hosts` in their topology order (by leaf and port).
std::vector<int32_t> topology_ranks(const fabric::Fabric& f, const std::vector<Host>& hosts) {
  std::unordered_map<int64_t, int32_t> rank;
  for (size_t i = 0; i < hosts.size(); ++i)
    rank.emplace(int64_t{hosts[i].node} << 8 | hosts[i].port, static_cast<int32_t>(i));
  std::vector<int32_t> order;
  order.reserve(hosts.size());
  for (const Host& h : topology_order(f, hosts)) order.push_back(rank.at(int64_t{h.node} << 8 | h.port));
  return order;
}

// Round-robin in the given order on a big exchange (PlanRequest::baseline_sample) is first measured
// on a sample, its figures then estimates (said so): at 10 000 hosts the whole of it took a quarter
// of `plan`. It is measured whole only where that sample does not show it clearly slower than the
// plan, since only then could it be returned instead. "Clearly slower": an estimate below this
// share of the plan's efficiency.
constexpr double kBaselineSampleMargin = 0.9;

// Evenly spaced phases of `phases` total holding about `transfers` of `per_phase` each (at least
// 64; all of them where they hold fewer).
std::vector<size_t> sampled_phases(size_t phases, size_t per_phase, size_t transfers) {
  const size_t count = std::min(phases, std::max<size_t>(64, transfers / std::max<size_t>(1, per_phase)));
  std::vector<size_t> out;
  for (size_t k = 0; k < count; ++k) out.push_back(k * phases / count);
  return out;
}

// The efficiency of the whole exchange, estimated from phases sampled out of `whole`: the sample's
// time scaled to all of them.
Efficiency scaled_efficiency(Efficiency e, size_t sampled, size_t whole) {
  if (sampled == 0 || sampled == whole || e.planned <= 0) return e;
  const double f = static_cast<double>(whole) / static_cast<double>(sampled);
  e.planned *= f;
  e.rate_gbps /= f;
  if (e.value > 0)
    e.value = std::min(1.0, e.least / e.planned), e.value_tables = std::min(1.0, e.least_tables / e.planned);
  return e;
}

// A plan's load, least worst load, timing at the rate asked and figures, from its schedule.
void measure_plan(const EvalContext& ctx, const PlanRequest& r, PlanOutcome& o) {
  auto t0 = std::chrono::steady_clock::now();
  o.load = evaluate(ctx, o.schedule.hosts, o.schedule.phases, r.fair_share, r.progress);
  o.load_seconds = since(t0);
  t0 = std::chrono::steady_clock::now();
  // The plan's own loads cap each phase's bound (pruning) when every transfer of it is routed.
  if (r.lower_bound)
    o.least = worst_load_lower_bound(ctx, o.schedule.hosts, o.schedule.phases, 0,
                                     o.load.broken ? nullptr : &o.load.phase_max, r.progress);
  o.bound_seconds = since(t0);
  ctx.drop_option_table();
  // Each phase as long as its busiest link needs, at least one message at the rate asked.
  o.fastest_rate = time_schedule(ctx, o.load, r.message_size, r.rate, o.schedule);
  const Exchange planned{o.schedule.hosts, o.schedule.senders, o.schedule.receivers};
  t0 = std::chrono::steady_clock::now();
  o.figures = exchange_figures(ctx, planned, o.load, &o.schedule);
  o.least_seconds = since(t0);
}

// Round-robin in the hosts' topology order with base LIDs, as a baseline for the plan `o` (none
// where that is the given order). On a big exchange (`sample` of the given order's shifts, fewer
// than `rr_phases`) first the sample's shifts: where they already take clearly longer than the plan
// (scaled to the whole), it is not made whole (10 000 hosts: 600 MB, and most of its phases
// evaluated before takes_longer_than can tell).
std::vector<Phase> topology_round_robin(const EvalContext& ctx, const Exchange& x, const std::vector<size_t>& sample,
                                        size_t rr_phases, PlanOutcome& o) {
  const std::vector<int32_t> order = topology_ranks(ctx.fabric, x.hosts);
  bool same = true;
  for (size_t i = 0; i < order.size(); ++i) same = same && order[i] == static_cast<int32_t>(i);
  if (same) return {};
  const Efficiency& e = o.figures.efficiency;
  if (sample.size() < rr_phases && e.value > 0) {
    const std::vector<Phase> part = round_robin_phases(ctx.fabric, x, {.only = &sample, .order = &order});
    const double scale = static_cast<double>(sample.size()) / static_cast<double>(rr_phases);
    const LongerThan quick = takes_longer_than(ctx, x.hosts, part, e.planned * scale / kBaselineSampleMargin);
    o.topology_round_robin_max_load = quick.worst;
    if (quick.longer) return {};
  }
  return round_robin_phases(ctx.fabric, x, {.order = &order});
}

// `phases` measured and timed as a plan, instead of the plan `o` where that makes it better
// (every transfer routed, a higher efficiency).
void take_if_better(const EvalContext& ctx, const PlanRequest& r, std::vector<Phase> phases, const char* method,
                    PlanOutcome& o) {
  PlanOutcome alt;
  alt.schedule = o.schedule;
  alt.schedule.phases = std::move(phases), alt.schedule.slots.clear();
  alt.schedule.method = method;
  measure_plan(ctx, r, alt);
  if (alt.load.broken == 0 && alt.figures.efficiency.value > o.figures.efficiency.value + 1e-9) {
    if (o.planner_efficiency == 0) o.planner_efficiency = o.figures.efficiency.value;
    o.schedule = std::move(alt.schedule), o.load = std::move(alt.load), o.least = std::move(alt.least);
    o.fastest_rate = alt.fastest_rate, o.figures = std::move(alt.figures);
  }
}

}  // namespace

Exchange select_exchange(const fabric::Fabric& f, const std::string& hosts, const std::string& senders,
                         const std::string& receivers, bool topology) {
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

ExchangeFigures exchange_figures(const EvalContext& ctx, const Exchange& x, const LoadReport& load,
                                 const Schedule* timed) {
  return figures_over(ctx, least_times(ctx, x.hosts, x.senders, x.receivers), x, load, timed);
}

ExchangeFigures figures_over(const EvalContext& ctx, const LeastTimes& least, const Exchange& x, const LoadReport& load,
                             const Schedule* timed) {
  return {least, efficiency_of(ctx, least, load, x.max_sends(), timed)};
}

PlanOutcome plan_exchange(const EvalContext& ctx, const Exchange& x, const PlanRequest& r) {
  if (x.hosts.size() < 2) throw InputError("a plan needs at least two hosts");
  PlanOutcome o;
  auto t0 = std::chrono::steady_clock::now();
  o.schedule = plan_groups(
      ctx, x.hosts, x.senders, x.receivers,
      {.method = r.method, .packing = r.packing, .max_lids = r.base_lids ? 1u : 0u, .progress = r.progress}, &o.stats);
  o.plan_seconds = since(t0);
  measure_plan(ctx, r, o);
  // Refused before it is stored: a file with such a slot no reader takes (validate, the peers).
  if (!(o.schedule.timing.slot_s <= kMaxSlotSeconds)) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "a rate of %g B/s is too slow for %llu-byte messages: a phase would last %.3g s (at most 1e6 s)",
                  r.rate, static_cast<unsigned long long>(r.message_size), o.schedule.timing.slot_s);
    throw InputError(why);
  }
  o.bound_gbps = x.groups() ? 0 : all_to_all_bound_gbps(ctx, x.hosts);  // the bisection bound is an all-to-all's
  if (!r.baseline) return o;
  t0 = std::chrono::steady_clock::now();
  // Round-robin in the given order with base LIDs, on a big all-to-all first on a sample of its
  // shifts (made alone: a sample of 10 000 hosts' shifts holds a tenth of their memory). Two
  // groups are never sampled: at most a quarter of an all-to-all's transfers.
  const size_t rr_phases = x.groups() ? 0 : x.hosts.size() - 1;
  const std::vector<size_t> sample =
      x.groups() ? std::vector<size_t>{} : sampled_phases(rr_phases, x.hosts.size(), r.baseline_sample);
  const bool sampled = sample.size() < rr_phases;
  RoundRobin rr = measure_round_robin(ctx, x,
                                      {.shape = {.only = sampled ? &sample : nullptr},
                                       .least = &o.figures.least,
                                       .progress = [&](std::string_view, size_t done, size_t total) {
                                         if (r.progress) r.progress("round-robin", done, total);
                                       }});
  o.round_robin = std::move(rr.load);
  if (sampled) o.round_robin_sampled = sample.size(), o.round_robin_phases = rr_phases;
  o.round_robin_efficiency = scaled_efficiency(rr.figures.efficiency, o.round_robin_sampled, rr_phases);
  // Never below the baselines it knows: round-robin in the given order, and (all-to-all) in the
  // hosts' topology order on the same ranks. Where one takes less time, the plan is that one,
  // measured and timed as a plan (kept only if its timed figure is better too). Made again here
  // (a sample, or dropped while the plan was measured), only where it may be better.
  const double plan = o.figures.efficiency.value + 1e-9;
  if (o.round_robin.broken == 0 && o.round_robin_efficiency.value > (sampled ? plan * kBaselineSampleMargin : plan))
    take_if_better(ctx, r, round_robin_phases(ctx.fabric, x), "round-robin", o);
  if (!x.groups() && r.packing) {  // --shifts-only: the shifts of the given order, the compact file
    std::vector<Phase> topo = topology_round_robin(ctx, x, sample, rr_phases, o);
    if (!topo.empty()) {  // a first look without timing, given up once it cannot be better: most orders are not
      // Not shorter than the plan (times are whole message-times); an incomplete plan any order beats.
      const Efficiency& e = o.figures.efficiency;
      const double limit = e.value > 0 ? e.planned - 0.5 : std::numeric_limits<double>::infinity();
      const LongerThan quick = takes_longer_than(ctx, x.hosts, topo, limit);
      o.topology_round_robin_max_load = quick.worst;
      if (!quick.longer) take_if_better(ctx, r, std::move(topo), "round-robin in topology order", o);
    }
  }
  o.baseline_seconds = since(t0);
  return o;
}

}  // namespace ibroute::workflow
