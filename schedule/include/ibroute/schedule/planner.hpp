// The congestion-free all-to-all planner. Phases composed by the strategy table
// (docs/planner.md: the shifts — phase k, rank i sends to rank i+k — leaf pairs, packing, ...);
// for every transfer it picks the destination LID, hence the path, so that no link direction
// carries more transfers at once than its capacity (the fabric's bound, 2 on a half fat-tree).
//
// Two methods (docs/background.md#schedules-phases-and-the-choice-of-destination-lid), both ending in the same repair
// of overloaded links:
//  - free: take, transfer by transfer, a route whose links are still free (greedy, fewest
//    choices first); good for small host sets and any topology.
//  - structure: on a two-level tree, per phase the leaf-to-leaf traffic is a bipartite multigraph
//    of degree <= hosts per leaf; colouring its edges with (spine, slot) colours (König: degree
//    many colours suffice) gives every transfer a spine so that no up- or down-link exceeds the
//    bound; then the DLID whose route crosses that spine is taken.
// Where no congestion-free choice exists (links missing, LMC 0, uneven routing) the repair
// minimises the worst link; the evaluation reports which links and phases exceed the bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/fabric/progress.hpp"
#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

enum class Method { automatic, free, structure };
std::string to_string(Method m);
bool method_from(const std::string& s, Method& out);

struct PlanOptions {
  Method method = Method::automatic;
  int repair_rounds = 40;
  unsigned threads = 0;  // phases solved at once; 0: one per core
  bool packing = true;   // where a leaf or group is the bottleneck, let its excess wait and pack it (below)
  // The repair given up where it lowered hardly any probed phase's worst link (PlanStats::repair_skipped);
  // false: it searches every phase (what the tests compare the shortcut with).
  bool repair_probe = true;
  // Where the repair's rounds stop short of a level, a walk over the plateau of equal excess
  // (PhaseSolver::walk; up to 6 000 hosts); false: the rounds alone (what the tests compare it with).
  bool walk = true;
  // In phases longer than a slot (the long shifts), the transfers that wait brought back along
  // augmenting paths (PhaseSolver::readmit); false: every excess transfer waits (the tests compare).
  bool readmit = true;
  bool whole_packing = true;  // and where that misses the least time, pack every transfer from no phases
  // Where a leaf has more hosts than up-links and the shifts miss the least time: the leaves paired
  // (in blocks, or as an open shop) before the shifts are packed; false: the shifts and packing alone.
  bool leaf_pairs = true;
  // Each destination's first LIDs alone (1: its base LID, as at LMC 0; 0: all 2^LMC of them).
  uint32_t max_lids = 0;
  fabric::ProgressFn progress;  // ("plan", phases done, phases)
  // Packing's work budget: base + per transfer waiting, in links of options looked at (a unit is
  // some nanoseconds): a packing that goes or is projected beyond it is abandoned, whatever the
  // machine. A winning packing takes some hundred per transfer, up to about 500 on three levels
  // since its scan is sized by the budget (1 500 random hosts of the 3 456-host tree: 229 M for
  // 776 k waiting; docs/benchmarks.md). (At 1 200 a 512-host tree took 18 s for 0.993; at 600,
  // 2.4 s for 0.981.)
  // At most packing_work_max in all (about 30 s here): millions of transfers waiting (3 456 hosts
  // on minhop tables, where most transfers wait) would otherwise be given minutes.
  uint64_t packing_work_base = 50'000'000, packing_work_per_transfer = 600, packing_work_max = 1'000'000'000;
  // After a packing: its emptiest phases emptied into the others (phase_compaction.hpp), within
  // compaction_work_per_transfer per transfer of the exchange, at most compaction_work_max (a unit
  // is a link moved, or per phase looked at one plus one per option: 700 M took 8 s here and
  // brought a 1 350-host director at LMC 0 from 0.83 to 0.91, 150 M to 0.87; over several paths
  // the cap is divided as the budget per transfer is multiplied: docs/planner.md#compaction).
  bool compaction = true;
  uint64_t compaction_work_per_transfer = 1'000, compaction_work_max = 700'000'000;
  // The one budget every strategy's packing and compaction draw from, in the same units: once
  // spent, the strategies still to come are skipped (PlanStats::tried says so). Three full
  // packings and a compaction.
  uint64_t work_max = 3'700'000'000;
};

// One entry of the planner's strategy table (docs/planner.md#the-strategy-table), as it went.
struct StrategyOutcome {
  std::string name;
  std::string outcome;    // "chosen", "lost" (a plan, not the best), "stopped" (no plan), "skipped"
  std::string why;        // why it was skipped or stopped, or what it lost to
  double slots = 0;       // its plan's time in message-times (0: no plan)
  size_t unroutable = 0;  // its transfers without a working route (a plan with more never wins)
  uint64_t work = 0;      // packing and compaction work it spent (PlanOptions::work_max's units)
  double seconds = 0;
};

struct PlanStats {
  std::string method;       // the one that made the schedule
  std::string composition;  // where not the shifts of the given order: what the phases are
  size_t unroutable = 0;    // transfers with no working route at any DLID
  size_t phases_over = 0;   // phases in which some link exceeds its capacity
  int worst_overflow = 0;   // the largest load - capacity over all links and phases
  // Packing (phase_packing): its work (links of the options looked at, waiting transfers scanned)
  // and budget summed over the compositions packed, and how many of them stopped at their budget.
  uint64_t packing_work = 0, packing_budget = 0;
  size_t packings = 0, packings_over_budget = 0;
  // Compaction after packing: the phases it removed and its work, summed over the packings.
  size_t phases_compacted = 0;
  uint64_t compaction_work = 0;
  // The routing's own choice lost to the greedy start in every phase probed (a routing that congests
  // every phase): the other phases started from the greedy alone, without comparing the two.
  bool greedy_start = false;
  // The repair lowered the worst link of at most one in eight probed phases it searched (the
  // tables, not the choices, set it): the other phases kept their start without a search.
  bool repair_skipped = false;
  // The strategy table in the order tried, and the work budget they shared.
  std::vector<StrategyOutcome> tried;
  uint64_t work_budget = 0, work_spent = 0;
};

// Plans all-to-all among `hosts` in the given rank order.
Schedule plan_all_to_all(const EvalContext& ctx, const std::vector<Host>& hosts, const PlanOptions& opt,
                         PlanStats* stats = nullptr);

// Plans two groups (ranks into `hosts`, distinct within each group, groups may overlap): every
// sender sends to every receiver once, in the phases of group_phases(). Both empty: all-to-all.
Schedule plan_groups(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<int32_t>& senders,
                     const std::vector<int32_t>& receivers, const PlanOptions& opt, PlanStats* stats = nullptr);

}  // namespace ibroute::schedule
