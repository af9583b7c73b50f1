#include "ibroute/schedule/planner.hpp"

#include "option_table.hpp"
#include "phase_compaction.hpp"
#include "phase_packing.hpp"
#include "leaf_blocks.hpp"
#include "rings.hpp"
#include "ibroute/schedule/efficiency.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <numeric>
#include <optional>
#include <thread>

#include "ibroute/fabric/parallel.hpp"
#include <unordered_map>

namespace ibroute::schedule {

using namespace ibroute::fabric;

std::string to_string(Method m) {
  switch (m) {
    case Method::automatic: return "auto";
    case Method::free: return "free";
    case Method::structure: return "structure";
  }
  return "?";
}

bool method_from(const std::string& s, Method& out) {
  for (Method m : {Method::automatic, Method::free, Method::structure})
    if (to_string(m) == s) {
      out = m;
      return true;
    }
  return false;
}

namespace {

struct SolveResult {
  double time = 0;   // the phase's time in message-times at the host link rate (0: nothing on a link)
  int overflow = 0;  // worst load - the fabric's bound (<= 0: within it)
};

class PhaseSolver {
 public:
  PhaseSolver(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, int rounds)
      : ctx_(ctx), t_(table), hosts_(hosts), n_(hosts.size()), rounds_(rounds), cap_(unit_capacities(ctx)), weight_(cap_.size(), 1),
        over_(ctx.capacity.size()), seen_(ctx.links.size(), 0), users_(ctx.links.size()) {
    // A link slower than a host link: one transfer on it takes host/link rate times as long, so it
    // counts that many times against a capacity of one (the repair then weighs time, not transfers).
    const double host = ctx.structure.host_gbps > 0 ? ctx.structure.host_gbps : 0;
    for (size_t l = 0; l < cap_.size(); ++l)
      if (cap_[l] == 0) cap_[l] = 1, weight_[l] = host > 0 && ctx.gbps[l] > 0 ? std::max(1, static_cast<int>(std::lround(host / ctx.gbps[l]))) : 1;
    for (size_t l = 0; l < over_.size(); ++l) over_[l] = -cap_[l];
    for (int32_t s : ctx.structure.top) spine_slot_.emplace(s, static_cast<int>(spine_slot_.size()));
  }

  // Picks the DLID of every transfer of `ph`, aiming at no link above `target` transfers per
  // host-link rate (the phase's least possible load, not the fabric's bound). With `deferred`,
  // transfers still above the target afterwards are taken out of the phase and listed there.
  SolveResult solve(Phase& ph, Method method, size_t& unroutable, int target, std::vector<Transfer>* deferred = nullptr,
                    size_t rotate = 0) {
    choice_.assign(n_, kNone);
    range_.resize(n_);
    std::vector<size_t>& todo = todo_;  // kept from phase to phase: no reallocation as it grows
    todo.clear();
    // The routing's own choice alone, where it has been fitting: after kBaseMisses phases in a row
    // where it did not (a routing that congests every phase), it is no longer tried on its own. The
    // choice is the same either way (the full solve starts from it); only the time differs.
    if (method == Method::free && !deferred && base_misses_ < kBaseMisses) {
      if (base_fits(ph, target, todo, unroutable)) {
        base_misses_ = 0;
        return finish(ph);
      }
      ++base_misses_;
    }
    gather(ph, todo, unroutable);
    if (composed_fits(ph, todo)) return finish(ph);
    if (method == Method::structure) colour_by_spine(ph, todo, target);
    // Greedy for the rest: fewest options first, least-loaded option.
    const std::vector<size_t>& rest = fewest_options_first(todo);
    if (method == Method::free) start_from_better_of_base(rest);
    else
      for (size_t i : rest) place(i, best_option(i).first);
    if (repair_on_) repair(todo, target - 1);
    if (deferred) defer_over(ph, todo, rotate, *deferred);
    return finish(ph);
  }

  size_t greedy_won() const { return greedy_won_; }
  size_t compared() const { return compared_; }
  void set_greedy_only(bool on) { greedy_only_ = on; }
  size_t repairs_tried() const { return repairs_tried_; }
  size_t repairs_lowered() const { return repairs_lowered_; }
  void set_repair(bool on) { repair_on_ = on; }
  void set_walk(bool on) { walk_on_ = on; }
  // The senders in the order the solver visits them (every rank once): a ring's places, so that
  // the plan of a ring's shifts does not depend on how the hosts were numbered. Null: rank order.
  void set_visit(const std::vector<int32_t>* ranks) { visit_ = ranks; }

 private:
  // The transfers of `todo` not yet placed, by their number of options, ties in rank order (`todo`
  // is): a counting sort, since the counts are a few (2^LMC at most).
  const std::vector<size_t>& fewest_options_first(const std::vector<size_t>& todo) {
    uint32_t most = 0;
    for (size_t i : todo)
      if (choice_[i] == kNone) most = std::max(most, range_[i].second - range_[i].first);
    bucket_.assign(most + 2, 0);
    for (size_t i : todo)
      if (choice_[i] == kNone) ++bucket_[range_[i].second - range_[i].first + 1];
    for (size_t c = 1; c < bucket_.size(); ++c) bucket_[c] += bucket_[c - 1];
    rest_.resize(bucket_.back());
    for (size_t i : todo)
      if (choice_[i] == kNone) rest_[bucket_[range_[i].second - range_[i].first]++] = i;
    return rest_;
  }

  // The phase's DLIDs from the choices made, its time and overflow; the solver's per-phase state reset.
  SolveResult finish(Phase& ph) {
    for (size_t i = 0; i < n_; ++i) {
      if (ph.dst[i] < 0) continue;
      if (choice_[i] != kNone) ph.dlid[i] = opt(choice_[i]).dlid;
      else ph.dlid[i] = base_lid(ph.dst[i]);  // no working route: the base LID, counted as unroutable
    }
    SolveResult r;
    const double host = ctx_.structure.host_gbps > 0 ? ctx_.structure.host_gbps : 1;
    // One pass over the phase's links (tens of thousands at 10 000 hosts): their loads read, then
    // reset; a division only where a link is slower than a host link or not at the host rate.
    for (int32_t l : touched_) {
      const int w = weight_[l], used = over_[l] + cap_[l];
      const int load = w == 1 ? used : used / w;
      if (load > 0) r.time = std::max(r.time, ctx_.at_host_rate[l] ? load : load * host / std::max(ctx_.gbps[l], 1e-9));
      r.overflow = std::max(r.overflow, load - ctx_.capacity[l]);  // against the fabric's bound
      over_[l] = -cap_[l], seen_[l] = 0;
    }
    if (users_listed_)  // the repair listed who is on each link
      for (int32_t l : touched_) users_[l].clear();
    touched_.clear();
    track_users_ = users_listed_ = false;
    return r;
  }

  bool greedy_only_ = false;
  bool repair_on_ = true;
  bool walk_on_ = true;
  size_t repairs_tried_ = 0;    // phases whose start was above the target: the repair searched
  size_t repairs_lowered_ = 0;  // and of those, where it lowered the worst link
  size_t greedy_won_ = 0;  // phases where the greedy start beat the routing's own choice
  size_t compared_ = 0;    // phases where the routing's choice overflowed and the greedy start was tried against it
  const std::vector<int32_t>* visit_ = nullptr;  // set_visit's order; null: rank order

  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr int kBaseMisses = 16;
  int base_misses_ = 0;
  const EvalContext& ctx_;
  const OptionTable& t_;
  const std::vector<Host>& hosts_;
  size_t n_;
  int rounds_;
  std::vector<int> cap_;     // per link: transfers at the host link rate it carries at once (1 for a link of that rate)
  std::vector<int> weight_;  // per link: what one transfer counts against it (1; more on a link slower than a host link)
  std::vector<size_t> todo_;        // solve's transfers with a route
  std::vector<uint32_t> bucket_;    // fewest_options_first's counts
  std::vector<size_t> rest_;        // and its order
  // Per link: load - capacity (one array, not two: the solver is bound by random memory reads).
  std::vector<int> over_;
  std::vector<char> seen_;                   // link touched in this phase (listed in touched_)
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
  void gather(const Phase& ph, std::vector<size_t>& todo, size_t& unroutable, bool first_only = false) {
    opts_.clear(), links_.clear();
    constexpr size_t kRange = 48, kOptions = 24, kLinks = 12;
    auto at = [&](size_t i) {
      auto r = t_.range(i, static_cast<size_t>(ph.dst[i]));
      if (first_only) r.second = std::min(r.second, r.first + 1);
      return r;
    };
    for (size_t i = 0; i < n_; ++i) {
      if (i + kRange < n_ && ph.dst[i + kRange] >= 0) t_.prefetch_range(i + kRange, static_cast<size_t>(ph.dst[i + kRange]));
      if (i + kOptions < n_ && ph.dst[i + kOptions] >= 0) t_.prefetch_options(at(i + kOptions).first);
      if (i + kLinks < n_ && ph.dst[i + kLinks] >= 0) {
        auto [a, b] = at(i + kLinks);
        t_.prefetch_links(a, b);
      }
      if (ph.dst[i] < 0) continue;
      auto [a, b] = at(i);
      if (a == b) {
        ++unroutable;
        range_[i] = {0, 0};
        continue;
      }
      // A cell's options and their links lie together in the table: two block copies, the
      // options' offsets then moved to the copy's.
      const auto first = static_cast<uint32_t>(opts_.size());
      const auto [lb, le] = t_.cell_links(a, b);
      const uint32_t base = static_cast<uint32_t>(links_.size()) - lb;  // modulo 2^32: adds back to the copy's offsets
      opts_.insert(opts_.end(), &t_.opt(a), &t_.opt(a) + (b - a));
      for (size_t k = first; k < opts_.size(); ++k) opts_[k].begin += base;
      links_.insert(links_.end(), t_.links(a), t_.links(a) + (le - lb));
      range_[i] = {first, static_cast<uint32_t>(opts_.size())};
      if (!visit_) todo.push_back(i);
    }
    if (visit_)  // copied in rank order (the table's rows in turn), visited in the ring's
      for (int32_t i : *visit_)
        if (ph.dst[static_cast<size_t>(i)] >= 0 && range_[static_cast<size_t>(i)].second > range_[static_cast<size_t>(i)].first)
          todo.push_back(static_cast<size_t>(i));
  }

  // The routing's own choice (each transfer's lowest DLID with a route) placed alone, only that
  // option copied. Where no link is then above its capacity nor the target (a d-mod-k tree in
  // topology order: every phase) it is what the free method keeps (start_from_better_of_base, and
  // nothing to repair), and copying every transfer's other options would be wasted; else the
  // phase is undone, false.
  bool base_fits(const Phase& ph, int target, std::vector<size_t>& todo, size_t& unroutable) {
    size_t none = 0;
    gather(ph, todo, none, true);
    for (size_t i : todo) place(i, range_[i].first);
    int worst = INT32_MIN;
    for (int32_t l : touched_) worst = std::max(worst, over_[l]);
    if (worst <= 0 && worst <= target - 1) {  // as start_from_better_of_base keeps it and repair leaves it
      unroutable += none;
      return true;
    }
    for (int32_t l : touched_) over_[l] = -cap_[l], seen_[l] = 0;
    touched_.clear();
    for (size_t i : todo) choice_[i] = kNone;
    todo.clear();
    return false;
  }

  // The composition's own DLIDs (leaf_shop.hpp chooses them by the links' room), placed; kept
  // where no link is then above its capacity, else undone, false. A phase without any: false.
  bool composed_fits(const Phase& ph, const std::vector<size_t>& todo) {
    if (std::none_of(ph.dlid.begin(), ph.dlid.end(), [](uint16_t d) { return d != 0; })) return false;
    bool all = true;
    for (size_t i : todo) {
      uint32_t k = range_[i].first;
      while (k < range_[i].second && opt(k).dlid != ph.dlid[i]) ++k;
      if (k == range_[i].second) {
        all = false;
        break;
      }
      place(i, k);
    }
    int worst = INT32_MIN;
    for (int32_t l : touched_) worst = std::max(worst, over_[l]);
    if (all && worst <= 0) return true;
    clear(todo);
    return false;
  }

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
    if (delta > 0) users_[l].push_back(static_cast<uint32_t>(i));
    else users_[l].erase(std::find(users_[l].begin(), users_[l].end(), static_cast<uint32_t>(i)));
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
  std::pair<int, size_t> overflow_of(const std::vector<size_t>& ts) const {
    int worst = 0;
    size_t hot = 0;
    for (size_t i : ts) {
      int o = current_overflow(i);
      worst = std::max(worst, o);
      hot += o > 0;
    }
    return {worst, hot};
  }

  // The routing's own choice (base LIDs) is, on a d-mod-k tree in topology order, already free
  // of congestion; where it is not, the greedy start may be better: keep the better of the two.
  // Only for the free method, where `ts` is every transfer placed (nothing is pre-coloured).
  // With greedy_only (the routing's choice lost every phase probed, set_greedy_only), the greedy
  // start alone: on correlated tables (minhop on three levels) the comparison is a third of the
  // solve and never goes the base's way.
  void start_from_better_of_base(const std::vector<size_t>& ts) {
    if (greedy_only_) {
      for (size_t i : ts) place(i, best_option(i).first);
      return;
    }
    for (size_t i : ts) place(i, range_[i].first);  // the lowest DLID with a route
    auto base = overflow_of(ts);
    if (base.first <= 0) return;
    ++compared_;
    clear(ts);
    for (size_t i : ts) place(i, best_option(i).first);
    if (overflow_of(ts) < base) {
      ++greedy_won_;
      return;
    }
    clear(ts);
    for (size_t i : ts) place(i, range_[i].first);
  }
  // Takes every transfer of `ts` off the fabric at once, when they are all there is on it.
  void clear(const std::vector<size_t>& ts) {
    for (int32_t l : touched_) over_[l] = -cap_[l];
    for (size_t i : ts) choice_[i] = kNone;
  }

  // The top-level switch an option crosses on a two-level tree: the node of its second link.
  int spine_of(uint32_t k) const {
    if (opt(k).len != 3) return -1;
    auto it = spine_slot_.find(ctx_.links.node(links(k)[1]));
    return it == spine_slot_.end() ? -1 : it->second;
  }

  void colour_by_spine(const Phase& ph, const std::vector<size_t>& todo, int target) {
    const int spines = static_cast<int>(spine_slot_.size());
    if (spines == 0) return;
    // Colours: (spine, slot); as many slots per spine as a leaf may send through it at once.
    const auto& s = ctx_.structure;
    int max_up = 0, max_hosts = 0;
    for (size_t x = 0; x < s.leaves.size(); ++x)
      max_up = std::max(max_up, s.uplinks_per_leaf[x]), max_hosts = std::max(max_hosts, s.hosts_per_leaf[x]);
    const int per_pair = std::max(1, max_up / spines);
    const int slots = std::max(1, target) * per_pair;
    const int colours = std::max(spines * slots, max_hosts);
    // Bipartite multigraph: source leaves x destination leaves; edges = transfers between leaves.
    std::unordered_map<int32_t, int> left_id, right_id;
    struct Edge { size_t src; int u, v, colour; };
    std::vector<Edge> edges;
    for (size_t i : todo) {
      const Host& a = hosts_[i];
      const Host& b = hosts_[ph.dst[i]];
      int32_t la = ctx_.fabric.nodes[a.node].ports[a.port].peer_node, lb = ctx_.fabric.nodes[b.node].ports[b.port].peer_node;
      if (la == lb) continue;  // within a leaf: one path, nothing to choose
      int u = left_id.emplace(la, static_cast<int>(left_id.size())).first->second;
      int v = right_id.emplace(lb, static_cast<int>(right_id.size())).first->second;
      edges.push_back({i, u, v, -1});
    }
    std::vector<int> at_left(left_id.size() * colours, -1), at_right(right_id.size() * colours, -1);
    auto free_at = [&](const std::vector<int>& at, int x) {
      for (int c = 0; c < colours; ++c)
        if (at[x * colours + c] < 0) return c;
      return -1;
    };
    std::vector<int> path;
    for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
      int u = edges[e].u, v = edges[e].v;
      int a = free_at(at_left, u), b = free_at(at_right, v);
      if (a < 0 || b < 0) continue;  // degree beyond the colours: leave it to the greedy pass
      if (at_right[v * colours + a] >= 0) {
        // Swap colours a and b along the alternating path that starts at v with colour a;
        // bipartiteness keeps it away from u, after which a is free at both ends.
        path.clear();
        int x = v, c = a;
        bool right = true;
        for (;;) {
          int f = right ? at_right[x * colours + c] : at_left[x * colours + c];
          if (f < 0) break;
          path.push_back(f);
          x = right ? edges[f].u : edges[f].v;
          right = !right;
          c = c == a ? b : a;
        }
        for (int f : path) at_left[edges[f].u * colours + edges[f].colour] = -1, at_right[edges[f].v * colours + edges[f].colour] = -1;
        for (int f : path) {
          edges[f].colour = edges[f].colour == a ? b : a;
          at_left[edges[f].u * colours + edges[f].colour] = f;
          at_right[edges[f].v * colours + edges[f].colour] = f;
        }
      }
      edges[e].colour = a;
      at_left[u * colours + a] = e;
      at_right[v * colours + a] = e;
    }
    for (const Edge& e : edges) {
      if (e.colour < 0 || e.colour >= spines * slots) continue;
      int want = e.colour / slots;
      auto [a, b] = range_[e.src];
      uint32_t pick = kNone;
      long pick_load = LONG_MAX;
      for (uint32_t k = a; k < b; ++k) {
        if (spine_of(k) != want) continue;
        long sum = 0;
        const int32_t* ls = links(k);
        for (uint16_t x = 0; x < opt(k).len; ++x) sum += over_[ls[x]] + cap_[ls[x]];  // the load
        if (sum < pick_load) pick = k, pick_load = sum;
      }
      if (pick != kNone) place(e.src, pick);
    }
  }

  // Local search, top down: with W the worst (load - capacity), clear every link above W - 1, then
  // above W - 2, ... down to 0 (congestion-free), stopping at the first level it cannot reach.
  // Where the tables make the bound unreachable (few DLIDs per destination, links down), this
  // works only on the few links at the current worst instead of on every transfer over the
  // bound, and so costs little; on the two-level trees the last level is 0 and the search is
  // what it was. The attempt that fails still lowers how many transfers exceed the level below.
  int repair(const std::vector<size_t>& todo, int floor_level) {
    int worst = INT32_MIN;
    for (int32_t l : touched_) worst = std::max(worst, over_[l]);
    if (worst <= floor_level) return worst;
    track_users_ = users_listed_ = true;  // the ejection chains and the hot sets need to know who is on a link
    for (size_t i : todo)
      if (choice_[i] != kNone) {
        users_[t_.src_link(i)].push_back(static_cast<uint32_t>(i));
        const int32_t* ls = links(choice_[i]);
        for (uint16_t x = 0; x < opt(choice_[i]).len; ++x) users_[ls[x]].push_back(static_cast<uint32_t>(i));
      }
    if (stamp_.size() < n_) stamp_.assign(n_, 0);
    ++repairs_tried_;
    int reached = floor_level;
    for (int level = worst - 1; level >= floor_level; --level)
      if (!lower_to(level) && (!walk_on_ || !walk(level))) {
        reached = level + 1;
        break;
      }
    repairs_lowered_ += reached < worst;
    return reached;
  }

  // Takes out of the phase every transfer that still crosses a link above its capacity (`ts` visited
  // from `rotate` on, so that phase after phase other senders wait): each link keeps the first
  // transfers visited that fit. What is taken out is planned later, in phases of its own.
  void defer_over(Phase& ph, const std::vector<size_t>& ts, size_t rotate, std::vector<Transfer>& deferred) {
    track_users_ = false;
    for (size_t x = 0; x < ts.size(); ++x) {
      const size_t i = ts[(x + rotate) % ts.size()];
      if (choice_[i] == kNone || current_overflow(i) <= 0) continue;
      move(i, kNone);
      deferred.push_back({static_cast<int32_t>(i), ph.dst[i]});
      ph.dst[i] = -1;
    }
  }

  // The transfers on links whose (load - capacity) exceeds `level`, each once.
  void hot_above(int level, std::vector<size_t>& hot) {
    hot.clear();
    if (++epoch_ == 0) std::fill(stamp_.begin(), stamp_.end(), 0), epoch_ = 1;
    for (int32_t l : touched_)
      if (over_[l] > level)
        for (uint32_t u : users_[l])
          if (stamp_[u] != epoch_) stamp_[u] = epoch_, hot.push_back(u);
    std::sort(hot.begin(), hot.end());  // rank order: the result does not depend on link numbering
  }

  // Moves transfers until no link exceeds its capacity by more than `level`; false when the
  // rounds or the search budget run out first.
  bool lower_to(int level) {
    level_ = level;
    std::vector<size_t> hot;
    hot_above(level, hot);
    // Ejection chains cost search: a budget in proportion to the transfers to be moved, enough
    // for the two-level trees (where chains are short) and bounded where the level is out of reach.
    phase_budget_ = 8 * static_cast<long>(hot.size()) + 4000;
    size_t best_hot = SIZE_MAX;
    int stale = 0;
    for (int round = 0; round < rounds_; ++round) {
      if (round > 0) hot_above(level, hot);
      if (hot.empty()) return true;
      // Stop when three rounds in a row take fewer than 1 % off the transfers above the level
      // (at least one): the level is out of reach, and creeping towards it costs whole rounds.
      if (hot.size() + std::max<size_t>(1, best_hot / 100) <= best_hot || best_hot == SIZE_MAX) best_hot = hot.size(), stale = 0;
      else if (++stale >= 3) return false;
      bool improved = false;
      for (size_t i : hot) {
        int cur = current_overflow(i);
        if (cur <= level) continue;
        auto [a, b] = range_[i];
        uint32_t best = kNone;
        int best_over = cur;
        for (uint32_t k = a; k < b; ++k) {
          if (k == choice_[i]) continue;
          int over = overflow_if(i, k);
          if (over < best_over) best = k, best_over = over;
        }
        if (best != kNone && best_over <= level) {
          move(i, best);
          improved = true;
          continue;
        }
        if (eject_for(i)) {
          improved = true;
          continue;
        }
        if (best != kNone) {  // not below the level, but better than where it is
          move(i, best);
          improved = true;
        }
      }
      if (!improved) return false;
    }
    hot_above(level, hot);
    return hot.empty();
  }

  // Move transfer u to a route that avoids `avoid` and takes no link above the level, first
  // moving other transfers out of the way where exactly one link blocks (an ejection chain,
  // depth-limited; on a two-level tree this is the Kempe-chain swap of edge colouring). Moves
  // are logged so a failed branch is rolled back.
  bool relocate(uint32_t u, int32_t avoid, int depth) {
    if (--budget_ < 0) return false;
    const size_t start = log_.size();
    logged_move(u, kNone);  // off the fabric while it looks: its own slots count as free
    auto [a, b] = range_[u];
    for (uint32_t k = a; k < b; ++k) {
      if (avoid >= 0 && on_path(k, avoid)) continue;
      int nblock = 0;
      int32_t block = -1;
      int over = overflow_if(u, k, &nblock, &block);
      if (over <= level_) {
        logged_move(u, k);
        return true;
      }
      if (depth == 0 || over != level_ + 1 || nblock != 1) continue;
      in_chain_.push_back(u);
      std::vector<uint32_t> on = users_[block];
      bool done = false;
      for (uint32_t w : on) {
        if (std::find(in_chain_.begin(), in_chain_.end(), w) != in_chain_.end() || choice_[w] == kNone) continue;
        size_t mark = log_.size();
        if (relocate(w, block, depth - 1) && overflow_if(u, k) <= level_) {
          logged_move(u, k);
          done = true;
          break;
        }
        rollback(mark);
      }
      in_chain_.pop_back();
      if (done) return true;
    }
    rollback(start);  // back where it was
    return false;
  }

  // The links' excess over the level (sum of load - capacity - level where positive) that moving
  // transfer i from its option to option k changes.
  int excess_change(size_t i, uint32_t k) const {
    const uint32_t c = choice_[i];
    int delta = 0;
    const int32_t* ls = links(c);
    for (uint16_t x = 0; x < opt(c).len; ++x)
      if (!on_path(k, ls[x])) delta += std::max(0, over_[ls[x]] - weight_[ls[x]] - level_) - std::max(0, over_[ls[x]] - level_);
    ls = links(k);
    for (uint16_t x = 0; x < opt(k).len; ++x)
      if (!on_path(c, ls[x])) delta += std::max(0, over_[ls[x]] + weight_[ls[x]] - level_) - std::max(0, over_[ls[x]] - level_);
    return delta;
  }

  // Where the rounds stop short of the level: a walk over the plateau. Again and again a link
  // above the level, one of its transfers and that transfer's option adding least excess elsewhere
  // for what it takes off, taken where the links' total excess does not grow and no link goes
  // more than one above the level (the worst stays). On three-level tables a move changes up to
  // four links and the ejection chains, which follow one blocking link, find nothing; the walk
  // takes a 3 456-host minhop tree's phases from a worst link of 9 to the 8 its pods' down-links
  // allow. Its choices come from a generator seeded by the level: the same on any machine.
  bool walk(int level) {
    level_ = level;
    // The links above the level: listed once each (listed_), those no longer above dropped when drawn.
    std::vector<int32_t>& over = over_list_;
    over.clear();
    if (listed_.size() < over_.size()) listed_.assign(over_.size(), 0);
    long excess = 0;
    for (int32_t l : touched_)
      if (over_[l] > level) over.push_back(l), listed_[l] = 1, excess += over_[l] - level;
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(level + 1) * 0xbf58476d1ce4e5b9ull;
    auto draw = [&](size_t bound) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      return static_cast<size_t>(rng % bound);
    };
    // At most 40 steps per link above the level, and 8 per such link (at least 100) since the
    // excess last fell: a level out of reach (hundreds of links above it) is given up soon.
    const long steps = 40 * static_cast<long>(over.size()) + 200, patience = 8 * static_cast<long>(over.size()) + 100;
    long lowest = excess, since = 0;
    for (long step = 0; step < steps && since < patience && !over.empty(); ++step, ++since) {
      const size_t at = draw(over.size());
      const int32_t l = over[at];
      if (over_[l] <= level) {
        listed_[l] = 0, over[at] = over.back(), over.pop_back();
        continue;
      }
      const std::vector<uint32_t>& on = users_[l];
      const size_t i = on[draw(on.size())];
      auto [a, b] = range_[i];
      uint32_t best = kNone;
      int best_delta = 1;
      for (uint32_t k = a; k < b; ++k) {
        if (k == choice_[i] || overflow_if(i, k) > level + 1) continue;
        const int d = excess_change(i, k);
        if (d < best_delta) best = k, best_delta = d;
      }
      if (best == kNone) continue;
      move(i, best);
      const int32_t* ls = links(best);
      for (uint16_t x = 0; x < opt(best).len; ++x)
        if (over_[ls[x]] > level && !listed_[ls[x]]) listed_[ls[x]] = 1, over.push_back(ls[x]);
      if ((excess += best_delta) < lowest) lowest = excess, since = 0;
    }
    bool reached = true;
    for (int32_t l : over) reached &= over_[l] <= level, listed_[l] = 0;
    return reached;
  }

  bool eject_for(size_t i) {
    // Leave the most overloaded link of i's route.
    int32_t hot = -1;
    int worst = INT32_MIN;
    const int32_t* ls = links(choice_[i]);
    for (uint16_t x = 0; x < opt(choice_[i]).len; ++x)
      if (over_[ls[x]] > worst) worst = over_[ls[x]], hot = ls[x];
    log_.clear();
    in_chain_.clear();
    if (phase_budget_ <= 0) return false;
    budget_ = std::min<long>(2000, phase_budget_);
    long before = budget_;
    bool ok = relocate(static_cast<uint32_t>(i), hot, 8);
    phase_budget_ -= before - std::max<long>(budget_, 0);
    return ok;
  }

  void logged_move(uint32_t u, uint32_t k) {
    log_.push_back({u, choice_[u]});
    move(u, k);
  }
  void rollback(size_t mark) {
    while (log_.size() > mark) {
      auto [u, old] = log_.back();
      log_.pop_back();
      move(u, old);
    }
  }

  std::vector<std::pair<uint32_t, uint32_t>> log_;  // (transfer, option before the move)
  std::vector<uint32_t> in_chain_;
  long budget_ = 0;        // search steps left for this transfer's ejection chain
  long phase_budget_ = 0;  // search steps left for this level of the phase
  int level_ = 0;          // the repair's target: no link more than this above its capacity
  std::vector<uint32_t> stamp_;  // per rank: the epoch in which it was last listed as hot
  std::vector<int32_t> over_list_;  // walk's links above its level
  std::vector<char> listed_;        // per link: in over_list_
  uint32_t epoch_ = 0;
};

}  // namespace

Schedule plan_all_to_all(const EvalContext& ctx, const std::vector<Host>& hosts, const PlanOptions& opt, PlanStats* stats) {
  return plan_groups(ctx, hosts, {}, {}, opt, stats);
}

namespace {

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

// The repair's walk over the plateau (PhaseSolver::walk) up to this many hosts. Beyond, on the
// 10 000-host minhop-like tree, it lowered 14 of 16 probed phases by one level of 16, so that the
// repair was no longer given up: the planner took 23-30 s instead of 16 s, and the given order's
// sample gained enough that the ring it had lost to was no longer taken (0.0624 against 0.0642).
constexpr size_t kMaxWalkHosts = 6000;

// Probing the routing (solve_phases): the phases probed, on exchanges of at least so many phases.
constexpr size_t kProbe = 16, kProbePhasesFrom = 256;

// Solves every phase of `phases`. Without `deferred`, each phase aims at its least load (what its
// leaves' up-links allow); with it, first every leaf's excess waits (Leaves::defer_excess), then
// every phase aims at one transfer per host-link rate and what still does not fit waits too, all
// listed in `deferred` in phase order. `ring`: the phases are its shifts, visited in its order.
Planned solve_phases(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, const Leaves& leaves,
                     std::vector<Phase> phases, const PlanOptions& opt, Method primary, Method secondary, size_t progress_base,
                     size_t progress_total, std::vector<Transfer>* deferred, const Ring* ring = nullptr) {
  std::vector<int32_t> visit = ring ? ranks_at(*ring) : std::vector<int32_t>{};
  std::erase(visit, -1);
  Planned out;
  out.time.assign(phases.size(), 0);
  std::vector<std::vector<Transfer>> waits(deferred ? phases.size() : 0);
  if (deferred) {  // phase by phase in order: who waits depends on who waited before
    std::vector<uint32_t> count(hosts.size(), 0);
    for (size_t p = 0; p < phases.size(); ++p) leaves.defer_excess(phases[p], count, waits[p]);
  }
  struct Tally {
    PlanStats st;
    size_t methods_used[2] = {0, 0};
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(opt.threads ? opt.threads : std::thread::hardware_concurrency(),
                                                           static_cast<unsigned>(std::max<size_t>(1, phases.size() / 16))));
  std::vector<Tally> tallies(threads);
  std::atomic<size_t> next{0};
  std::atomic<size_t> solved{0};
  auto one = [&](PhaseSolver& solver, size_t p, Tally& t) {
    Phase& ph = phases[p];
    size_t unroutable = 0;
    std::vector<Transfer>* wait = deferred ? &waits[p] : nullptr;
    const int target = wait ? 1 : leaves.phase_bound(ph);
    Phase first = ph;
    const size_t waiting = wait ? wait->size() : 0;
    SolveResult r = solver.solve(first, primary, unroutable, target, wait, p);
    Method used = primary;
    if (phase_slot_count(r.time) > static_cast<uint32_t>(target) && opt.method == Method::automatic && secondary != primary) {
      // Automatic: where the first method misses the target, try the other and keep the better.
      Phase second = ph;
      size_t u2 = 0;
      std::vector<Transfer> wait2;
      SolveResult r2 = solver.solve(second, secondary, u2, target, wait ? &wait2 : nullptr, p);
      const bool better = wait ? wait2.size() < wait->size() - waiting
                               : r2.time < r.time || (r2.time == r.time && r2.overflow < r.overflow);
      if (better) {
        first = std::move(second), r = r2, used = secondary, unroutable = u2;
        if (wait) wait->resize(waiting), wait->insert(wait->end(), wait2.begin(), wait2.end());
      }
    }
    ph = std::move(first);
    out.time[p] = r.time;
    ++t.methods_used[used == Method::structure];
    t.st.unroutable += unroutable;
    if (r.overflow > 0) ++t.st.phases_over;
    solved.fetch_add(1, std::memory_order_relaxed);
    t.st.worst_overflow = std::max(t.st.worst_overflow, r.overflow);
  };
  if (opt.progress) opt.progress("plan", progress_base, progress_total);  // before the threads: either may take every phase
  // kProbe phases spread over the composition, one after another, probe the routing: where the
  // greedy start beat its own choice in every one where that choice overflowed (at least half of
  // them), the other phases start from the greedy alone. Spread, not the first ones: a ring's first
  // shifts in topology order stay within the leaves, where the routing's choice fits and proves
  // nothing. Decided before the threads, so the schedule is the same for any number of them.
  bool greedy_only = false, repair = true;
  const bool walk = opt.walk && hosts.size() <= kMaxWalkHosts;
  std::vector<char> probed(phases.size(), 0);
  if (phases.size() >= kProbePhasesFrom) {
    PhaseSolver probe(ctx, table, hosts, opt.repair_rounds);
    probe.set_visit(ring ? &visit : nullptr);
    probe.set_walk(walk);
    for (size_t j = 0; j < kProbe; ++j) {
      const size_t p = j * phases.size() / kProbe;
      probed[p] = 1;
      one(probe, p, tallies[0]);
    }
    greedy_only = probe.compared() >= kProbe / 2 && probe.greedy_won() == probe.compared();
    // Where the tables force a worst link above the phases' targets (minhop on three levels: 16
    // where the leaves allow 1), the repair searches nearly every phase in vain: half the planner
    // at 10 000 hosts. Given up where it searched at least half of the probed phases and lowered
    // the worst link of at most one in eight of those (one phase in sixteen a level lower is
    // 0.4 % of the plan's time; the search doubles it). Not where transfers wait (packing): there
    // the repair also decides how many of them wait.
    repair = !opt.repair_probe || deferred || probe.repairs_tried() < kProbe / 2 || probe.repairs_lowered() * 8 > probe.repairs_tried();
  }
  out.st.greedy_start = greedy_only;
  out.st.repair_skipped = !repair;
  run_parallel(threads, [&](unsigned k) {  // the calling thread reports progress between its phases
    PhaseSolver solver(ctx, table, hosts, opt.repair_rounds);
    solver.set_greedy_only(greedy_only);
    solver.set_repair(repair);
    solver.set_walk(walk);
    solver.set_visit(ring ? &visit : nullptr);
    for (size_t p; (p = next.fetch_add(1, std::memory_order_relaxed)) < phases.size();) {
      if (k == 0 && opt.progress)
        report_or_stop(next, phases.size(), [&] { opt.progress("plan", progress_base + solved.load(std::memory_order_relaxed), progress_total); });
      if (!probed[p]) one(solver, p, tallies[k]);
    }
  });
  for (const Tally& t : tallies) {
    out.st.unroutable += t.st.unroutable;
    out.st.phases_over += t.st.phases_over;
    out.st.worst_overflow = std::max(out.st.worst_overflow, t.st.worst_overflow);
    out.methods_used[0] += t.methods_used[0], out.methods_used[1] += t.methods_used[1];
  }
  out.phases = std::move(phases);
  if (deferred)
    for (auto& w : waits) deferred->insert(deferred->end(), w.begin(), w.end());
  return out;
}

// Packing the waiting transfers holds them all and tries every receiver of every sender in every
// phase: worth it below this many hosts, where host subsets are what users plan.
constexpr size_t kMaxPackingHosts = 6000;
// Another composition is tried where the shifts take more than this times the least possible time.
// Below it (a full regular half fat-tree: 1726 against 1680 on 864 hosts, 190 against 176 on 96)
// the shifts stay: N-1 phases of one slot each, the compact version-2 file older peers read.
constexpr double kPackingGain = 1.10;
// Packing every transfer from no phases (below) up to this many hosts.
constexpr size_t kMaxWholePackingHosts = 2500;
// The leaf pairs (leaf_blocks.hpp) within this of the least time: the shifts are not packed after
// them. Beyond kMaxWholePackingHosts hosts the shifts' packing goes past its budget (2 600-3 456 of
// the 3 456-host tree: 7-8 M transfers wait; 30 s that lost to the pairs every time), below it the
// shifts' packing is tried unless the pairs are within 1 % (the 720-host two-level tree of 20
// hosts per 8 up-links: the pairs 0.989, the shifts packed 0.993).
constexpr double kPairsEnough = 1.07, kPairsEnoughSmall = 1.01;
// Packing the whole exchange from no phases holds every transfer (N^2) and costs about 500 units
// of work each (15 s for the 1.8 M of 1 350 hosts here); tried where the best composition so far
// misses the least time by more than 3 % (by 5 % from 1 000 hosts on: 1 350 director hosts at
// LMC 2 went from 0.959 to 0.967 for 15 s more), on host sets up to 2 500 (beyond, its budget
// would stop it).
constexpr double kWholePackingGain = 1.03, kWholePackingGainLarge = 1.05;
constexpr size_t kWholePackingLarge = 1000;

// Which ring the all-to-all's shifts run over: the given order unless its shifts, estimated from
// a sample, take more than kPackingGain times the least possible time and another ring's take at
// least 5 % less. A sample of 32 shifts costs a few hundredths of the full plan.
NamedRing choose_ring(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, const Leaves& leaves, double least,
                      const PlanOptions& opt, Method primary, Method secondary) {
  constexpr size_t kSample = 32;
  PlanOptions quiet = opt;
  quiet.progress = nullptr;
  auto estimate = [&](const NamedRing& named) {
    const Ring& r = named.ring;
    const std::vector<size_t> shifts = sample_shifts(r.size, kSample);
    std::vector<Phase> phases = ring_phases(r, shifts);
    if (phases.empty()) return 0.0;
    Planned p = solve_phases(ctx, table, hosts, leaves, std::move(phases), quiet, primary, secondary, 0, 0, nullptr, &r);
    return p.total() * static_cast<double>(r.size - 1) / static_cast<double>(shifts.size());
  };
  NamedRing best = given_ring(hosts.size());
  if (hosts.size() < 8) return best;
  const double plain = estimate(best);
  if (plain <= least * kPackingGain) return best;
  double best_time = plain * 0.95;
  std::vector<NamedRing> rings = candidate_rings(ctx, hosts, leaves, std::min(hosts.size() + hosts.size() / 8 + 8, static_cast<size_t>(plain)));
  for (size_t k = 0; k < rings.size(); ++k) {  // the samples report as one stage of their own
    if (opt.progress) opt.progress("rings", k, rings.size());
    const double t = estimate(rings[k]);
    if (t < best_time) best_time = t, best = std::move(rings[k]);
  }
  return best;
}

// A packing's phases compacted where they are more than 2 % over the least time (closer, the work
// would buy little): the emptiest emptied into the others while that works, within a budget per
// transfer of the exchange.
// Returns the phases removed (each had lasted one slot: a phase over a link's capacity is kept).
size_t compact(const OptionTable& table, const std::vector<int>& cap, std::vector<Phase>& phases, double least, uint64_t transfers,
               const PlanOptions& opt, PlanStats& tally) {
  if (!opt.compaction || static_cast<double>(phases.size()) <= least * 1.02) return 0;
  CompactWork work;
  work.budget = std::min(opt.compaction_work_max, opt.compaction_work_per_transfer * transfers);
  const size_t before = phases.size();
  if (opt.progress) work.progress = [&](size_t removed, size_t) { opt.progress("compact", removed, before - static_cast<size_t>(least)); };
  const size_t removed = compact_phases(table, cap, phases, static_cast<size_t>(std::ceil(least - 1e-9)), work);
  tally.phases_compacted += removed, tally.compaction_work += work.work;
  return removed;
}

}  // namespace

Schedule plan_groups(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<int32_t>& senders,
                     const std::vector<int32_t>& receivers, const PlanOptions& opt, PlanStats* stats) {
  Schedule s;
  s.hosts = hosts;
  s.senders = senders;
  s.receivers = receivers;
  s.bound = ctx.structure.transfer_bound;
  const size_t n = hosts.size();
  const uint64_t transfers = s.all_to_all() ? static_cast<uint64_t>(n) * (n - 1) : static_cast<uint64_t>(senders.size()) * receivers.size();
  const std::shared_ptr<const OptionTable> shared = option_table_of(ctx, hosts, opt.threads);
  const OptionTable& table = *shared;
  const Leaves leaves(ctx, hosts);

  Method primary = opt.method;
  if (primary == Method::automatic) primary = ctx.structure.two_level && !ctx.structure.top.empty() && n >= 64 ? Method::structure : Method::free;
  Method secondary = primary == Method::structure ? Method::free : (ctx.structure.two_level ? Method::structure : Method::free);

  // The least time the exchange can take decides whether another composition may be shorter:
  // where packing may follow, over the tables (a walk of every route: the links they leave as the
  // only path bound any composition, and where the shifts are already near that, packing cannot
  // win — on a 1 350-host director under OpenSM's updn it spent 30 s to find so); else over the
  // fabric (host links and cuts), which costs no walk.
  const bool may_pack = n <= kMaxPackingHosts && opt.packing;
  const double least = least_time(ctx, hosts, senders, receivers, may_pack).time;
  const bool may_interleave = !s.all_to_all() && opt.packing;
  // The phases are made anew for each composition tried (N-1 phases of N cells: 600 MB at 10 000
  // hosts; a copy would double the planner's peak).
  const NamedRing given = given_ring(n);
  const NamedRing ring = s.all_to_all() && opt.packing ? choose_ring(ctx, table, hosts, leaves, least, opt, primary, secondary) : given;
  struct Outcome {
    Planned plan;
    std::string how = "shifts";
    std::vector<int32_t> senders, receivers;
    double uncompacted = 0;  // its time before compaction: what decides whether the whole packing is tried, as before it
    std::string pairs;       // the leaf pairs: how they go, over which ring
  };
  PlanStats pack_tally;
  // One composition's way through: its shifts, the groups interleaved, the leaves' excess packed.
  size_t period = 1;  // d-mod-k's: the product of the up-link counts below the top level
  for (size_t l = 0; l + 1 < ctx.structure.per_level.size() && ctx.structure.per_level[l].common_up > 1; ++l)
    period *= static_cast<size_t>(ctx.structure.per_level[l].common_up);
  const LeafPaths leaf_paths{&table, unit_capacities(ctx)};
  const LeafSlots slots = leaf_slots(ctx, hosts, leaves);
  // The leaf pairs' phases and what the open shop left over, composed once for the solve and the
  // deferral after it (its choice of paths is the costly part: 23 s of 64 on 3 200 hosts).
  struct PairsCache {
    std::string over;
    std::vector<Phase> phases;
    std::vector<Transfer> leftover;
  };
  std::optional<PairsCache> pairs_cache;
  // The composition's phases over `over`'s order: its shifts, or with `blocks` the leaf pairs
  // (leaf_blocks.hpp) instead. `leftover`: where the pairs' leftover transfers
  // go (the last use of the pairs' phases); without it they follow in phases of their own.
  auto composition = [&](const NamedRing& over, bool blocks, std::vector<Transfer>* leftover = nullptr) {
    if (blocks) {
      if (!pairs_cache || pairs_cache->over != over.name) {
        pairs_cache.emplace();
        pairs_cache->over = over.name;
        pairs_cache->phases = leaf_block_phases(over.ring, leaves, period, &slots, &leaf_paths, &pairs_cache->leftover);
      }
      if (leftover) {
        *leftover = std::move(pairs_cache->leftover);
        std::vector<Phase> phases = std::move(pairs_cache->phases);
        pairs_cache.reset();
        return phases;
      }
      std::vector<Phase> phases = pairs_cache->phases;
      append_leftover_phases(pairs_cache->leftover, n, phases);
      return phases;
    }
    return s.all_to_all() ? (over.name != given.name ? ring_phases(over.ring) : shift_phases(n)) : group_phases(n, senders, receivers);
  };
  auto visit_of = [&](const NamedRing& over) { return over.name != given.name ? &over.ring : nullptr; };
  // A composition's phases, each at its least load.
  auto start = [&](const NamedRing& over, size_t base, size_t total, bool blocks) {
    Outcome out{.senders = senders, .receivers = receivers};
    if (blocks) {
      const LeafPairsWay way = leaf_pairs_plan(over.ring, leaves, &slots).way;
      out.how = way == LeafPairsWay::open_shop ? "leaf-shop" : "leaf-blocks";
      out.pairs = way == LeafPairsWay::open_shop ? "leaf pairs as an open shop, each phase's receivers taken where their paths have room"
                  : way == LeafPairsWay::blocks  ? "leaf pairs in blocks, as many transfers per phase as their up-links carry"
                                                 : "leaf pairs in blocks over the leaves' host ports (those not planned: empty slots), as many "
                                                   "transfers per phase as their up-links carry";
      out.pairs += " (" + over.name + ")";
    }
    out.plan = solve_phases(ctx, table, hosts, leaves, composition(over, blocks), opt, primary, secondary, base, total, nullptr, visit_of(over));
    out.uncompacted = out.plan.total();
    return out;
  };
  // Where it misses the least time: the groups interleaved, the excess packed. `beat`: the best
  // plan so far, which a packing must beat to go on (abandoned once it cannot).
  auto improve = [&](Outcome& out, const NamedRing& over, size_t base, size_t total, bool blocks, double beat) {
    const size_t m = blocks ? out.plan.phases.size() : s.all_to_all() ? over.ring.size - 1 : std::max(senders.size(), receivers.size());
    const Ring* visit = visit_of(over);
    if (may_interleave && out.plan.total() > least * kPackingGain) {
      // Two groups pair the k-th sender with the (k + shift)-th receiver: where a leaf's receivers
      // (senders) stand together in the list, a shift brings it more than its up-links carry. The
      // same groups with each leaf's ranks spread evenly over the list avoid that.
      std::vector<int32_t> snd = leaves.interleave(senders), rcv = leaves.interleave(receivers);
      Planned other = solve_phases(ctx, table, hosts, leaves, group_phases(n, snd, rcv), opt, primary, secondary, base + m, total, nullptr);
      if (other.total() < out.plan.total()) {
        out.plan = std::move(other), out.how = "interleaved";
        out.senders = std::move(snd), out.receivers = std::move(rcv);
      }
    }
    // The pairs' leftovers are few and cheap to pack (3 200 random hosts: 66 k, 1.3 s): packed from 7 % over.
    if (may_pack && out.plan.total() > least * (blocks ? kPairsEnough : kPackingGain)) {
      // The shifts, each at its least load, take longer than the exchange needs: some leaf or group
      // is the bottleneck in every shift. Let its excess wait and pack it into phases of its own.
      std::vector<Transfer> waiting, leftover;
      Planned packed = solve_phases(ctx, table, hosts, leaves, composition(over, blocks, &leftover), opt, primary, secondary, base + m * (1 + may_interleave), total,
                                    &waiting, visit);
      waiting.insert(waiting.end(), leftover.begin(), leftover.end());
      // Abandoned where it cannot take fewer slots than the shifts it would replace, or where it
      // takes more work than its budget (a routing that leaves most links unusable).
      PackWork work;
      work.budget = std::min(opt.packing_work_max, opt.packing_work_base + opt.packing_work_per_transfer * static_cast<uint64_t>(waiting.size()));
      if (opt.progress) work.progress = [&](size_t placed, size_t total) { opt.progress("pack", placed, total); };
      const bool done = pack_phases(ctx, table, hosts, leaves, unit_capacities(ctx), std::move(waiting), packed.phases,
                                    static_cast<size_t>(std::min(out.plan.total(), beat)), &work);
      pack_tally.packing_work += work.work, pack_tally.packing_budget += work.budget;
      ++pack_tally.packings, pack_tally.packings_over_budget += work.over;
      if (done) {
        std::erase_if(packed.phases, [](const Phase& ph) { return std::all_of(ph.dst.begin(), ph.dst.end(), [](int32_t d) { return d < 0; }); });
        const size_t removed = compact(table, unit_capacities(ctx), packed.phases, least, transfers, opt, pack_tally);
        packed.time = evaluate(ctx, hosts, packed.phases, false, opt.progress).phase_time;  // each phase's time from its routes
        if (packed.total() < out.plan.total()) out.plan = std::move(packed), out.how = blocks ? out.how + "+packed" : "packed", out.uncompacted = out.plan.total() + static_cast<double>(removed);
      }
    }
    if (out.how.find("packed") == std::string::npos) out.uncompacted = out.plan.total();
  };
  auto pipeline = [&](const NamedRing& over, size_t base, size_t total, bool blocks = false, double beat = HUGE_VAL) {
    Outcome out = start(over, base, total, blocks);
    improve(out, over, base, total, blocks, beat);
    return out;
  };
  const bool try_ring = ring.name != given.name;
  const size_t m = s.all_to_all() ? ring.ring.size - 1 : std::max(senders.size(), receivers.size());
  const size_t passes = 1 + may_pack + may_interleave;
  // Over the ring; and where the ring misses the least time and packing may follow, the given
  // order too (its packing may do better where a leaf, not the alignment, is the bottleneck).
  const NamedRing& first = try_ring ? ring : given;
  const size_t first_total = m * passes * (try_ring && may_pack ? 2 : 1);
  Outcome best = start(first, 0, first_total, false);
  // Short of the least time where a leaf has more hosts than up-links and the tables let every
  // up-link carry its share (on OpenSM's minhop over three levels they do not: 0.83 of the fabric;
  // the blocks lost there and took 7 s): the leaf pairs, before the shifts' packing, which then
  // has their plan to beat and is abandoned as soon as it cannot (3 000 random hosts of the
  // 3 456-host tree: 1 000 M units of work spent in vain before).
  std::optional<Outcome> pairs;
  if (opt.leaf_pairs && s.all_to_all() && may_pack && best.plan.total() > least * kPackingGain && leaf_blocks_may_help(leaves) &&
      least <= least_time(ctx, hosts, senders, receivers, false).time * 1.02) {
    // Over the ring, else the topology order: the pairs' windows take consecutive receivers of
    // their leaf, which in the given (name) order share nothing the routing spreads by.
    NamedRing over = try_ring ? ring : given;
    if (!try_ring)
      for (NamedRing& r : candidate_rings(ctx, hosts, leaves, n))
        if (r.name.rfind("topology order", 0) == 0) {
          over = std::move(r);
          break;
        }
    // Not where their own phase count misses the least time by 10 %: blocks whose leaves hold
    // unequal host counts last as long as their largest pairs (where the open shop does not
    // do better, leaf_block_phase_count).
    const size_t count = leaf_block_phase_count(over.ring, leaves, &slots);
    if (static_cast<double>(count) <= least * kPackingGain) pairs = pipeline(over, 0, 2 * count, true);  // solved, then deferred
    pairs_cache.reset();
  }
  auto best_so_far = [&] { return std::min(best.plan.total(), pairs ? pairs->plan.total() : HUGE_VAL); };
  const bool pairs_enough = pairs && pairs->plan.total() <= least * (n > kMaxWholePackingHosts ? kPairsEnough : kPairsEnoughSmall);
  if (!pairs_enough) improve(best, first, 0, first_total, false, best_so_far());
  bool on_ring = try_ring;
  if (try_ring && may_pack && best_so_far() > least * kPackingGain && !pairs_enough) {
    Outcome other = pipeline(given, m * passes, m * passes * 2, false, best_so_far());
    if (other.plan.total() < best.plan.total()) best = std::move(other), on_ring = false;
  }
  if (pairs && pairs->plan.total() < best.plan.total()) best = std::move(*pairs);
  const double whole_gain = n < kWholePackingLarge ? kWholePackingGain : kWholePackingGainLarge;
  if (may_pack && opt.whole_packing && n <= kMaxWholePackingHosts && best.uncompacted > least * whole_gain) {
    // Still short of the least time: every transfer packed into phases from none, no shifts. Where
    // a leaf's up-links or the hosts' own links bound the exchange, the shifts send from every host
    // at once and leave the leaf's excess for later; packing keeps the bottleneck busy in every phase.
    Outcome whole{.how = "packed-whole", .senders = senders, .receivers = receivers};
    std::vector<int32_t> from = senders, to = receivers;
    if (s.all_to_all()) from.resize(n), std::iota(from.begin(), from.end(), 0), to = from;
    std::vector<Transfer> all;
    all.reserve(from.size() * to.size());
    for (size_t a = 0; a < from.size(); ++a)  // each sender's receivers from its own place on: no two start alike
      for (size_t k = 0; k < to.size(); ++k)
        if (const int32_t d = to[(a + k) % to.size()]; d != from[a]) all.push_back({from[a], d});
    PackWork work;
    work.budget = std::min(opt.packing_work_max, opt.packing_work_base + opt.packing_work_per_transfer * static_cast<uint64_t>(all.size()));
    if (opt.progress) work.progress = [&](size_t placed, size_t total) { opt.progress("pack", placed, total); };
    const bool done = pack_phases(ctx, table, hosts, leaves, unit_capacities(ctx), std::move(all), whole.plan.phases,
                                  static_cast<size_t>(best.plan.total()), &work);
    pack_tally.packing_work += work.work, pack_tally.packing_budget += work.budget;
    ++pack_tally.packings, pack_tally.packings_over_budget += work.over;
    if (done) {
      std::erase_if(whole.plan.phases, [](const Phase& ph) { return std::all_of(ph.dst.begin(), ph.dst.end(), [](int32_t d) { return d < 0; }); });
      compact(table, unit_capacities(ctx), whole.plan.phases, least, transfers, opt, pack_tally);
      const LoadReport load = evaluate(ctx, hosts, whole.plan.phases, false, opt.progress);
      whole.plan.time = load.phase_time;
      whole.plan.st.unroutable = load.broken;
      for (int worst : load.phase_max) {
        whole.plan.st.phases_over += worst > s.bound;
        whole.plan.st.worst_overflow = std::max(whole.plan.st.worst_overflow, worst - s.bound);
      }
      if (whole.plan.total() < best.plan.total()) best = std::move(whole), on_ring = false;
    }
  }
  Planned& plan = best.plan;
  const std::string& how = best.how;
  s.senders = std::move(best.senders), s.receivers = std::move(best.receivers);
  PlanStats st = plan.st;
  st.packing_work = pack_tally.packing_work, st.packing_budget = pack_tally.packing_budget;
  st.packings = pack_tally.packings, st.packings_over_budget = pack_tally.packings_over_budget;
  st.phases_compacted = pack_tally.phases_compacted, st.compaction_work = pack_tally.compaction_work;
  const size_t* methods_used = plan.methods_used;
  st.method = methods_used[1] && methods_used[0] ? to_string(primary) + "+" + to_string(secondary)
                                                 : to_string(methods_used[1] ? Method::structure : Method::free);
  if (on_ring) st.method += "+ring", st.composition = "shifts over " + ring.name +
                                   (ring.ring.size > n ? " (" + std::to_string(ring.ring.size - n) + " empty: their senders idle)" : "");
  if (how != "shifts") st.method += "+" + how;
  if (how == "packed-whole") st.composition = "every transfer packed into phases (no shifts)";
  if (!best.pairs.empty()) st.composition = best.pairs;
  s.phases = std::move(plan.phases);
  s.method = st.method;
  if (stats) *stats = st;
  return s;
}

}  // namespace ibroute::schedule
