#include "round_robin.hpp"

#include <stdexcept>

namespace ibroute::workflow {

using namespace ibroute::schedule;

namespace {

// Shift k over `order`: the rank at position i sends to the one at i + k.
Phase shift_in_order(const std::vector<int32_t>& order, size_t k) {
  const size_t n = order.size();
  Phase ph{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)};
  for (size_t i = 0; i < n; ++i) ph.dst[static_cast<size_t>(order[i])] = order[(i + k) % n];
  return ph;
}

}  // namespace

std::vector<Phase> round_robin_phases(const fabric::Fabric& f, const Exchange& x, const RoundRobinShape& shape) {
  const size_t n = x.hosts.size();
  if (shape.order && shape.order->size() != n) throw std::logic_error("round_robin_phases: an order of another size");
  if (x.groups() && (shape.order || shape.only))
    throw std::logic_error("round_robin_phases: two groups take neither an order nor a sample");
  std::vector<Phase> phases;
  auto shift = [&](size_t k) { phases.push_back(shape.order ? shift_in_order(*shape.order, k) : shift_phase(n, k)); };
  if (x.groups())
    phases = group_phases(n, x.senders, x.receivers);
  else if (shape.only)
    for (size_t k : *shape.only) shift(k + 1);
  else
    for (size_t k = 1; k < n; ++k) shift(k);
  apply_lid_policy(f, x.hosts, phases, shape.lids, shape.seed);
  return phases;
}

RoundRobin measure_round_robin(const EvalContext& ctx, const Exchange& x, const RoundRobinRequest& r) {
  const std::vector<Phase> phases = round_robin_phases(ctx.fabric, x, r.shape);
  RoundRobin out;
  out.load = evaluate(ctx, x.hosts, phases, r.fair_share, r.progress);
  out.figures = r.least ? figures_over(ctx, *r.least, x, out.load) : exchange_figures(ctx, x, out.load);
  return out;
}

}  // namespace ibroute::workflow
