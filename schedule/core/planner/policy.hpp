// The planner's thresholds, in one place. Each names the section of docs/planner.md that says what
// its strategy does, when it applies and what the value was measured to buy. Internal to schedule/core.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ibroute::schedule {

struct PlannerPolicy {
  // Another strategy is tried where the best plan so far takes more than this times the least
  // possible time (docs/planner.md#when-the-shifts-are-enough).
  double gain = 1.10;
  // Packing holds every waiting transfer: up to this many hosts (docs/planner.md#packing).
  size_t max_packing_hosts = 6000;
  // The leaf pairs only where the tables' least time is within this of the fabric's
  // (docs/planner.md#leaf-pairs).
  double pairs_tables_slack = 1.02;
  // The leaf pairs packed where they miss the least time by more than pairs_enough; the shifts
  // not packed after pairs within pairs_enough (beyond max_whole_packing_hosts hosts) or
  // pairs_enough_small (up to it) of the least time (docs/planner.md#leaf-pairs).
  double pairs_enough = 1.07, pairs_enough_small = 1.01;
  // Every transfer packed from no phases: up to this many hosts, where the best so far misses the
  // least time by more than whole_gain (whole_gain_large from whole_large_from hosts)
  // (docs/planner.md#packing-the-whole-exchange).
  size_t max_whole_packing_hosts = 2500;
  double whole_gain = 1.03, whole_gain_large = 1.05;
  size_t whole_large_from = 1000;
  // A packing's phases compacted where they take more than this times the least time: wherever
  // a phase could go (2 % left the SuperPOD at LMC 2 at 641 slots, compacted 633;
  // docs/planner.md#compaction).
  double compaction_from = 1.0;
  // The shifts in long phases where the tables' least time per shift rounds up to at least this
  // many slots (docs/planner.md#long-shifts).
  int min_long_shift_slots = 2;
  // The scrambled order of the scrambled shifts: any fixed value; the same plan on every run
  // (docs/planner.md#scrambled-shifts).
  uint64_t scramble_seed = 0x1b2003;
  // The ring: a sample of ring_sample shifts per candidate order; another order taken where its
  // sample takes at most ring_better times the given order's (docs/planner.md#rings).
  size_t ring_sample = 32;
  double ring_better = 0.95;
  // Over 2^LMC LIDs, the base LIDs' strategies are candidates too: up to this many hosts
  // (docs/planner.md#base-lids; beyond, the 3 456-host minhop tree took 24 s instead of 12 for
  // the same plan).
  size_t max_base_lid_hosts = 2500;
};

inline constexpr PlannerPolicy kPlannerPolicy{};

}  // namespace ibroute::schedule
