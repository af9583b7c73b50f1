// The strategy table: each entry's conditions and its plan. What each does, when it applies and
// what it was measured to buy: docs/planner.md#the-strategy-table.
#include "strategies.hpp"

#include <chrono>
#include <cmath>

#include "ibroute/schedule/efficiency.hpp"

namespace ibroute::schedule {

namespace {

std::string percent(double factor) { return std::to_string(static_cast<int>(std::lround((factor - 1) * 100))) + " %"; }

const Ring* visit_of(const PlanInputs& in, const NamedRing& over) {
  return over.name != in.given.name ? &over.ring : nullptr;
}

// The composition's phases solved, each at its least load.
Candidate solved(PlanSearch& s, std::vector<Phase> phases, const Ring* visit) {
  const PlanInputs& in = s.in;
  Candidate c;
  c.plan = solve_phases(in.ctx, in.table, in.hosts, in.leaves, std::move(phases), in.opt, in.primary, in.secondary, 0,
                        0, nullptr, visit);
  c.uncompacted = c.plan.total();
  c.senders = in.senders, c.receivers = in.receivers;
  return c;
}

// The shifts' order and how the composition text names it.
const NamedRing& shifts_order(const PlanInputs& in) { return in.on_ring() ? in.ring : in.given; }
std::string shifts_text(const PlanInputs& in) {
  if (!in.on_ring()) return "";
  return "shifts over " + in.ring.name +
         (in.ring.ring.size > in.n ? " (" + std::to_string(in.ring.ring.size - in.n) + " empty: their senders idle)"
                                   : "");
}

std::string within(const PlanSearch& s, double factor, const char* what) {
  return s.best_time() <= s.in.least * factor ? std::string(what) + " within " + percent(factor) + " of the least time"
                                              : "";
}
std::string no_packing(const PlanInputs& in) {
  if (!in.opt.packing) return "packing turned off";
  if (!in.may_pack)
    return "more than " + std::to_string(in.policy.max_packing_hosts) + " hosts (packing holds every transfer)";
  return "";
}

// The shifts' phases: n - 1 of an all-to-all, the larger group's size of two.
size_t shift_count(const PlanInputs& in) {
  return in.all_to_all() ? in.n - 1 : std::max(in.senders.size(), in.receivers.size());
}

// Where the shifts in phases `slots` long leave more waiting than a packing's whole budget
// places, why; else empty. Of the least time, the shifts send `slots` per phase; the rest waits.
std::string waiting_over_budget(const PlanInputs& in, int slots) {
  const PlanOptions& opt = in.opt;
  const double sent = static_cast<double>(shift_count(in)) * slots;
  const double waiting = in.least > sent ? static_cast<double>(in.transfers) * (1 - sent / in.least) : 0;
  if (waiting * static_cast<double>(opt.packing_work_per_transfer) + static_cast<double>(opt.packing_work_base) <=
      static_cast<double>(opt.packing_work_max))
    return "";
  return "about " + std::to_string(static_cast<long long>(waiting)) + " transfers would wait in phases of " +
         std::to_string(slots) + " slot(s), more than a packing's work budget places";
}

// --- shifts: N-1 phases, rank i to rank i+k (over the ring where one was chosen) ---
std::string shifts_skip(const PlanSearch&) { return ""; }
std::optional<Candidate> shifts_build(PlanSearch& s, std::string&) {
  const NamedRing& over = shifts_order(s.in);
  Candidate c = solved(s, composition_phases(s, over, false), visit_of(s.in, over));
  c.how = s.in.on_ring() ? "ring" : "";
  c.composition = shifts_text(s.in);
  return c;
}

// --- leaf pairs: every pair of leaves in blocks or as an open shop (leaf_blocks.hpp) ---
std::string pairs_skip(const PlanSearch& s) {
  const PlanInputs& in = s.in;
  if (!in.opt.leaf_pairs) return "turned off";
  if (!in.all_to_all()) return "two groups: the pairs are an all-to-all's";
  if (std::string why = no_packing(in); !why.empty()) return why;
  if (std::string why = within(s, in.policy.gain, "the best so far is"); !why.empty()) return why;
  if (!leaf_blocks_may_help(in.leaves)) return "no leaf has more hosts than up-links";
  // Where the tables leave the up-links unevenly used (OpenSM's minhop over three levels: 0.83 of
  // the fabric), the blocks lost and took 7 s.
  if (in.least > least_time(in.ctx, in.hosts, in.senders, in.receivers, false).time * in.policy.pairs_tables_slack)
    return "the tables' least time is more than " + percent(in.policy.pairs_tables_slack) + " above the fabric's";
  // Blocks whose leaves hold unequal host counts last as long as their largest pairs.
  const size_t count = leaf_block_phase_count(in.pairs_ring().ring, in.leaves, &in.slots);
  if (static_cast<double>(count) > in.least * in.policy.gain)
    return "their " + std::to_string(count) + " phases miss the least time by more than " + percent(in.policy.gain);
  return "";
}
std::string pairs_how(const PlanInputs& in, const NamedRing& over, std::string* text) {
  const LeafPairsWay way = leaf_pairs_plan(over.ring, in.leaves, &in.slots).way;
  *text = way == LeafPairsWay::open_shop
              ? "leaf pairs as an open shop, each phase's receivers taken where their paths have room"
          : way == LeafPairsWay::blocks
              ? "leaf pairs in blocks, as many transfers per phase as their up-links carry"
              : "leaf pairs in blocks over the leaves' host ports (those not planned: empty slots), as many "
                "transfers per phase as their up-links carry";
  *text += " (" + over.name + ")";
  return way == LeafPairsWay::open_shop ? "leaf-shop" : "leaf-blocks";
}
std::optional<Candidate> pairs_build(PlanSearch& s, std::string&) {
  const NamedRing& over = s.in.pairs_ring();
  Candidate c = solved(s, composition_phases(s, over, true), visit_of(s.in, over));
  c.how = pairs_how(s.in, over, &c.composition);
  if (s.pairs_enough(c.plan.total())) s.pairs = {};  // not packed: their phases no longer needed
  return c;
}

// --- leaf pairs packed: the pairs at one transfer per link, the rest and the leftovers packed ---
std::string pairs_packed_skip(const PlanSearch& s) {
  const double pairs = s.time_of("leaf pairs");
  if (pairs == HUGE_VAL) return "no leaf pairs";
  if (s.pairs_enough()) return "the leaf pairs are close enough to the least time";
  return "";
}
std::optional<Candidate> pairs_packed_build(PlanSearch& s, std::string& why) {
  const NamedRing over = s.pairs.over;
  std::vector<Transfer> leftover;
  std::vector<Phase> phases = composition_phases(s, over, true, &leftover);
  std::optional<Candidate> c =
      packed_plan(s, std::move(phases), std::move(leftover), visit_of(s.in, over), s.beat(), why);
  if (c) c->how = pairs_how(s.in, over, &c->composition) + "+packed";
  return c;
}

// --- interleaved: two groups, each leaf's ranks spread evenly over the lists ---
// Two groups pair the k-th sender with the (k + shift)-th receiver: where a leaf's receivers
// (senders) stand together in the list, a shift brings it more than its up-links carry.
std::string interleave_skip(const PlanSearch& s) {
  if (s.in.all_to_all()) return "an all-to-all: no groups to interleave";
  if (!s.in.opt.packing) return "packing turned off";
  if (s.time_of("shifts") <= s.in.least * s.in.policy.gain)
    return "the shifts are within " + percent(s.in.policy.gain) + " of the least time";
  return "";
}
std::optional<Candidate> interleave_build(PlanSearch& s, std::string&) {
  const PlanInputs& in = s.in;
  std::vector<int32_t> snd = in.leaves.interleave(in.senders), rcv = in.leaves.interleave(in.receivers);
  Candidate c = solved(s, group_phases(in.n, snd, rcv), nullptr);
  c.how = "interleaved";
  c.senders = std::move(snd), c.receivers = std::move(rcv);
  return c;
}

// --- shifts packed: each leaf's excess waits and is packed into phases of its own ---
std::string shifts_packed_skip(const PlanSearch& s) {
  if (std::string why = no_packing(s.in); !why.empty()) return why;
  if (s.pairs_enough()) return "the leaf pairs are close enough to the least time";
  if (std::min(s.time_of("shifts"), s.time_of("interleaved")) <= s.in.least * s.in.policy.gain)
    return "the shifts are within " + percent(s.in.policy.gain) + " of the least time";
  // In one-slot phases, of the least time's slots only one per phase is sent with its shift; the
  // rest waits. Where more would wait than the packing's whole budget places (3 456 hosts on
  // three-level minhop tables: 10 M of 11.9 M, 4 s for no plan), the long phases pack instead.
  return waiting_over_budget(s.in, 1);
}
// The shifts (over the ring where one was chosen) packed in phases `slots` long.
std::optional<Candidate> packed_shifts(PlanSearch& s, std::string& why, int slots, bool spread = false,
                                       double beat = HUGE_VAL) {
  const NamedRing& over = shifts_order(s.in);
  return packed_plan(s, composition_phases(s, over, false), {}, visit_of(s.in, over), std::min(beat, s.beat()), why,
                     slots, spread);
}
std::optional<Candidate> shifts_packed_build(PlanSearch& s, std::string& why) {
  std::optional<Candidate> c = packed_shifts(s, why, 1);
  if (c) c->how = s.in.on_ring() ? "ring+packed" : "packed", c->composition = shifts_text(s.in);
  return c;
}

// --- shifts packed in long phases: where the tables allow no phase under several slots (a pod
// entered by a few dozen links: 264 transfers over 39 links, 6.8 slots on average), each shift
// is given the average rounded up, its links filled to what they carry in that time, and only
// what exceeds it waits to be packed; one-slot phases would hold most transfers back, and phases
// solved alone round every phase up to the next whole load (docs/planner.md#long-shifts) ---
// The least time per shift (0 without shifts): what a bottleneck link carries per shift on average.
double least_per_shift(const PlanInputs& in) {
  const size_t phases = shift_count(in);
  return phases == 0 ? 0 : in.least / static_cast<double>(phases);
}
int long_shift_slots(const PlanInputs& in) {
  if (shift_count(in) == 0) return 1;
  return std::max(static_cast<int>(std::ceil(least_per_shift(in) - 1e-9)), in.slow_slots);
}
std::string long_shifts_skip(const PlanSearch& s) {
  if (std::string why = no_packing(s.in); !why.empty()) return why;
  if (s.pairs_enough()) return "the leaf pairs are close enough to the least time";
  if (std::string why = within(s, s.in.policy.gain, "the best so far is"); !why.empty()) return why;
  if (long_shift_slots(s.in) < s.in.policy.min_long_shift_slots)
    return "the least time allows phases of " + std::to_string(long_shift_slots(s.in)) + " slot(s)";
  return "";
}
std::optional<Candidate> long_shifts_build(PlanSearch& s, std::string& why) {
  const int slots = long_shift_slots(s.in);
  std::optional<Candidate> c = packed_shifts(s, why, slots);
  // Where it misses `gain`, again with who waits spread over the ranks (docs/planner.md#who-waits):
  // where the shifts fill the bottleneck in every phase, the rank that waits most bounds the
  // packing. Not in an all-to-all: there the scrambled shifts (entry 11) follow, spread.
  if (!s.in.all_to_all() && (!c || c->plan.total() > s.in.least * s.in.policy.gain)) {
    std::string stopped;
    std::optional<Candidate> spread = packed_shifts(s, stopped, slots, true, c ? c->uncompacted : HUGE_VAL);
    if (spread && (!c || spread->beats(*c))) c = std::move(spread);
  }
  if (c) {
    c->how = s.in.on_ring() ? "ring+packed-long-shifts" : "packed-long-shifts";
    c->composition = (s.in.on_ring() ? shifts_text(s.in) : std::string("shifts")) + " in phases of " +
                     std::to_string(slots) + " slots, the excess packed";
  }
  return c;
}

// --- scrambled shifts, short phases: where each pair has one path, a shift's load on a bottleneck
// link depends on how the routing's choice of paths aligns with the rank order (a three-level
// minhop tree at LMC 0 in LID order: 0 to 16 transfers per shift, 7.8 on average, so half the
// shifts overflow long phases). In a scrambled order every shift's load is near the average; in
// phases of the average rounded down the bottleneck is full in nearly every shift and what
// exceeds it is packed (docs/planner.md#scrambled-shifts) ---
int scrambled_slots(const PlanInputs& in) {
  return std::max(1, static_cast<int>(std::floor(least_per_shift(in) + 1e-9)));
}
// Where the average rounded down would leave more waiting than a packing places (a 5 184-host
// minhop tree at LMC 2: 5.5 M in phases of 3 slots), the long shifts' length over the scrambled
// order: a tree's hot links then fill evenly, and fewer transfers wait than in the
// topology order's shifts (3 456 hosts under dfsssp at LMC 0: 0.834 -> 0.905 of the tables).
int scrambled_first_slots(const PlanInputs& in) {
  const int shorter = scrambled_slots(in);
  return waiting_over_budget(in, shorter).empty() ? shorter : long_shift_slots(in);
}
std::string scrambled_skip(const PlanSearch& s) {
  if (!s.in.all_to_all()) return "two groups: their shifts follow the groups' order";
  if (std::string why = long_shifts_skip(s); !why.empty()) return why;
  return waiting_over_budget(s.in, scrambled_first_slots(s.in));
}
std::optional<Candidate> scrambled_build(PlanSearch& s, std::string& why) {
  const PlanInputs& in = s.in;
  const NamedRing over = scrambled_ring(in.n, in.policy.scramble_seed);
  std::optional<Candidate> best;
  // One slot shorter each time while the best misses the least time by `gain` and the packing fits.
  for (int slots = scrambled_first_slots(in); slots >= 1; --slots) {
    const double so_far = std::min(s.best_time(), best ? best->plan.total() : HUGE_VAL);
    if (best && (so_far <= in.least * in.policy.gain || !waiting_over_budget(in, slots).empty())) break;
    const double beat = std::min(s.beat(), best ? best->uncompacted : HUGE_VAL);
    std::string stopped;
    std::optional<Candidate> c =
        packed_plan(s, composition_phases(s, over, false), {}, &over.ring, beat, stopped, slots, true);
    if (!c) {
      if (!best) why = stopped;
      break;
    }
    c->how = "scrambled+packed-long-shifts";
    c->composition =
        "shifts over " + over.name + " in phases of " + std::to_string(slots) + " slots, the excess packed";
    best = std::move(c);
  }
  return best;
}

// --- the given order: where the ring misses the least time, the shifts of the ranks as given
// (their packing may do better where a leaf, not the alignment, is the bottleneck) ---
std::string given_skip(const PlanSearch& s) {
  if (!s.in.on_ring()) return "the shifts ran in the given order";
  if (std::string why = no_packing(s.in); !why.empty()) return why;
  if (s.pairs_enough()) return "the leaf pairs are close enough to the least time";
  return within(s, s.in.policy.gain, "the best so far is");
}
std::optional<Candidate> given_build(PlanSearch& s, std::string&) {
  return solved(s, composition_phases(s, s.in.given, false), nullptr);
}
std::string given_packed_skip(const PlanSearch& s) {
  const double given = s.time_of("given order");
  if (given == HUGE_VAL) return "the given order was not tried";
  if (given <= s.in.least * s.in.policy.gain)
    return "the given order's shifts are within " + percent(s.in.policy.gain) + " of the least time";
  return "";
}
std::optional<Candidate> given_packed_build(PlanSearch& s, std::string& why) {
  std::optional<Candidate> c = packed_plan(s, composition_phases(s, s.in.given, false), {}, nullptr, s.beat(), why);
  if (c) c->how = "packed";
  return c;
}

// --- packed whole: every transfer packed from no phases. Where a leaf's up-links or the hosts'
// own links bound the exchange, the shifts send from every host at once and leave the leaf's
// excess for later; packing keeps the bottleneck busy in every phase ---
std::string whole_skip(const PlanSearch& s) {
  const PlanInputs& in = s.in;
  if (std::string why = no_packing(in); !why.empty()) return why;
  if (!in.opt.whole_packing) return "turned off";
  if (in.n > in.policy.max_whole_packing_hosts)
    return "more than " + std::to_string(in.policy.max_whole_packing_hosts) + " hosts";
  const double gain = in.n < in.policy.whole_large_from ? in.policy.whole_gain : in.policy.whole_gain_large;
  if (s.best && s.best->uncompacted <= in.least * gain)
    return "the best so far is within " + percent(gain) + " of the least time";
  return "";
}
std::optional<Candidate> whole_build(PlanSearch& s, std::string& why) {
  std::optional<Candidate> c = packed_whole_plan(s, s.beat(), why);
  if (c) c->how = "packed-whole", c->composition = "every transfer packed into phases (no shifts)";
  return c;
}

// --- packed whole in long phases: where some hosts' links are slower than the host link rate,
// every phase holding one of their transfers lasts that many slots, while one-slot packing fills
// each link to one transfer; in phases as long as the slowest host's, each link is filled to what
// it carries in that time (a switch link twice the host rate: two) ---
std::string long_skip(const PlanSearch& s) {
  if (std::string why = whole_skip(s); !why.empty()) return why;
  if (s.in.slow_slots < 2) return "no host link slower than the host link rate";
  return "";
}
std::optional<Candidate> long_build(PlanSearch& s, std::string& why) {
  std::optional<Candidate> c = packed_whole_plan(s, s.beat(), why, s.in.slow_slots);
  if (c)
    c->how = "packed-long",
    c->composition = "every transfer packed into phases of " + std::to_string(s.in.slow_slots) + " slots (no shifts)";
  return c;
}

// --- base LIDs: over 2^LMC LIDs, the whole table again over each port's base LID alone. More
// paths per transfer change every strategy's choices and its work, not always for the better
// (docs/planner.md#base-lids); with this entry a plan over 2^LMC LIDs is never worse than over
// the base LIDs ---
bool several_lids(const PlanInputs& in) {
  for (const Host& h : in.hosts)
    if (in.ctx.fabric.nodes[h.node].ports[h.port].lid_count() > 1) return true;
  return false;
}
std::string base_skip(const PlanSearch& s) {
  const PlanInputs& in = s.in;
  if (in.opt.max_lids == 1) return "planned over the base LIDs alone";
  if (!several_lids(in)) return "one LID per port (LMC 0)";
  if (in.n > in.policy.max_base_lid_hosts)
    return "more than " + std::to_string(in.policy.max_base_lid_hosts) + " hosts";
  if (s.best_time() <= std::ceil(in.least - 1e-9)) return "the best so far is at the least time";
  // What any plan over the base LIDs takes at least (their routes walked): where the best so far
  // is no longer, the pass cannot win (OpenSM's updn at LMC 2 on a 928-host director: 0.999 over
  // four LIDs, the base LIDs' tables allow 0.88; the pass took 8 s for nothing).
  const double base = least_time(in.ctx, in.hosts, in.senders, in.receivers, true, 1).time;
  if (s.best_time() <= std::ceil(base - 1e-9))
    return "the base LIDs' tables allow no shorter plan (their least time: " +
           std::to_string(static_cast<long long>(std::ceil(base - 1e-9))) + " slots)";
  return "";
}
std::optional<Candidate> base_build(PlanSearch& s, std::string& why);

const std::vector<Strategy>& strategies_over_one_table() {
  static const std::vector<Strategy> table{
      {"shifts", shifts_skip, shifts_build, false},
      {"leaf pairs", pairs_skip, pairs_build, false},
      {"leaf pairs packed", pairs_packed_skip, pairs_packed_build, true},
      {"interleaved", interleave_skip, interleave_build, false},
      {"shifts packed", shifts_packed_skip, shifts_packed_build, true},
      {"shifts packed, long phases", long_shifts_skip, long_shifts_build, true},
      {"given order", given_skip, given_build, false},
      {"given order packed", given_packed_skip, given_packed_build, true},
      {"packed whole", whole_skip, whole_build, true},
      {"packed whole, long phases", long_skip, long_build, true},
      {"scrambled shifts, short phases", scrambled_skip, scrambled_build, true},
  };
  return table;
}

std::optional<Candidate> base_build(PlanSearch& s, std::string& why) {
  const PlanInputs& in = s.in;
  const OptionTable base(in.ctx, in.hosts, in.opt.threads, 1);
  PlanInputs inputs(in.ctx, base, in.hosts, in.leaves, in.senders, in.receivers, in.opt, in.policy);
  PlanSearch inner(inputs, s.work_left());
  inner.outer_best = s.beat();
  Candidate c = run_strategies(inner, strategies_over_one_table(), "base LIDs: ");
  s.work_spent += inner.work_spent;
  PlanStats& t = s.tally;
  t.packing_work += inner.tally.packing_work, t.packing_budget += inner.tally.packing_budget;
  t.packings += inner.tally.packings, t.packings_over_budget += inner.tally.packings_over_budget;
  t.phases_compacted += inner.tally.phases_compacted, t.compaction_work += inner.tally.compaction_work;
  for (StrategyOutcome& o : inner.tried) {  // listed under this entry; only the outer search chooses
    if (o.outcome == "chosen") o.outcome = "lost", o.why = "the best over the base LIDs (see \"base LIDs\")";
    s.tried.push_back(std::move(o));
  }
  c.how = c.how.empty() ? "base-lids" : "base-lids+" + c.how;
  (void)why;
  return c;
}

}  // namespace

// Over the ring, else the topology order: the pairs' windows take consecutive receivers of their
// leaf, which in the given (name) order share nothing the routing spreads by.
const NamedRing& PlanInputs::pairs_ring() const {
  if (pairs_ring_) return *pairs_ring_;
  if (on_ring()) return *(pairs_ring_ = ring);
  for (NamedRing& r : candidate_rings(ctx, hosts, leaves, n))
    if (r.name.rfind("topology order", 0) == 0) return *(pairs_ring_ = std::move(r));
  return *(pairs_ring_ = given);
}

bool Candidate::beats(const Candidate& o) const {
  if (plan.st.unroutable != o.plan.st.unroutable) return plan.st.unroutable < o.plan.st.unroutable;
  return plan.total() < o.plan.total();
}

double PlanSearch::best_time() const { return best ? best->plan.total() : HUGE_VAL; }

double PlanSearch::time_of(const std::string& name) const {
  for (const StrategyOutcome& o : tried)
    if (o.name == prefix + name && o.slots > 0) return o.slots;
  return HUGE_VAL;
}

bool PlanSearch::pairs_enough() const {
  return pairs_enough(std::min(time_of("leaf pairs"), time_of("leaf pairs packed")));
}

bool PlanSearch::pairs_enough(double pairs) const {
  return pairs <=
         in.least * (in.n > in.policy.max_whole_packing_hosts ? in.policy.pairs_enough : in.policy.pairs_enough_small);
}

const std::vector<Strategy>& strategy_table() {
  static const std::vector<Strategy> table = [] {
    std::vector<Strategy> t = strategies_over_one_table();
    t.push_back({"base LIDs", base_skip, base_build, false});
    return t;
  }();
  return table;
}

std::vector<Phase> composition_phases(PlanSearch& s, const NamedRing& over, bool blocks,
                                      std::vector<Transfer>* leftover) {
  const PlanInputs& in = s.in;
  if (!blocks) {
    if (!in.all_to_all()) return group_phases(in.n, in.senders, in.receivers);
    return over.name != in.given.name ? ring_phases(over.ring) : shift_phases(in.n);
  }
  auto& cache = s.pairs;
  if (!cache.built || cache.over.name != over.name) {
    cache.built = true, cache.over = over, cache.leftover.clear();
    cache.phases = leaf_block_phases(over.ring, in.leaves, in.period, &in.slots, &in.leaf_paths, &cache.leftover);
  }
  if (leftover) {  // the last use: handed over
    *leftover = std::move(cache.leftover);
    std::vector<Phase> phases = std::move(cache.phases);
    cache = {};
    return phases;
  }
  std::vector<Phase> phases = cache.phases;
  append_leftover_phases(cache.leftover, in.n, phases);
  return phases;
}

namespace {

// Where a packing left a candidate uncompacted, compaction waits until every entry has run, for
// the packing that is best before it: the search's best where that is one, else `reserve` (the
// best packing that lost before compaction; it wins where compaction takes it below the best).
// A 1 440-host tree at LMC 2 compacted two packings at 4-9 s each, and the first lost.
void compact_the_best_packing(PlanSearch& s, std::optional<Candidate>& reserve, std::optional<size_t>& chosen,
                              std::optional<size_t> reserve_at) {
  const bool best_waits = s.best->compact_slots > 0;
  Candidate& c = best_waits ? *s.best : *reserve;
  const size_t at = best_waits ? *chosen : *reserve_at;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t w0 = s.work_spent;
  compact_pending(s, c);
  StrategyOutcome& o = s.tried[at];
  o.slots = c.plan.total(), o.unroutable = c.plan.st.unroutable, o.work += s.work_spent - w0;
  o.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (best_waits || !c.beats(*s.best)) return;
  s.tried[*chosen].outcome = "lost", s.tried[*chosen].why = "beaten by " + o.name + " (compacted)";
  o.outcome = "chosen", o.why.clear(), chosen = at;
  s.best = std::move(c);
}

}  // namespace

Candidate run_strategies(PlanSearch& s, const std::vector<Strategy>& table, const std::string& prefix) {
  std::optional<size_t> chosen, reserve_at;  // into s.tried
  std::optional<Candidate> reserve;
  // A packing that lost before compaction kept where it is the best such so far.
  auto keep = [&](Candidate& c, size_t at) {
    if (c.compact_slots > 0 && (!reserve || c.uncompacted < reserve->uncompacted))
      reserve = std::move(c), reserve_at = at;
  };
  s.prefix = prefix;
  for (const Strategy& st : table) {
    StrategyOutcome o{.name = prefix + st.name};
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t w0 = s.work_spent;
    std::string why = st.skip(s);
    if (why.empty() && st.spends_work && s.work_left() == 0) why = "the work budget is spent";
    if (!why.empty()) {
      o.outcome = "skipped", o.why = std::move(why);
      s.tried.push_back(std::move(o));
      continue;
    }
    std::optional<Candidate> c = st.build(s, why);
    // A packing's compaction waits only where the packing is within `gain` of the least time
    // before it: there the entries after it are skipped or run as they would after compaction.
    if (c && c->compact_slots > 0 && c->uncompacted > s.in.least * s.in.policy.gain) compact_pending(s, *c);
    o.work = s.work_spent - w0;
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!c) {
      o.outcome = "stopped", o.why = std::move(why);
    } else {
      o.slots = c->plan.total(), o.unroutable = c->plan.st.unroutable;
      if (!s.best || c->beats(*s.best)) {
        if (chosen) s.tried[*chosen].outcome = "lost", s.tried[*chosen].why = "beaten by " + o.name;
        // A waiting best is the one compacted at the end: no packing kept beside it (memory: a
        // packing holds every transfer).
        if (c->compact_slots > 0)
          reserve.reset();
        else if (s.best)
          keep(*s.best, *chosen);
        s.best = std::move(*c), o.outcome = "chosen", chosen = s.tried.size();
      } else {
        o.outcome = "lost",
        o.why = "the best so far takes " + std::to_string(static_cast<long long>(s.best_time())) + " slots";
        if (s.best->compact_slots == 0) keep(*c, s.tried.size());  // else the best is compacted at the end
      }
    }
    s.tried.push_back(std::move(o));
  }
  if (s.best->compact_slots > 0 || reserve) compact_the_best_packing(s, reserve, chosen, reserve_at);
  return std::move(*s.best);
}

}  // namespace ibroute::schedule
