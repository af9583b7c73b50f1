// Packing and compaction as the strategies use them, each within the search's one work budget.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "phase_compaction.hpp"
#include "strategies.hpp"

namespace ibroute::schedule {

namespace {

// A packing's budget: base + per transfer waiting, at most packing_work_max and the work left.
PackWork pack_work(const PlanSearch& search, size_t waiting) {
  const PlanOptions& opt = search.in.opt;
  PackWork work;
  work.budget = std::min({opt.packing_work_max,
                          opt.packing_work_base + opt.packing_work_per_transfer * static_cast<uint64_t>(waiting),
                          search.work_left()});
  if (opt.progress) work.progress = [&opt](size_t placed, size_t total) { opt.progress("pack", placed, total); };
  return work;
}

void tally_packing(PlanSearch& search, const PackWork& work) {
  search.work_spent += work.work;
  search.tally.packing_work += work.work, search.tally.packing_budget += work.budget;
  ++search.tally.packings, search.tally.packings_over_budget += work.over;
}

// The capacities a packing fills: of one-slot phases (the inputs'), or of phases `slots` long.
struct PhaseUnits {
  int slots = 1;
  const Leaves* leaves;
  const std::vector<int>* cap;
};
// Phases `slots` long: the leaves' up-links and every link counted for that time.
struct LongPhases {
  LongPhases(const PlanInputs& in, int slots)
      : slots(std::max(slots, 1)),
        leaves(slots > 1 ? Leaves(in.ctx, in.hosts, slots) : in.leaves),
        cap(slots > 1 ? unit_capacities(in.ctx, slots) : in.leaf_paths.cap) {}
  PhaseUnits units() const { return {slots, &leaves, &cap}; }
  int slots;
  Leaves leaves;
  std::vector<int> cap;
};

// `waiting` packed into `phases` (those there, then new ones) within the work left, in fewer
// than `beat` slots; false with `why` where it stopped short.
bool pack(PlanSearch& search, std::vector<Transfer> waiting, std::vector<Phase>& phases, double beat, std::string& why,
          const PhaseUnits& units) {
  const PlanInputs& in = search.in;
  PackWork work = pack_work(search, waiting.size());
  const bool done = pack_phases(in.ctx, in.table, in.hosts, *units.leaves, *units.cap, std::move(waiting), phases,
                                beat < 1e18 ? static_cast<size_t>(beat) : SIZE_MAX, &work, units.slots);
  tally_packing(search, work);
  if (work.over)
    why = (work.work > work.budget ? "packing over its work budget (" : "packing projected past its work budget (") +
          std::to_string(work.work) + " spent of " + std::to_string(work.budget) + ")";
  else if (!done)
    why = "packing could not take fewer than " + std::to_string(static_cast<long long>(beat)) +
          " slots (the best so far, before its compaction)";
  return done;
}

// A packing's phases compacted where they take more than compaction_from times the least time: the
// emptiest emptied into the others while that works, within a budget per transfer of the exchange
// and the work left. Returns the phases removed. A phase looked at costs 1 + the transfer's options
// (phase_compaction.cpp): the budget per transfer grows with the options per transfer, so that the
// search goes as far as at one path (LMC 0) before the cap, which bounds its time, stops it. The
// cap shrinks by the same factor: a unit over many options still takes longer, and at LMC 2 two
// capped compactions of 700 M took a 1 440-host plan past a minute (docs/planner.md#compaction).
size_t compact(PlanSearch& search, std::vector<Phase>& phases, const PhaseUnits& units) {
  const PlanInputs& in = search.in;
  const PlanOptions& opt = in.opt;
  const double least = in.least / units.slots;  // in phases of units.slots
  if (!opt.compaction || static_cast<double>(phases.size()) <= least * in.policy.compaction_from) return 0;
  CompactWork work;
  const double scale = (1.0 + std::max(1.0, in.table.mean_options())) / 2.0;  // 1 at one path
  const auto per_transfer = static_cast<uint64_t>(static_cast<double>(opt.compaction_work_per_transfer) * scale);
  const auto cap = static_cast<uint64_t>(static_cast<double>(opt.compaction_work_max) / scale);
  work.budget = std::min({cap, per_transfer * in.transfers, search.work_left()});
  const size_t before = phases.size();
  if (opt.progress)
    work.progress = [&](size_t removed, size_t) {
      opt.progress("compact", removed, before - static_cast<size_t>(least));
    };
  const size_t removed =
      compact_phases(in.table, *units.cap, phases, static_cast<size_t>(std::ceil(least - 1e-9)), work);
  search.tally.phases_compacted += removed, search.tally.compaction_work += work.work;
  search.work_spent += work.work;
  return removed;
}

// A candidate's phases timed, with the tallies from their routes (the solve's no longer hold:
// packing and compaction move transfers between phases).
void time_phases(PlanSearch& search, Candidate& c) {
  const PlanInputs& in = search.in;
  const LoadReport load = evaluate(in.ctx, in.hosts, c.plan.phases, false, in.opt.progress);
  c.plan.time = load.phase_time;
  c.plan.st.unroutable = load.broken, c.plan.st.phases_over = 0, c.plan.st.worst_overflow = 0;
  for (int worst : load.phase_max) {
    c.plan.st.phases_over += worst > in.ctx.structure.transfer_bound;
    c.plan.st.worst_overflow = std::max(c.plan.st.worst_overflow, worst - in.ctx.structure.transfer_bound);
  }
}

// The packed phases as a plan, the empty ones dropped; compaction waits (compact_pending): of
// the packings a search makes, only the one that is best before compaction is compacted.
Candidate finish_packed(PlanSearch& search, std::vector<Phase> phases, Planned solved, const PhaseUnits& units) {
  const PlanInputs& in = search.in;
  std::erase_if(phases, [](const Phase& ph) {
    return std::all_of(ph.dst.begin(), ph.dst.end(), [](int32_t d) { return d < 0; });
  });
  Candidate c;
  c.plan.methods_used[0] = solved.methods_used[0], c.plan.methods_used[1] = solved.methods_used[1];
  c.plan.phases = std::move(phases);
  time_phases(search, c);
  c.uncompacted = c.plan.total(), c.compact_slots = units.slots;
  c.senders = in.senders, c.receivers = in.receivers;
  return c;
}

}  // namespace

std::optional<Candidate> packed_plan(PlanSearch& search, std::vector<Phase> phases, std::vector<Transfer> extra,
                                     const Ring* visit, double beat, std::string& why, int slots, bool spread) {
  const PlanInputs& in = search.in;
  // The composition, each phase at what its links carry in `slots`: what does not fit waits
  // (first every leaf's excess), then is packed into phases of its own.
  const LongPhases length(in, slots);
  std::vector<Transfer> waiting;
  Planned solved = solve_phases(in.ctx, in.table, in.hosts, length.leaves, std::move(phases), in.opt, in.primary,
                                in.secondary, 0, 0, &waiting, visit, slots, spread);
  waiting.insert(waiting.end(), extra.begin(), extra.end());
  std::vector<Phase> out = std::move(solved.phases);
  if (!pack(search, std::move(waiting), out, beat, why, length.units())) return std::nullopt;
  return finish_packed(search, std::move(out), std::move(solved), length.units());
}

std::optional<Candidate> packed_whole_plan(PlanSearch& search, double beat, std::string& why, int slots) {
  const PlanInputs& in = search.in;
  std::vector<int32_t> from = in.senders, to = in.receivers;
  if (in.all_to_all()) from.resize(in.n), std::iota(from.begin(), from.end(), 0), to = from;
  std::vector<Transfer> all;
  all.reserve(from.size() * to.size());
  for (size_t a = 0; a < from.size(); ++a)  // each sender's receivers from its own place on: no two start alike
    for (size_t k = 0; k < to.size(); ++k)
      if (const int32_t d = to[(a + k) % to.size()]; d != from[a]) all.push_back({from[a], d});
  std::vector<Phase> phases;
  const LongPhases length(in, slots);
  if (!pack(search, std::move(all), phases, beat, why, length.units())) return std::nullopt;
  return finish_packed(search, std::move(phases), Planned{}, length.units());
}

void compact_pending(PlanSearch& search, Candidate& c) {
  if (c.compact_slots == 0) return;
  const LongPhases length(search.in, c.compact_slots);
  c.compact_slots = 0;
  if (compact(search, c.plan.phases, length.units()) > 0) time_phases(search, c);
}

}  // namespace ibroute::schedule
