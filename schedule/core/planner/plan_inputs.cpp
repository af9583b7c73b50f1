// What the strategies share, decided once per plan: the methods, the least time, the ring.
#include <cmath>

#include "ibroute/schedule/efficiency.hpp"
#include "strategies.hpp"

namespace ibroute::schedule {

namespace {

// Which ring the all-to-all's shifts run over: the given order unless its shifts, estimated from
// a sample, take more than `gain` times the least possible time and another ring's take at
// most ring_better times as long. A sample of 32 shifts costs a few hundredths of the full plan.
NamedRing choose_ring(const PlanInputs& in) {
  PlanOptions quiet = in.opt;
  quiet.progress = nullptr;
  auto estimate = [&](const NamedRing& named) {
    const Ring& r = named.ring;
    const std::vector<size_t> shifts = sample_shifts(r.size, in.policy.ring_sample);
    std::vector<Phase> phases = ring_phases(r, shifts);
    if (phases.empty()) return 0.0;
    Planned p = solve_phases(in.ctx, in.table, in.hosts, in.leaves, std::move(phases), quiet, in.primary, in.secondary,
                             0, 0, nullptr, &r);
    return p.total() * static_cast<double>(r.size - 1) / static_cast<double>(shifts.size());
  };
  NamedRing best = given_ring(in.n);
  if (in.n < 8) return best;
  const double plain = estimate(best);
  if (plain <= in.least * in.policy.gain) return best;
  double best_time = plain * in.policy.ring_better;
  std::vector<NamedRing> rings =
      candidate_rings(in.ctx, in.hosts, in.leaves, std::min(in.n + in.n / 8 + 8, static_cast<size_t>(plain)));
  for (size_t k = 0; k < rings.size(); ++k) {  // the samples report as one stage of their own
    if (in.opt.progress) in.opt.progress("rings", k, rings.size());
    const double t = estimate(rings[k]);
    if (t < best_time) best_time = t, best = std::move(rings[k]);
  }
  return best;
}

}  // namespace

PlanInputs::PlanInputs(const EvalContext& c, const OptionTable& t, const std::vector<Host>& h, const Leaves& l,
                       const std::vector<int32_t>& snd, const std::vector<int32_t>& rcv, const PlanOptions& o,
                       const PlannerPolicy& p)
    : ctx(c),
      table(t),
      hosts(h),
      leaves(l),
      opt(o),
      policy(p),
      senders(snd),
      receivers(rcv),
      n(h.size()),
      leaf_paths{&t, unit_capacities(c)},
      slots(leaf_slots(c, h, l)) {
  transfers =
      all_to_all() ? static_cast<uint64_t>(n) * (n - 1) : static_cast<uint64_t>(senders.size()) * receivers.size();
  primary = opt.method;
  if (primary == Method::automatic)
    primary = ctx.structure.two_level && !ctx.structure.top.empty() && n >= 64 ? Method::structure : Method::free;
  secondary =
      primary == Method::structure ? Method::free : (ctx.structure.two_level ? Method::structure : Method::free);
  may_pack = n <= policy.max_packing_hosts && opt.packing;
  may_interleave = !all_to_all() && opt.packing;
  // Over the tables only where packing may follow: a walk of every route. Where the shifts are
  // already near that bound, packing cannot win (on a 1 350-host director under OpenSM's updn it
  // spent 30 s to find so); without packing the fabric's bound (host links and cuts) costs no walk.
  least = least_time(ctx, hosts, senders, receivers, may_pack).time;
  for (size_t x = 0; x + 1 < ctx.structure.per_level.size() && ctx.structure.per_level[x].common_up > 1; ++x)
    period *= static_cast<size_t>(ctx.structure.per_level[x].common_up);
  slow_slots = slowest_host_slots(ctx, hosts);
  given = given_ring(n);
  ring = all_to_all() && opt.packing ? choose_ring(*this) : given;
}

}  // namespace ibroute::schedule
