// A composition's phases solved one by one (PhaseSolver), on every core, the result the same for
// any number of threads. docs/planner.md#the-phase-solver. Internal to schedule/core.
#pragma once

#include <cstddef>
#include <vector>

#include "ibroute/schedule/planner.hpp"
#include "option_table.hpp"
#include "phase_packing.hpp"

namespace ibroute::schedule {

// One way of planning the phases: each phase solved on its own (on all cores, the result the same
// for any number of threads), its time and overflow tallied.
struct Planned {
  std::vector<Phase> phases;
  std::vector<double> time;  // per phase, message-times at the host link rate
  PlanStats st;
  size_t methods_used[2] = {0, 0};
  double total() const {
    double t = 0;
    for (double x : time) t += x > 0 ? phase_slot_count(x) : 0;
    return t;
  }
};

// Solves every phase of `phases`. Without `deferred`, each phase aims at its least load (what its
// leaves' up-links allow); with it, first every leaf's excess waits (Leaves::defer_excess), then
// every phase aims at one transfer per host-link rate and what still does not fit waits too, all
// listed in `deferred` in phase order. `ring`: the phases are its shifts, visited in its order.
// `slots`: with `deferred`, phases that long (each link filled to what it carries in that time;
// `leaves` counted for the same length).
// `spread`: with `deferred`, the phases solved in batches, each told who waited in those before, so
// that the ranks that waited least wait (docs/planner.md#who-waits); the same for any number of threads.
Planned solve_phases(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts,
                     const Leaves& leaves, std::vector<Phase> phases, const PlanOptions& opt, Method primary,
                     Method secondary, size_t progress_base, size_t progress_total, std::vector<Transfer>* deferred,
                     const Ring* ring = nullptr, int slots = 1, bool spread = false);

}  // namespace ibroute::schedule
