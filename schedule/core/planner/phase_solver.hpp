// One phase's choice of paths: the solver every composition's phases go through (greedy start,
// spine colouring on two-level trees, the repair of overloaded links). docs/planner.md#the-phase-solver.
// Internal to schedule/core: phase_solver.cpp (start and finish), spine_colouring.cpp, phase_repair.cpp.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ibroute/schedule/planner.hpp"
#include "option_table.hpp"
#include "phase_packing.hpp"

namespace ibroute::schedule {

struct SolveResult {
  double time = 0;   // the phase's time in message-times at the host link rate (0: nothing on a link)
  int overflow = 0;  // worst load - the fabric's bound (<= 0: within it)
};

class PhaseSolver {
 public:
  // `slots`: the phase's length, each link's capacity what it carries in that time (unit_capacities).
  PhaseSolver(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, int rounds,
              int slots = 1)
      : ctx_(ctx),
        t_(table),
        hosts_(hosts),
        n_(hosts.size()),
        rounds_(rounds),
        cap_(unit_capacities(ctx, slots)),
        weight_(cap_.size(), 1),
        over_(ctx.capacity.size()),
        seen_(ctx.links.size(), 0),
        users_(ctx.links.size()) {
    // A link slower than a host link: one transfer on it takes host/link rate times as long, so it
    // counts that many times against a capacity of one (the repair then weighs time, not transfers).
    const double host = ctx.structure.host_gbps > 0 ? ctx.structure.host_gbps : 0;
    for (size_t l = 0; l < cap_.size(); ++l)
      if (cap_[l] == 0)
        cap_[l] = 1,
        weight_[l] = host > 0 && ctx.gbps[l] > 0 ? std::max(1, static_cast<int>(std::lround(host / ctx.gbps[l]))) : 1;
    for (size_t l = 0; l < over_.size(); ++l) over_[l] = -cap_[l];
    for (int32_t s : ctx.structure.top) spine_slot_.emplace(s, static_cast<int>(spine_slot_.size()));
  }

  // Picks the DLID of every transfer of `ph`, aiming at no link above `target` transfers per
  // host-link rate (the phase's least possible load, not the fabric's bound). With `deferred`,
  // transfers still above the target afterwards are taken out of the phase and listed there.
  SolveResult solve(Phase& ph, Method method, size_t& unroutable, int target, std::vector<Transfer>* deferred = nullptr,
                    size_t rotate = 0);

  size_t greedy_won() const { return greedy_won_; }
  size_t compared() const { return compared_; }
  void set_greedy_only(bool on) { greedy_only_ = on; }
  size_t repairs_tried() const { return repairs_tried_; }
  size_t repairs_lowered() const { return repairs_lowered_; }
  void set_repair(bool on) { repair_on_ = on; }
  void set_walk(bool on) { walk_on_ = on; }
  // With transfers allowed to wait: those taken out brought back where augmenting paths make room.
  void set_readmit(bool on) { readmit_on_ = on; }
  // The senders in the order the solver visits them (every rank once): a ring's places, so that
  // the plan of a ring's shifts does not depend on how the hosts were numbered. Null: rank order.
  void set_visit(const std::vector<int32_t>* ranks) { visit_ = ranks; }
  // Per rank: its transfers that waited in the phases solved before (sent, received). Where set,
  // the transfers of ranks that waited least wait first, so that the waiting spreads over ranks.
  void set_waits(const std::vector<uint32_t>* sent, const std::vector<uint32_t>* received) {
    sent_waits_ = sent, received_waits_ = received;
  }

 private:
  // The transfers of `todo` not yet placed, by their number of options, ties in rank order (`todo`
  // is): a counting sort, since the counts are a few (2^LMC at most).
  const std::vector<size_t>& fewest_options_first(const std::vector<size_t>& todo);

  // The phase's DLIDs from the choices made, its time and overflow; the solver's per-phase state reset.
  SolveResult finish(Phase& ph);

  bool greedy_only_ = false;
  bool repair_on_ = true;
  bool walk_on_ = true;
  bool readmit_on_ = false;
  bool readmit_follows_ = false;  // this solve defers and readmits: the repair's last level by moves alone
  bool chains_on_ = true;         // lower_to tries ejection chains
  // readmit's search: per link the search that last reached it (a stamp), how it was reached (the
  // transfer moved off it and the option it takes; the previous link of the path), and dead links.
  struct Reach {
    uint32_t stamp = 0, mover = 0, option = 0;
    int32_t prev = -1;
  };
  std::vector<Reach> reach_;
  std::vector<uint32_t> dead_;  // per link: the phase (dead_epoch_) in which a search failed through it
  uint32_t search_ = 0, dead_epoch_ = 0;
  long readmit_budget_ = 0;  // options the phase's searches may still look at
  std::vector<int32_t> queue_;
  size_t repairs_tried_ = 0;    // phases whose start was above the target: the repair searched
  size_t repairs_lowered_ = 0;  // and of those, where it lowered the worst link
  size_t greedy_won_ = 0;       // phases where the greedy start beat the routing's own choice
  size_t compared_ = 0;  // phases where the routing's choice overflowed and the greedy start was tried against it
  const std::vector<int32_t>* visit_ = nullptr;        // set_visit's order; null: rank order
  const std::vector<uint32_t>* sent_waits_ = nullptr;  // set_waits'; null: the visiting order decides
  const std::vector<uint32_t>* received_waits_ = nullptr;
  std::vector<std::pair<uint64_t, size_t>> over_order_;  // defer_over's: (waits, place) per transfer
  // Slots one transfer takes on rank r's host link: 1, more where it is slower than the host link
  // rate (a DDR host on a QDR fabric: 2). What a rank's waiting costs the packing is its waits times this.
  uint32_t pace(size_t r) const {
    const double g = ctx_.gbps[t_.src_link(r)], host = ctx_.structure.host_gbps;
    return g > 0 && host > g ? static_cast<uint32_t>(std::ceil(host / g - 1e-9)) : 1;
  }

  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr int kBaseMisses = 16;
  int base_misses_ = 0;
  const EvalContext& ctx_;
  const OptionTable& t_;
  const std::vector<Host>& hosts_;
  size_t n_;
  int rounds_;
  std::vector<int> cap_;  // per link: transfers at the host link rate it carries at once (1 for a link of that rate)
  std::vector<int>
      weight_;  // per link: what one transfer counts against it (1; more on a link slower than a host link)
  std::vector<size_t> todo_;      // solve's transfers with a route
  std::vector<uint32_t> bucket_;  // fewest_options_first's counts
  std::vector<size_t> rest_;      // and its order
  // Per link: load - capacity (one array, not two: the solver is bound by random memory reads).
  std::vector<int> over_;
  std::vector<char> seen_;                    // link touched in this phase (listed in touched_)
  std::vector<std::vector<uint32_t>> users_;  // transfers (source ranks) on each link, while repairing
  bool track_users_ = false;
  bool users_listed_ = false;  // users_ holds this phase's lists (cleared by finish)
  std::vector<int32_t> touched_;
  std::vector<uint32_t> choice_;
  std::vector<std::pair<uint32_t, uint32_t>> range_;  // per rank: its options in this phase
  std::unordered_map<int32_t, int> spine_slot_;

  // The phase's own copy of its transfers' options: the table is hundreds of MB read at random
  // (each (ingress switch, destination) once per phase), the copy stays in the caches for the
  // passes and the repair that read it again and again.
  std::vector<OptionTable::Option> opts_;
  std::vector<int32_t> links_;
  const OptionTable::Option& opt(uint32_t k) const { return opts_[k]; }
  const int32_t* links(uint32_t k) const { return links_.data() + opts_[k].begin; }

  // Copies the options of every transfer of `ph` into opts_/links_ (range_ indexes the copy) and
  // lists in `todo` those with a route, in visiting order (rank order, or the ring's: which of two
  // colliding transfers the greedy and the repair move first decides whether the collisions of a
  // leaf that lost an up-link are resolved: 3 000 hosts, 5 488 slots in name order, 3 239 in the
  // ring's); `first_only`: each transfer's first option alone. The
  // table's dependent reads (range, then the options it names, then their links) are asked for in
  // stages ahead, so that several misses are in flight at once. (Tried and slower at 10 000 hosts:
  // three passes, one per read; options and links interleaved in one array.)
  void gather(const Phase& ph, std::vector<size_t>& todo, size_t& unroutable, bool first_only = false);

  // The routing's own choice (each transfer's lowest DLID with a route) placed alone, only that
  // option copied. Where no link is then above its capacity nor the target (a d-mod-k tree in
  // topology order: every phase) it is what the free method keeps (start_from_better_of_base, and
  // nothing to repair), and copying every transfer's other options would be wasted; else the
  // phase is undone, false.
  bool base_fits(const Phase& ph, int target, std::vector<size_t>& todo, size_t& unroutable);

  // The composition's own DLIDs (leaf_shop.hpp chooses them by the links' room), placed; kept
  // where no link is then above its capacity, else undone, false. A phase without any: false.
  bool composed_fits(const Phase& ph, const std::vector<size_t>& todo);

  uint16_t base_lid(int32_t dst) const {
    const Host& h = hosts_[dst];
    return ctx_.fabric.nodes[h.node].ports[h.port].base_lid;
  }

  void add(size_t i, uint32_t k, int delta) {
    touch(t_.src_link(i), i, delta);
    const int32_t* ls = links(k);
    for (uint16_t x = 0; x < opt(k).len; ++x) touch(ls[x], i, delta);
  }
  void touch(int32_t l, size_t i, int delta) {  // small enough to inline: the greedy passes call it most
    if (!seen_[l]) seen_[l] = 1, touched_.push_back(l);
    over_[l] += delta * weight_[l];
    if (track_users_) track(l, i, delta);
  }
  void track(int32_t l, size_t i, int delta) {
    if (delta > 0)
      users_[l].push_back(static_cast<uint32_t>(i));
    else
      users_[l].erase(std::find(users_[l].begin(), users_[l].end(), static_cast<uint32_t>(i)));
  }
  void place(size_t i, uint32_t k) {
    choice_[i] = k;
    add(i, k, +1);
  }
  void move(size_t i, uint32_t k) {  // k may be kNone: take the transfer off the fabric
    if (choice_[i] != kNone) add(i, choice_[i], -1);
    choice_[i] = kNone;
    if (k != kNone) place(i, k);
  }

  bool on_path(uint32_t k, int32_t l) const {
    const int32_t* ls = links(k);
    return std::find(ls, ls + opt(k).len, l) != ls + opt(k).len;
  }
  // Worst (load - capacity) over option k's links if transfer i took it (i's current option
  // released); `blocking` gets the number of links that would overflow and the last of them.
  int overflow_if(size_t i, uint32_t k, int* blocking = nullptr, int32_t* block_link = nullptr) const {
    int worst = INT32_MIN, nblock = 0;
    const int32_t* ls = links(k);
    for (uint16_t x = 0; x < opt(k).len; ++x) {
      int32_t l = ls[x];
      int over = over_[l] + ((choice_[i] != kNone && on_path(choice_[i], l)) ? 0 : weight_[l]);
      worst = std::max(worst, over);
      if (over > 0) {
        ++nblock;
        if (block_link) *block_link = l;
      }
    }
    if (blocking) *blocking = nblock;
    return worst;
  }
  int current_overflow(size_t i) const {
    if (choice_[i] == kNone) return INT32_MIN;
    int worst = INT32_MIN;
    const int32_t* ls = links(choice_[i]);
    for (uint16_t x = 0; x < opt(choice_[i]).len; ++x) worst = std::max(worst, over_[ls[x]]);
    return worst;
  }
  std::pair<uint32_t, int> best_option(size_t i) const {
    auto [a, b] = range_[i];
    uint32_t best = a;
    int best_over = INT32_MAX;
    long best_sum = LONG_MAX;
    const bool off = choice_[i] == kNone;  // as in the greedy passes: one walk over the links
    for (uint32_t k = a; k < b; ++k) {
      int over = off ? INT32_MIN : overflow_if(i, k);
      long sum = 0;
      const int32_t* ls = links(k);
      for (uint16_t x = 0; x < opt(k).len; ++x) {
        const int o = over_[ls[x]];
        if (off) over = std::max(over, o + weight_[ls[x]]);
        sum += o + cap_[ls[x]];  // the load
      }
      if (over < best_over || (over == best_over && sum < best_sum)) best = k, best_over = over, best_sum = sum;
    }
    return {best, best_over};
  }

  // Overflow of the current assignment: (worst load - capacity, transfers over the bound).
  std::pair<int, size_t> overflow_of(const std::vector<size_t>& ts) const;

  // The routing's own choice (base LIDs) is, on a d-mod-k tree in topology order, already free
  // of congestion; where it is not, the greedy start may be better: keep the better of the two.
  // Only for the free method, where `ts` is every transfer placed (nothing is pre-coloured).
  // With greedy_only (the routing's choice lost every phase probed, set_greedy_only), the greedy
  // start alone: on correlated tables (minhop on three levels) the comparison is a third of the
  // solve and never goes the base's way.
  void start_from_better_of_base(const std::vector<size_t>& ts);
  // Takes every transfer of `ts` off the fabric at once, when they are all there is on it.
  void clear(const std::vector<size_t>& ts);

  // The top-level switch an option crosses on a two-level tree: the node of its second link.
  int spine_of(uint32_t k) const;

  void colour_by_spine(const Phase& ph, const std::vector<size_t>& todo, int target);

  // Local search, top down: with W the worst (load - capacity), clear every link above W - 1, then
  // above W - 2, ... down to 0 (congestion-free), stopping at the first level it cannot reach.
  // Where the tables make the bound unreachable (few DLIDs per destination, links down), this
  // works only on the few links at the current worst instead of on every transfer over the
  // bound, and so costs little; on the two-level trees the last level is 0 and the search is
  // what it was. The attempt that fails still lowers how many transfers exceed the level below.
  int repair(const std::vector<size_t>& todo, int floor_level);

  // Brings transfers that wait (deferred[from...], taken out by defer_over) back into the phase
  // where an augmenting path makes room: a transfer whose option is blocked by one full link, a
  // transfer on that link moved to an option blocked by at most one other, and so on, breadth
  // first, as in a bipartite matching (exact where each option has one full link: a pod entered by
  // a few links). A search that fails leaves its links dead for the phase: in a matching a later
  // one through them cannot succeed either; here, where an option may cross several full links,
  // a cut that keeps failures short. docs/planner.md#long-shifts.
  void readmit(Phase& ph, std::vector<Transfer>& deferred, size_t from);
  // One augmenting path for transfer t (off the fabric); false where none is within reach.
  bool augment(uint32_t t);
  // The links of option k (for transfer i, its current option released; its host link where it is
  // off the fabric) without room for it: their number, and the last of them.
  int full_links(size_t i, uint32_t k, int32_t& last) const;

  // Takes out of the phase every transfer that still crosses a link above its capacity (`ts` visited
  // from `rotate` on, so that phase after phase other senders wait): each link keeps the first
  // transfers visited that fit. What is taken out is planned later, in phases of its own.
  void defer_over(Phase& ph, const std::vector<size_t>& ts, size_t rotate, std::vector<Transfer>& deferred);

  // The transfers on links whose (load - capacity) exceeds `level`, each once.
  void hot_above(int level, std::vector<size_t>& hot);

  // Moves transfers until no link exceeds its capacity by more than `level`; false when the
  // rounds or the search budget run out first.
  bool lower_to(int level);

  // Move transfer u to a route that avoids `avoid` and takes no link above the level, first
  // moving other transfers out of the way where exactly one link blocks (an ejection chain,
  // depth-limited; on a two-level tree this is the Kempe-chain swap of edge colouring). Moves
  // are logged so a failed branch is rolled back.
  bool relocate(uint32_t u, int32_t avoid, int depth);

  // The links' excess over the level (sum of load - capacity - level where positive) that moving
  // transfer i from its option to option k changes.
  int excess_change(size_t i, uint32_t k) const;

  // Where the rounds stop short of the level: a walk over the plateau. Again and again a link
  // above the level, one of its transfers and that transfer's option adding least excess elsewhere
  // for what it takes off, taken where the links' total excess does not grow and no link goes
  // more than one above the level (the worst stays). On three-level tables a move changes up to
  // four links and the ejection chains, which follow one blocking link, find nothing; the walk
  // takes a 3 456-host minhop tree's phases from a worst link of 9 to the 8 its pods' down-links
  // allow. Its choices come from a generator seeded by the level: the same on any machine.
  bool walk(int level);

  bool eject_for(size_t i);

  void logged_move(uint32_t u, uint32_t k);
  void rollback(size_t mark);

  std::vector<std::pair<uint32_t, uint32_t>> log_;  // (transfer, option before the move)
  std::vector<uint32_t> in_chain_;
  long budget_ = 0;                 // search steps left for this transfer's ejection chain
  long phase_budget_ = 0;           // search steps left for this level of the phase
  int level_ = 0;                   // the repair's target: no link more than this above its capacity
  std::vector<uint32_t> stamp_;     // per rank: the epoch in which it was last listed as hot
  std::vector<int32_t> over_list_;  // walk's links above its level
  std::vector<char> listed_;        // per link: in over_list_
  uint32_t epoch_ = 0;
};

}  // namespace ibroute::schedule
