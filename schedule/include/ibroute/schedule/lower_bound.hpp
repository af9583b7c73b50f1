// How far a plan is from the best possible: a lower bound on the worst switch-link load that any
// choice of DLIDs can reach for given phases, on the fabric's forwarding tables.
#pragma once

#include <string>
#include <vector>

#include "ibroute/fabric/progress.hpp"
#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

struct LowerBound {
  int worst = 0;      // no choice of DLIDs gets the worst switch-link load of these phases below this
  int phase = -1;     // a phase where it is reached (-1 when nothing crosses a switch link)
  std::string where;  // what forces it, e.g. "leaf-3: 6 transfers leave over 2 links"
  size_t phases = 0;  // how many phases were bounded (fewer than given: at_most, or the work budget)
};

// Phases are given by their destinations (Phase::dst; DLIDs are ignored): a transfer may take the
// route to any LID of its destination's port. Per phase and switch, the transfers whose every
// route passes the switch each leave it (and enter it) over one of the links their routes use
// there; the least worst load of that assignment (a b-matching) bounds the phase. Phases are
// bounded on all cores; the result does not depend on their number.
// With `at_most` > 0, only that many evenly spaced phases are bounded: still a true lower bound
// (the worst over some phases is at most the worst over all), cheaper and possibly lower.
// `ceiling` (one per phase, optional): a worst switch-link load known to be reachable in each
// phase with the routes of its transfers' LIDs, e.g. a plan's own where none of its transfers is
// unroutable. A phase's bound cannot exceed its ceiling, so phases are bounded from the highest
// ceiling down and those at or below the best bound so far are skipped: the same worst, and the
// same phase named, as bounding them all, at a fraction of the cost when the plan is close to it.
// Work budget: at most `budget` (kBoundTransfers) transfers are bounded, in that order (highest ceiling
// first). Where the plan is far from its bound (a routing that leaves most links unusable) the
// ceilings prune little and bounding all 100 M transfers of 10 000 hosts takes a minute; the
// phases of the highest ceilings decide the worst. The same phases on any machine. (16 M took 9 s
// of a 10 000-host minhop plan's 70; every all-to-all up to 2 200 hosts stays whole within 5 M.)
constexpr size_t kBoundTransfers = 5'000'000;
LowerBound worst_load_lower_bound(const EvalContext& ctx, const std::vector<Host>& hosts,
                                  const std::vector<Phase>& phases, size_t at_most = 0,
                                  const std::vector<int>* ceiling = nullptr, const fabric::ProgressFn& progress = {},
                                  size_t budget = kBoundTransfers);

}  // namespace ibroute::schedule
