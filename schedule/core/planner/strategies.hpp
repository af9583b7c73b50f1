// The planner's strategy table (docs/planner.md#the-strategy-table): each way of composing the
// exchange's phases an entry {name, skip, build}, tried in order against the best plan so far,
// all drawing on one work budget. Internal to schedule/core.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "leaf_blocks.hpp"
#include "leaf_pairs.hpp"
#include "policy.hpp"
#include "rings.hpp"
#include "solve_phases.hpp"

namespace ibroute::schedule {

// What every strategy reads: the exchange, the tables (`table`: every LID's paths, or the base
// LIDs' alone) and what is decided once for all of them.
struct PlanInputs {
  PlanInputs(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, const Leaves& leaves,
             const std::vector<int32_t>& senders, const std::vector<int32_t>& receivers, const PlanOptions& opt,
             const PlannerPolicy& policy);

  const EvalContext& ctx;
  const OptionTable& table;
  const std::vector<Host>& hosts;
  const Leaves& leaves;
  const PlanOptions& opt;
  const PlannerPolicy& policy;
  std::vector<int32_t> senders, receivers;  // both empty: all-to-all
  size_t n = 0;
  uint64_t transfers = 0;
  Method primary = Method::free, secondary = Method::free;
  bool may_pack = false, may_interleave = false;
  // The least time: over the tables where packing may follow (the links they leave as the only
  // path bound any composition), else over the fabric (host links and cuts: no walk of the routes).
  double least = 0;
  NamedRing given;       // the ranks as given
  NamedRing ring;        // the shifts' order: `given` unless a sample of another order was shorter
  size_t period = 1;     // d-mod-k's: the product of the up-link counts below the top level
  int slow_slots = 1;    // slots of a phase that holds the slowest host's transfer (slowest_host_slots)
  LeafPaths leaf_paths;  // and its `cap`: every link's capacity (unit_capacities), for packing too
  LeafSlots slots;
  // The leaf pairs' order, made once where first asked for (their conditions and their build).
  const NamedRing& pairs_ring() const;

  bool all_to_all() const { return senders.empty() && receivers.empty(); }
  bool on_ring() const { return ring.name != given.name; }

 private:
  mutable std::optional<NamedRing> pairs_ring_;
};

// One strategy's plan.
struct Candidate {
  Planned plan;
  std::string how;          // PlanStats::method's suffix ("" for the plain shifts)
  std::string composition;  // PlanStats::composition (empty: the shifts of the given order)
  std::vector<int32_t> senders, receivers;
  double uncompacted = 0;  // its time before compaction
  int compact_slots = 0;   // > 0: a packing not yet compacted, in phases that many slots long
  // Better: fewer transfers without a route, then less time.
  bool beats(const Candidate& o) const;
};

// The search through the table: the best plan so far, every strategy's time, the shared budget.
struct PlanSearch {
  PlanSearch(PlanInputs& inputs, uint64_t budget) : in(inputs), work_budget(budget) {}
  PlanInputs& in;
  std::optional<Candidate> best;
  std::vector<StrategyOutcome> tried;
  uint64_t work_budget = 0, work_spent = 0;
  std::string prefix;  // run_strategies's: what this search's entries are named with
  PlanStats tally;     // packing and compaction, summed
  // The leaf pairs' phases and what the open shop left over, composed once for the pairs and
  // their packing (its choice of paths is the costly part: 23 s of 64 on 3 200 hosts).
  struct {
    bool built = false;
    NamedRing over;
    std::vector<Phase> phases;
    std::vector<Transfer> leftover;
  } pairs;

  double best_time() const;  // HUGE_VAL before the first plan
  // What a packing must beat: the best so far, here or in the search this one runs within
  // (`outer_best`: a packing that cannot beat it cannot win; abandoned as soon as it cannot). A
  // packing counts its slots before compaction: against a compacted best, its time before
  // compaction (the candidates are compared after).
  double beat() const { return std::min(best ? best->uncompacted : HUGE_VAL, outer_best); }
  double outer_best = HUGE_VAL;
  double time_of(const std::string& name) const;  // a strategy's plan time; HUGE_VAL where it made none
  uint64_t work_left() const { return work_spent < work_budget ? work_budget - work_spent : 0; }
  // The leaf pairs (their best plan, or `pairs` slots) close enough to the least time that
  // neither they nor the shifts are packed.
  bool pairs_enough() const;
  bool pairs_enough(double pairs) const;
};

struct Strategy {
  const char* name;
  // Empty where the strategy applies; else why not.
  std::string (*skip)(const PlanSearch&);
  // Its plan; none where it stopped without one (`why` says why: its work budget, or it could
  // not beat the best so far).
  std::optional<Candidate> (*build)(PlanSearch&, std::string& why);
  bool spends_work;  // packs or compacts: skipped once the work budget is spent
};

// The table, in the order tried (docs/planner.md#the-strategy-table).
const std::vector<Strategy>& strategy_table();

// Runs every entry of `table` in order, each against the best so far; the best plan (the first
// entry always makes one). Every entry's outcome is appended to search.tried, named with `prefix`.
Candidate run_strategies(PlanSearch& search, const std::vector<Strategy>& table, const std::string& prefix = "");

// The phases of a composition: the shifts over `over` (its ring's, the given order's, or the
// groups'), or with `blocks` the leaf pairs (cached in search.pairs). `leftover`: where the pairs'
// leftover transfers go (their last use); without it they follow in phases of their own.
std::vector<Phase> composition_phases(PlanSearch& search, const NamedRing& over, bool blocks,
                                      std::vector<Transfer>* leftover = nullptr);

// Packing steps (packing_steps.cpp): `phases` solved with their excess waiting, the waiting packed
// into phases of their own within the work left, then compacted; a plan only where it takes
// fewer than `beat` slots.
// `slots`: the phases that long, each link filled to what it carries in that time.
// `spread`: who waits spread over the ranks (solve_phases; docs/planner.md#who-waits).
std::optional<Candidate> packed_plan(PlanSearch& search, std::vector<Phase> phases, std::vector<Transfer> extra,
                                     const Ring* visit, double beat, std::string& why, int slots = 1,
                                     bool spread = false);
// A packing's phases compacted (compact_slots > 0): the emptiest emptied into the others within
// the work left, the plan timed again. run_strategies calls it once, for the packing that is best
// before compaction (docs/planner.md#compaction).
void compact_pending(PlanSearch& search, Candidate& c);
// Every transfer packed into phases from none, no shifts; with `slots` > 1 into phases that long
// (each link filled to what it carries in that time: where slow hosts make every phase that long).
std::optional<Candidate> packed_whole_plan(PlanSearch& search, double beat, std::string& why, int slots = 1);

}  // namespace ibroute::schedule
