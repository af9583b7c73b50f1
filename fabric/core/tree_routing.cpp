#include "ibroute/fabric/tree_routing.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <numeric>
#include <tuple>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/routes.hpp"

namespace ibroute::fabric {

namespace {

// A set of small indices (switches or roots) as bits: the reachability sets are dense.
class Bits {
 public:
  explicit Bits(size_t n = 0) : w_((n + 63) / 64, 0) {}
  void set(size_t i) { w_[i >> 6] |= uint64_t{1} << (i & 63); }
  bool test(size_t i) const { return (w_[i >> 6] >> (i & 63)) & 1; }
  void merge(const Bits& o) {
    for (size_t k = 0; k < w_.size(); ++k) w_[k] |= o.w_[k];
  }
  bool intersects(const Bits& o) const {
    for (size_t k = 0; k < w_.size(); ++k)
      if (w_[k] & o.w_[k]) return true;
    return false;
  }

 private:
  std::vector<uint64_t> w_;
};

// Switches a route may be anchored at, with what reaches them: the anchor indices each switch
// reaches going up (itself, for an anchor) and the anchors that reach each switch going down.
struct Anchors {
  std::vector<int> list;          // anchor index -> switch index
  std::vector<int> of;            // switch index -> anchor index, -1
  std::vector<Bits> above;        // per switch
  std::vector<Bits> reached_by;   // per switch
  size_t size() const { return list.size(); }
};

// The tree as routing sees it: switches with a level, their links up and down (links within a
// level and loopbacks are never used), what each reaches downwards. Two anchor sets: the tops
// (switches with no link up: every up*/down* route can turn there) and the hubs (the lowest
// switches that reach every leaf: where the all-to-all's routes should turn; on a two-level tree
// the spines, on a pod tree the cores, in a director the line ASICs, not its spine ASICs).
struct Tree {
  std::vector<int> index;          // node -> switch index, -1 outside the tree
  std::vector<int32_t> node;       // switch index -> node
  std::vector<int> level;          // switch index -> level
  std::vector<std::vector<uint8_t>> up, down;  // switch index -> ports to switches above / below
  std::vector<Bits> below;         // switches reachable going down only, itself included
  Anchors tops, hubs;

  int peer(int sw, uint8_t port, const Fabric& f) const { return index[f.nodes[node[sw]].ports[port].peer_node]; }
};

bool link_usable(const Fabric& f, const Port& p) {
  return port_usable(p) && port_usable(f.nodes[p.peer_node].ports[p.peer_port]);
}

Tree build_tree(const Fabric& f, const FabricStructure& s) {
  Tree t;
  t.index.assign(f.nodes.size(), -1);
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch() && i < s.level.size() && s.level[i] >= 1) {
      t.index[i] = static_cast<int>(t.node.size());
      t.node.push_back(static_cast<int32_t>(i));
      t.level.push_back(s.level[i]);
    }
  const size_t n = t.node.size();
  if (n == 0) throw InputError("no switch levels: the fabric has no switch that leads to a host");
  t.up.resize(n), t.down.resize(n);
  for (size_t x = 0; x < n; ++x) {
    const Node& node = f.nodes[t.node[x]];
    for (int p = 1; p <= node.num_ports(); ++p) {
      const Port& port = node.ports[p];
      if (!port.connected() || !link_usable(f, port)) continue;
      const int y = t.index[port.peer_node];
      if (y < 0 || t.level[y] == t.level[x]) continue;
      (t.level[y] > t.level[x] ? t.up : t.down)[x].push_back(static_cast<uint8_t>(p));
    }
  }
  std::vector<int> by_level(n);
  std::iota(by_level.begin(), by_level.end(), 0);
  std::stable_sort(by_level.begin(), by_level.end(), [&](int a, int b) { return t.level[a] < t.level[b]; });
  t.below.assign(n, Bits(n));
  for (int x : by_level) {  // children first
    t.below[x].set(x);
    for (uint8_t p : t.down[x]) t.below[x].merge(t.below[t.peer(x, p, f)]);
  }
  auto anchor = [&](const std::vector<char>& is) {
    Anchors a;
    a.of.assign(n, -1);
    for (int x : by_level)
      if (is[x]) a.of[x] = static_cast<int>(a.list.size()), a.list.push_back(x);
    a.above.assign(n, Bits(a.size()));
    for (auto it = by_level.rbegin(); it != by_level.rend(); ++it) {  // parents first
      const int x = *it;
      if (a.of[x] >= 0) a.above[x].set(a.of[x]);
      for (uint8_t p : t.up[x]) a.above[x].merge(a.above[t.peer(x, p, f)]);
    }
    a.reached_by.assign(n, Bits(a.size()));
    for (size_t k = 0; k < a.size(); ++k)
      for (size_t x = 0; x < n; ++x)
        if (t.below[a.list[k]].test(x)) a.reached_by[x].set(k);
    return a;
  };
  std::vector<char> is(n, 0);
  for (size_t x = 0; x < n; ++x) is[x] = t.up[x].empty();
  t.tops = anchor(is);
  // Hubs: every switch of the lowest level at which a switch reaches more than half the leaves
  // (so that a few missing cables do not demote a spine, and the aggregation switches of a
  // two-pod tree, which reach half, are not taken for the top).
  std::vector<size_t> leaf_list;
  for (size_t x = 0; x < n; ++x)
    if (t.level[x] == 1) leaf_list.push_back(x);
  int lowest = INT32_MAX;
  for (size_t x = 0; x < n; ++x) {
    size_t reached = 0;
    for (size_t y : leaf_list) reached += t.below[x].test(y);
    if (2 * reached > leaf_list.size()) lowest = std::min(lowest, t.level[x]);
  }
  for (size_t x = 0; x < n; ++x) is[x] = t.level[x] == lowest;
  t.hubs = lowest == INT32_MAX ? t.tops : anchor(is);
  return t;
}

// The distinct switches above `x`, in the order of the ports that lead to them.
std::vector<int> parents(const Tree& t, int x, const Fabric& f) {
  std::vector<int> out;
  for (uint8_t p : t.up[x]) {
    const int y = t.peer(x, p, f);
    if (std::find(out.begin(), out.end(), y) == out.end()) out.push_back(y);
  }
  return out;
}

// The roots in the order consecutive destinations cycle through them, seen from `start`: every
// root keyed by the first way up to it (which distinct parent at each level), the level-1 choice
// varying fastest. `stride` is the step between a port's LIDs that changes the choice at every level.
struct RootOrder {
  std::vector<int> order;  // root indices
  long stride = 1;
};

RootOrder root_order(const Tree& t, const Anchors& a, int start, const Fabric& f) {
  const size_t r = a.size();
  std::vector<std::vector<int>> key(r);
  std::vector<char> seen(t.node.size(), 0), has_key(r, 0);
  std::vector<int> digits;
  // Depth-first up from `start`, each switch once (bounded by the links, on any tree).
  auto climb = [&](auto&& self, int x) -> void {
    seen[x] = 1;
    if (a.of[x] >= 0) {
      if (!has_key[a.of[x]]) key[a.of[x]] = digits, has_key[a.of[x]] = 1;
      return;  // an anchor ends the climb
    }
    const std::vector<int> ps = parents(t, x, f);
    for (size_t j = 0; j < ps.size(); ++j)
      if (!seen[ps[j]]) {
        digits.push_back(static_cast<int>(j));
        self(self, ps[j]);
        digits.pop_back();
      }
  };
  climb(climb, start);
  RootOrder out;
  out.order.resize(r);
  std::iota(out.order.begin(), out.order.end(), 0);
  auto less = [&](int x, int y) {
    if (has_key[x] != has_key[y]) return has_key[x] > has_key[y];
    const auto& ka = key[x];
    const auto& kb = key[y];
    for (size_t i = std::max(ka.size(), kb.size()); i-- > 0;) {  // the highest level's choice first
      const int da = i < ka.size() ? ka[i] : -1, db = i < kb.size() ? kb[i] : -1;
      if (da != db) return da < db;
    }
    return f.nodes[t.node[a.list[x]]].guid < f.nodes[t.node[a.list[y]]].guid;
  };
  std::sort(out.order.begin(), out.order.end(), less);
  // Mixed radix 1 + u1 + u1*u2 + ... along the first way up: one step changes every level's digit.
  long stride = 0, product = 1;
  for (int x = start; a.of[x] < 0 && !t.up[x].empty();) {
    const std::vector<int> ps = parents(t, x, f);
    stride += product;
    product *= static_cast<long>(ps.size());
    x = ps.front();
  }
  out.stride = std::max(1L, stride);
  return out;
}

// A LID range to route: its owner's switch (where it leaves the tree) and the port there.
struct Destination {
  uint16_t base = 0;
  uint32_t count = 1;
  int target = -1;        // switch index
  uint8_t last_port = 0;  // out-port at the target: the CA's cable, or 0 for the switch itself
};

// A local search on the links' all-to-all totals, after the construction: at LMC 0 they are what
// no plan can change (a link's total is the least time of any plan over the tables). A leaf's
// entry for a ranked destination carries all its hosts' transfers there as one unit; it is moved
// to another up-link where that lowers the squared excess of the totals over the floor (what some
// link must carry anyway) on the links the two ways do not share. Only a way that crosses a link
// above the floor can gain, so only those are tried. The switches above keep their entries: the
// new way climbs one link and then follows them, so it stays up*/down*. Rounds until none gains,
// within a budget of hops looked at (the same tables on any machine).
void balance_first_hops(const Fabric& f, const Tree& t, const std::vector<Destination>& dest, size_t ranked,
                        const std::vector<int64_t>& sources, const std::vector<size_t>& base, std::vector<int64_t>& load,
                        TreeRouting& out) {
  constexpr uint64_t kBudget = 400'000'000;
  constexpr int kRounds = 6;
  uint64_t work = 0;
  std::vector<size_t> cur, alt;
  // The load indices of the way from switch y to the target by the entries there are.
  auto way = [&](int y, const Destination& d, std::vector<size_t>& links) {
    links.clear();
    for (int hop = 0; hop < 16; ++hop) {
      if (y == d.target) return true;
      const uint8_t p = out.lft[t.node[y]][d.base];
      if (p == kNoRoute || p == 0) return false;
      links.push_back(base[y] + p);
      y = t.peer(y, p, f);
      if (y < 0) return false;
    }
    return false;
  };
  std::vector<int> leaves;
  for (size_t x = 0; x < t.node.size(); ++x)
    if (t.level[x] == 1 && sources[x] > 0) leaves.push_back(static_cast<int>(x));
  // What some link must carry anyway: a host's messages, a leaf's traffic over its up-links. Only
  // the load above it costs (squared: the heaviest links give first); below it a link is free.
  int64_t floor = static_cast<int64_t>(ranked) - 1;
  for (size_t x = 0; x < t.node.size(); ++x)
    if (sources[x] > 0 && !t.up[x].empty())
      floor = std::max<int64_t>(floor, sources[x] * (static_cast<int64_t>(ranked) - sources[x]) / static_cast<int64_t>(t.up[x].size()));
  auto penalty = [&](int64_t total) { return total > floor ? (total - floor) * (total - floor) : int64_t{0}; };
  for (int round = 0; round < kRounds && work < kBudget; ++round) {
    size_t moves = 0;
    for (size_t label = 0; label < ranked && work < kBudget; ++label) {
      const Destination& d = dest[label];
      const Bits& reach = t.tops.reached_by[d.target];
      for (int x : leaves) {
        if (x == d.target || t.below[x].test(d.target)) continue;
        uint8_t& entry = out.lft[t.node[x]][d.base];
        if (entry == kNoRoute || !way(x, d, cur)) continue;
        work += cur.size();
        if (std::none_of(cur.begin(), cur.end(), [&](size_t l) { return load[l] > floor; })) continue;  // nothing to gain
        const int64_t m = sources[x];
        uint8_t best = entry;
        int64_t best_gain = 0;
        for (uint8_t p : t.up[x]) {
          const int y = t.peer(x, p, f);
          if (p == entry || !t.tops.above[y].intersects(reach) || !way(y, d, alt)) continue;
          alt.push_back(base[x] + p);
          work += cur.size() + alt.size();
          int64_t gain = 0;  // penalty before - after, over the links not on both ways
          for (size_t l : cur)
            if (std::find(alt.begin(), alt.end(), l) == alt.end()) gain += penalty(load[l]) - penalty(load[l] - m);
          for (size_t l : alt)
            if (std::find(cur.begin(), cur.end(), l) == cur.end()) gain -= penalty(load[l] + m) - penalty(load[l]);
          if (gain > best_gain) best_gain = gain, best = p;
        }
        if (best == entry) continue;
        for (size_t l : cur) load[l] -= m;
        entry = best;
        way(x, d, cur);
        for (size_t l : cur) load[l] += m;
        ++moves;
      }
    }
    if (moves == 0) break;
  }
}

// Spread routing: no hub per LID. Each destination's routes are laid out as the flow of the
// all-to-all towards it, over the loads the other destinations leave on the links: the switches
// with sources climb first, lowest level first, each by the up-link (among those from which the
// target can be reached up*/down*) that carries least, passing its flow on; then, from the top
// down, every switch above the target descends by the way whose next two links carry least. Ties
// rotate by the destination's label, so that consecutive labels leave a switch by different
// links. A second pass lays every destination again, seeing all the others' loads. Where the
// levels are not a k-ary tree (edge switches cabled to several directors, line ASICs shared by
// edges that share nothing else) this keeps the links' totals even where the hubs concentrate a
// leaf's destinations on one of its links.
// The spread routing's state: the links' loads, each switch's flow towards the LID being laid and,
// per LID, the last links into its target.
class SpreadRouter {
 public:
  SpreadRouter(const Fabric& f, const Tree& t, const std::vector<Destination>& dest, size_t ranked, TreeRouting& out)
      : f_(f), t_(t), dest_(dest), ranked_(ranked), out_(out), n_(t.node.size()), base_(n_ + 1, 0) {
    for (size_t x = 0; x < n_; ++x) base_[x + 1] = base_[x] + f.nodes[t.node[x]].ports.size();
    load_.assign(base_[n_], 0), sources_.assign(n_, 0), flow_.assign(n_, 0);
    mask_of_.assign(n_, 0), mask_gen_.assign(n_, 0);
    for (size_t k = 0; k < ranked; ++k) ++sources_[dest[k].target];
    ascending_.resize(n_);
    std::iota(ascending_.begin(), ascending_.end(), 0);
    std::stable_sort(ascending_.begin(), ascending_.end(), [&](int a, int b) { return t.level[a] < t.level[b]; });
  }

  // The base LIDs first, twice, their first hops balanced; then every port's other LIDs, each
  // leaving by links the LIDs before it did not take. So at any LMC the base LIDs are routed as at
  // LMC 0 (a plan over them alone is the LMC 0 plan: more LIDs never cost), and the other LIDs
  // avoid the base LIDs' final ways (a 928-host director at LMC 2: 0.980 of the fabric with the
  // base LIDs unbalanced, against 0.993 at LMC 0).
  void run() {
    for (int pass = 0; pass < 2; ++pass)
      for (size_t label = 0; label < dest_.size(); ++label) route_lid(label, 0, pass);
    balance_first_hops(f_, t_, dest_, ranked_, sources_, base_, load_, out_);
    for (size_t label = 0; label < dest_.size(); ++label)
      for (uint32_t off = 1; off < dest_[label].count; ++off) route_lid(label, off, 0);
  }

 private:
  // One LID of destination `label` (the port's `off`-th) routed; pass 1 routes a base LID again
  // against all the others, its flow lifted first.
  void route_lid(size_t label, uint32_t off, int pass) {
    const Destination& d = dest_[label];
    const uint32_t lid = d.base + off;
    // The 2^LMC LIDs of a port: shifted by a prime stride so that they leave by other links.
    const long v = static_cast<long>(label) + static_cast<long>(off) * 7919;
    // Only the base LIDs of ranked hosts carry the all-to-all; a host sends nothing to itself.
    const bool carries = off == 0 && label < ranked_;
    auto reset = [&] {
      for (size_t x = 0; x < n_; ++x) flow_[x] = carries ? sources_[x] - (static_cast<int>(x) == d.target) : 0;
    };
    if (pass > 0) {
      if (!carries) return;
      reset();
      walk(d, lid, -1);
    }
    reset();
    start_lid(d);
    const bool climbed = climb(d, off, v, carries), descended = descend(d, off, v);
    out_.routed_lids += pass == 0 && (climbed || descended);
  }

  // The candidate with the least cost, ties taken in turn from an offset of the label and switch.
  template <class Cost>
  uint8_t choose(long v, int x, Cost cost) const {
    const size_t m = cand_.size(), first = static_cast<size_t>(v + x) % m;
    uint8_t pick = cand_[first];
    auto low = cost(pick);
    for (size_t i = 1; i < m; ++i)
      if (const auto c = cost(cand_[(first + i) % m]); c < low) low = c, pick = cand_[(first + i) % m];
    return pick;
  }

  // Lays (sign +1) or lifts (-1) a destination's flow along the entries it has.
  void walk(const Destination& d, uint32_t lid, int64_t sign) {
    auto step = [&](int x) {
      const uint8_t p = out_.lft[t_.node[x]][lid];
      if (x != d.target && p != kNoRoute && p != 0)
        load_[base_[x] + p] += sign * flow_[x], flow_[t_.peer(x, p, f_)] += flow_[x];
    };
    for (int x : ascending_)  // the climbs first, as laid
      if (!t_.below[x].test(d.target)) step(x);
    for (auto it = ascending_.rbegin(); it != ascending_.rend(); ++it)
      if (t_.below[*it].test(d.target)) step(*it);
  }

  // The port's other LIDs are the plan's alternatives: each leaves a switch by a link the LIDs
  // before it did not take, where there is one (else they would repeat the base path).
  int taken(const Destination& d, uint32_t off, int x, uint8_t p) const {
    int k = 0;
    for (uint32_t o = 0; o < off; ++o) k += out_.lft[t_.node[x]][d.base + o] == p;
    return k;
  }

  // The last links, into the target's switch, and per climbing choice which of them it can still
  // reach: a director with fewer cables into the target's leaf gets a smaller share of its
  // traffic. Sources that chose a set of last links before in this LID count there already
  // (`pending_`), so that the flow splits instead of following the first.
  void start_lid(const Destination& d) {
    last_.clear();
    for (uint8_t q : t_.up[d.target]) {
      const Port& port = f_.nodes[t_.node[d.target]].ports[q];
      last_.push_back({t_.index[port.peer_node], base_[t_.index[port.peer_node]] + port.peer_port});
    }
    pending_.clear();
    ++generation_;
  }
  uint64_t reachable(const Destination& d, int y) {  // memoised per LID: many switches climb to the same few
    if (mask_gen_[y] == generation_) return mask_of_[y];
    // A switch above the target descends from there: only the last links below it; one that is
    // not climbs on, to any last link a top above it reaches.
    const bool descends = t_.below[y].test(d.target);
    uint64_t mask = 0;
    for (size_t i = 0; i < last_.size() && i < 64; ++i)
      if (t_.below[y].test(last_[i].first) ||
          (!descends && t_.tops.above[y].intersects(t_.tops.reached_by[last_[i].first])))
        mask |= uint64_t{1} << i;
    mask_gen_[y] = generation_;
    return mask_of_[y] = mask;
  }
  int64_t& pending_of(uint64_t mask) {
    for (auto& [m, sum] : pending_)
      if (m == mask) return sum;
    return pending_.emplace_back(mask, 0).second;
  }

  // The climbs, lowest level first. Returns whether any switch got an entry.
  bool climb(const Destination& d, uint32_t off, long v, bool carries) {
    const uint32_t lid = d.base + off;
    const Bits& reach = t_.tops.reached_by[d.target];
    bool routed = false;
    for (int x : ascending_) {
      if (x == d.target || t_.below[x].test(d.target)) continue;
      cand_.clear();
      for (uint8_t p : t_.up[x])
        if (t_.tops.above[t_.peer(x, p, f_)].intersects(reach)) cand_.push_back(p);
      uint8_t port = kNoRoute;
      if (!cand_.empty()) {
        // The mean load of the last links a choice leads to (scaled to stay whole), then its own link.
        port = choose(v, x, [&](uint8_t p) {
          const uint64_t mask = reachable(d, t_.peer(x, p, f_));
          int64_t sum = pending_of(mask);
          for (size_t i = 0; i < last_.size() && i < 64; ++i)
            if (mask >> i & 1) sum += load_[last_[i].second];
          const int64_t mean = mask ? sum * 720720 / std::popcount(mask) : 0;
          return std::tuple(taken(d, off, x, p), mean, load_[base_[x] + p]);
        });
        if (carries) pending_of(reachable(d, t_.peer(x, port, f_))) += sources_[x];
        load_[base_[x] + port] += flow_[x];
        flow_[t_.peer(x, port, f_)] += flow_[x];
        routed = true;
      }
      out_.lft[t_.node[x]][lid] = port;
    }
    return routed;
  }

  // The ways down, top first. Returns whether any switch got an entry.
  bool descend(const Destination& d, uint32_t off, long v) {
    const uint32_t lid = d.base + off;
    bool routed = false;
    for (auto it = ascending_.rbegin(); it != ascending_.rend(); ++it) {
      const int x = *it;
      if (x == d.target) {
        out_.lft[t_.node[x]][lid] = d.last_port;
        routed = true;
        continue;
      }
      if (!t_.below[x].test(d.target)) continue;
      cand_.clear();
      for (uint8_t p : t_.down[x])
        if (t_.below[t_.peer(x, p, f_)].test(d.target)) cand_.push_back(p);
      // A way down costs the heavier of its first link and the lightest link after it.
      const uint8_t port = choose(v, x, [&](uint8_t p) {
        const int y = t_.peer(x, p, f_);
        int64_t after = 0;
        if (y != d.target) {
          after = INT64_MAX;
          for (uint8_t q : t_.down[y])  // with the flow that already climbed to y in this LID
            if (t_.below[t_.peer(y, q, f_)].test(d.target)) after = std::min(after, load_[base_[y] + q] + flow_[y]);
        }
        return std::pair(taken(d, off, x, p), std::max(load_[base_[x] + p], after));
      });
      load_[base_[x] + port] += flow_[x];
      flow_[t_.peer(x, port, f_)] += flow_[x];
      out_.lft[t_.node[x]][lid] = port;
      routed = true;
    }
    return routed;
  }

  const Fabric& f_;
  const Tree& t_;
  const std::vector<Destination>& dest_;
  size_t ranked_;
  TreeRouting& out_;
  size_t n_;
  std::vector<size_t> base_;  // link load index: base_[x] + port
  std::vector<int64_t> load_, sources_, flow_;
  std::vector<int> ascending_;
  std::vector<uint8_t> cand_;
  std::vector<std::pair<int, size_t>> last_;           // links into the target: (switch above, load index)
  std::vector<std::pair<uint64_t, int64_t>> pending_;  // flow of this LID per set of last links
  std::vector<uint64_t> mask_of_;                      // per switch: the last links it reaches (this LID)
  std::vector<uint32_t> mask_gen_;
  uint32_t generation_ = 0;
};

void route_spread(const Fabric& f, const Tree& t, const std::vector<Destination>& dest, size_t ranked, TreeRouting& out) {
  SpreadRouter(f, t, dest, ranked, out).run();
}

std::string describe_port(const Fabric& f, CaPort p) { return f.nodes[p.node].desc + " port " + std::to_string(p.port); }

// The destinations, labelled by rank: the ordered hosts first, then every other CA port, then the
// switches. Throws InputError for an order that names no CA port of the tree, or one twice.
std::vector<Destination> destinations(const Fabric& f, const Tree& t, const std::vector<CaPort>& order) {
  const size_t n = t.node.size();
  std::vector<Destination> dest;
  std::vector<std::vector<char>> port_taken(f.nodes.size());
  auto ca_destination = [&](CaPort p, bool strict) -> bool {
    const Node& node = f.nodes[p.node];
    if (node.is_switch() || p.port < 1 || p.port > node.num_ports()) {
      if (strict) throw InputError(describe_port(f, p) + " is not a CA port");
      return false;
    }
    const Port& port = node.ports[p.port];
    const int sw = port.connected() ? t.index[port.peer_node] : -1;
    if (port.base_lid == 0 || sw < 0 || !link_usable(f, port)) {
      if (strict) throw InputError(describe_port(f, p) + " has no LID or no working link to a switch of the tree");
      return false;
    }
    auto& mark = port_taken[p.node];
    mark.resize(node.ports.size(), 0);
    if (mark[p.port]) {
      if (strict) throw InputError(describe_port(f, p) + " is in the rank order twice");
      return false;
    }
    mark[p.port] = 1;
    dest.push_back({port.base_lid, port.lid_count(), sw, port.peer_port});
    return true;
  };
  for (CaPort p : order) {
    if (p.node < 0 || static_cast<size_t>(p.node) >= f.nodes.size()) throw InputError("rank order names a node outside the fabric");
    ca_destination(p, true);
  }
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!f.nodes[i].is_switch())
      for (int p = 1; p <= f.nodes[i].num_ports(); ++p) ca_destination({static_cast<int32_t>(i), static_cast<uint8_t>(p)}, false);
  for (size_t x = 0; x < n; ++x) {
    const Port& mgmt = f.nodes[t.node[x]].ports.at(0);
    if (mgmt.base_lid) dest.push_back({mgmt.base_lid, mgmt.lid_count(), static_cast<int>(x), 0});
  }
  return dest;
}

}  // namespace

TreeRouting route_tree(const Fabric& f, const FabricStructure& s, const std::vector<CaPort>& order, TreeStyle style) {
  const Tree t = build_tree(f, s);
  const size_t n = t.node.size();

  const std::vector<Destination> dest = destinations(f, t, order);
  uint32_t top_lid = 0;
  for (const Destination& d : dest) top_lid = std::max(top_lid, d.base + d.count - 1);
  if (dest.empty() || top_lid == 0) throw InputError("no LIDs assigned: run the subnet manager before computing routes");
  if (top_lid > static_cast<uint32_t>(kMaxLid)) throw InputError("a LID range ends beyond the unicast range (0xBFFF)");

  TreeRouting out;
  out.lft.resize(f.nodes.size());
  for (int32_t node : t.node) out.lft[node].assign(top_lid + 1, kNoRoute);

  if (style == TreeStyle::spread) {
    route_spread(f, t, dest, order.size(), out);
    return out;
  }

  const int start = order.empty() ? dest.front().target : t.index[f.nodes[order.front().node].ports[order.front().port].peer_node];
  const RootOrder ro = root_order(t, t.hubs, start, f);
  const auto nhubs = static_cast<long>(ro.order.size());
  for (int k : ro.order) out.hubs.push_back(t.node[t.hubs.list[k]]);

  // LIDs per (anchor, target switch): where the preferred hub cannot reach the target, the least
  // used of those that can takes it, so that a lost cable spreads its load over the others.
  // Counted twice: over every LID (what a port's other LIDs read) and over the base LIDs alone
  // (what base LIDs read), so that the base LIDs are routed as at LMC 0 whatever the LMC.
  std::vector<uint32_t> hub_use(t.hubs.size() * n, 0), top_use(t.tops.size() * n, 0);
  std::vector<uint32_t> hub_base_use(hub_use.size(), 0), top_base_use(top_use.size(), 0);
  std::vector<char> entry(n, 0);  // switches with a CA: where traffic starts climbing
  for (const Destination& d : dest)
    if (d.last_port != 0) entry[d.target] = 1;
  std::vector<uint32_t> on_path(n, 0);  // generation mark: the switch is on this LID's down path
  std::vector<uint8_t> path_port(n, 0);
  std::vector<uint8_t> cand;
  uint32_t gen = 0;
  auto pick = [](const std::vector<uint8_t>& c, long q) { return c[static_cast<size_t>(q % static_cast<long>(c.size()))]; };
  auto least_used = [&](const Anchors& a, const std::vector<uint32_t>& use, int target, long from) {
    int best = -1;
    for (size_t k = 0; k < a.size(); ++k) {
      const int r = static_cast<int>((static_cast<size_t>(from) + k) % a.size());
      if (a.reached_by[target].test(r) && (best < 0 || use[static_cast<size_t>(r) * n + target] < use[static_cast<size_t>(best) * n + target]))
        best = r;
    }
    return best;
  };
  for (size_t label = 0; label < dest.size(); ++label) {
    const Destination& d = dest[label];
    for (uint32_t off = 0; off < d.count; ++off) {
      const uint32_t lid = d.base + off;
      const long v = static_cast<long>(label) + static_cast<long>(off) * ro.stride;
      const long q = v / nhubs;
      // The anchor: the preferred hub; else the least used hub that reaches the target; else
      // (a host above the leaves that no hub reaches) the least used top that does.
      const int preferred = ro.order[static_cast<size_t>(v % nhubs)];
      const Anchors* a = &t.hubs;
      const std::vector<uint32_t>& hubs_read = off == 0 ? hub_base_use : hub_use;
      std::vector<uint32_t>* use = &hub_use;
      std::vector<uint32_t>* base_use = &hub_base_use;
      int root = t.hubs.reached_by[d.target].test(preferred) ? preferred : least_used(t.hubs, hubs_read, d.target, preferred);
      if (root < 0)
        a = &t.tops, use = &top_use, base_use = &top_base_use,
        root = least_used(t.tops, off == 0 ? top_base_use : top_use, d.target, v);
      if (root < 0) continue;  // nothing reaches it: the check names it
      out.moved_roots += d.last_port != 0 && root != preferred;
      ++(*use)[static_cast<size_t>(root) * n + d.target];
      if (off == 0) ++(*base_use)[static_cast<size_t>(root) * n + d.target];
      ++out.routed_lids;
      ++gen;
      // The anchor's way down to the target.
      for (int x = a->list[root]; x != d.target;) {
        cand.clear();
        for (uint8_t p : t.down[x])
          if (t.below[t.peer(x, p, f)].test(d.target)) cand.push_back(p);
        const uint8_t p = pick(cand, q);
        on_path[x] = gen, path_port[x] = p;
        x = t.peer(x, p, f);
      }
      for (size_t x = 0; x < n; ++x) {
        uint8_t port = kNoRoute;
        if (static_cast<int>(x) == d.target) {
          port = d.last_port;
        } else if (on_path[x] == gen) {
          port = path_port[x];
        } else if (t.below[x].test(d.target)) {  // above the target but off the anchor's path: straight down
          cand.clear();
          for (uint8_t p : t.down[x])
            if (t.below[t.peer(x, p, f)].test(d.target)) cand.push_back(p);
          port = pick(cand, q);
        } else {  // climb towards the anchor; where the cabling does not allow it, towards any top that reaches the target
          cand.clear();
          for (uint8_t p : t.up[x])
            if (a->above[t.peer(x, p, f)].test(root)) cand.push_back(p);
          if (!cand.empty()) {
            port = pick(cand, q);
          } else {
            for (uint8_t p : t.up[x])
              if (t.tops.above[t.peer(x, p, f)].intersects(t.tops.reached_by[d.target])) cand.push_back(p);
            out.detours += !cand.empty() && entry[x];  // where traffic starts: a cable it misses
            // A detour adds a transfer to a link down into the target: prefer a hub whose links
            // into it carry the fewest destinations (not one that took a moved hub); among
            // those, detours of different switches take different hubs.
            if (!cand.empty()) {
              auto load = [&](uint8_t p) {
                const int r = t.hubs.of[t.peer(x, p, f)];
                return r < 0 ? 0u : hubs_read[static_cast<size_t>(r) * n + d.target];
              };
              uint32_t low = UINT32_MAX;
              for (uint8_t p : cand) low = std::min(low, load(p));
              std::erase_if(cand, [&](uint8_t p) { return load(p) != low; });
              port = pick(cand, q + static_cast<long>(x));
            }
          }
        }
        out.lft[t.node[x]][lid] = port;
      }
    }
  }
  return out;
}

std::vector<CaPort> tree_order(const Fabric& f, const FabricStructure& s, std::vector<CaPort> hosts) {
  // (level of the host's switch, lowest GUID among that switch's parents, the switch's GUID, port)
  auto key = [&](CaPort h) {
    const Port& p = f.nodes[h.node].ports[h.port];
    if (!p.connected()) return std::tuple<int, uint64_t, uint64_t, int>(1 << 20, 0, f.nodes[h.node].guid, h.port);
    const Node& sw = f.nodes[p.peer_node];
    const int lvl = static_cast<size_t>(p.peer_node) < s.level.size() ? s.level[p.peer_node] : 0;
    uint64_t group = UINT64_MAX;
    for (int q = 1; q <= sw.num_ports(); ++q) {
      const Port& up = sw.ports[q];
      if (up.connected() && static_cast<size_t>(up.peer_node) < s.level.size() && s.level[up.peer_node] > lvl && f.nodes[up.peer_node].is_switch())
        group = std::min(group, f.nodes[up.peer_node].guid);
    }
    return std::tuple<int, uint64_t, uint64_t, int>(lvl, group, sw.guid, p.peer_port);
  };
  std::stable_sort(hosts.begin(), hosts.end(), [&](CaPort a, CaPort b) { return key(a) < key(b); });
  return hosts;
}

void apply_tree_routing(Fabric& f, const TreeRouting& r) {
  for (size_t i = 0; i < f.nodes.size() && i < r.lft.size(); ++i)
    if (f.nodes[i].is_switch() && !r.lft[i].empty()) f.nodes[i].lft = r.lft[i], f.nodes[i].lft_read = true;
  f.has_lfts = true;
}

TreeRouting merge_lids(const Fabric& f, const TreeRouting& first, const TreeRouting& second) {
  // The ports with more than one LID, once; then every switch's table once (not ports x nodes).
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // (base LID, LID count)
  for (const Node& owner : f.nodes)
    for (const Port& port : owner.ports)
      if (port.base_lid != 0 && port.lid_count() > 1) ranges.emplace_back(port.base_lid, port.lid_count());
  TreeRouting out = first;
  for (size_t sw = 0; sw < out.lft.size() && sw < second.lft.size(); ++sw) {
    std::vector<uint8_t>& to = out.lft[sw];
    const std::vector<uint8_t>& from = second.lft[sw];
    if (to.empty()) continue;
    for (const auto& [base, count] : ranges)
      for (uint32_t lid = base + 1; lid < base + count && lid < to.size() && lid - 1 < from.size(); ++lid)
        to[lid] = from[lid - 1];
  }
  return out;
}

namespace {
// One line for the routes to `lid` that fail, from `first` and `bad` - 1 more switches; `why`
// indexes check_tree_routing's reasons.
std::string route_failure(const Node& first, size_t bad, uint16_t lid, const Node& owner, uint8_t why) {
  static const char* const text[] = {"fails", "is dropped", "goes out of a port that leads nowhere", "loops",
                                     "leaves the tree", "climbs after descending (not up*/down*: a credit loop is possible)",
                                     "is not handed to its owner",
                                     "is dropped: no switch above both reaches the other (no up*/down* way joins them: "
                                     "their switches share no switch above them)"};
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%04x", lid);
  return "from " + first.desc + (bad > 1 ? " (and " + std::to_string(bad - 1) + " more switches)" : std::string()) + " to LID " +
         hex + " (" + owner.desc + "): the route " + text[why];
}
// Per node: 1 for a switch of `switches` with a CA on a working link, 2 where one is a host, else 0.
std::vector<char> ca_entries(const Fabric& f, const std::vector<int32_t>& switches) {
  std::vector<char> entry(f.nodes.size(), 0);
  for (int32_t sw : switches)
    for (const Port& p : f.nodes[sw].ports)
      if (p.connected() && !f.nodes[p.peer_node].is_switch() && link_usable(f, p))
        entry[sw] = std::max<char>(entry[sw], is_host(f.nodes[p.peer_node]) ? 2 : 1);
  return entry;
}
}  // namespace

RoutingCheck check_tree_routing(const Fabric& f, const FabricStructure& s) {
  RoutingCheck out;
  auto fail = [&](std::string line) {
    if (out.first.size() < 8) out.first.push_back(std::move(line));
    ++out.failures;
  };
  std::vector<int32_t> switches;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch() && i < s.level.size() && s.level[i] >= 1) switches.push_back(static_cast<int32_t>(i));
  for (int32_t sw : switches) {
    const Node& n = f.nodes[sw];
    for (size_t lid = 0; lid < n.lft.size(); ++lid)
      if (n.lft[lid] != kNoRoute && n.lft[lid] > n.num_ports())
        fail(n.desc + ": LID " + std::to_string(lid) + " goes out of port " + std::to_string(n.lft[lid]) + ", beyond its " +
             std::to_string(n.num_ports()) + " ports");
  }
  // Where traffic enters: switches with a CA on a working link (1; 2 where one is a host). From
  // these every CA's LID must arrive that they have an up*/down* way to, every host's LID from a
  // switch with a host, way or none; a switch's LID from every switch with a way to it; from the
  // others, whatever is routed must. (A top switch that lost its cable to a leaf needs no route to
  // its hosts: no traffic enters there. A SHARP node on one top switch has no way from another's:
  // only a turn from down to up would join them. Such pairs are counted, not failed.)
  const Tree t = build_tree(f, s);
  const std::vector<char> entry = ca_entries(f, switches);
  // Per LID, every switch's route by memo: 1 = arrives going down only, 2 = climbs, then descends.
  const LidMap lids(f);
  std::vector<uint8_t> state(f.nodes.size()), why(f.nodes.size(), 0);
  std::vector<int32_t> stack;
  constexpr uint8_t kDown = 1, kUpDown = 2, kBad = 3, kOnStack = 4;
  for (uint16_t lid : lids.lids()) {
    const LidOwner* o = lids.owner(lid);
    const Node& owner = f.nodes[o->node];
    const int32_t target = owner.is_switch() ? o->node : owner.ports[o->port].peer_node;
    if (target < 0 || static_cast<size_t>(target) >= s.level.size() || s.level[target] < 1) continue;  // outside the tree
    std::fill(state.begin(), state.end(), 0);
    // A bad route keeps the reason where it went wrong; the switches before it inherit it.
    enum Why : uint8_t { none, drops, nowhere, loops, leaves, climbs_again, not_handed, no_way_joins };
    auto set_bad = [&](int32_t x, uint8_t reason) { state[x] = kBad, why[x] = reason; };
    for (int32_t start : switches) {
      if (state[start]) continue;
      stack.assign(1, start);
      while (!stack.empty()) {
        const int32_t x = stack.back();
        const Node& n = f.nodes[x];
        const uint8_t port = lid < n.lft.size() ? n.lft[lid] : kNoRoute;
        stack.pop_back();
        if (x == target) {  // the last hop: port 0 for the switch's own LID, else the owner's cable
          const bool ok = owner.is_switch() ? port == 0 : port >= 1 && port <= n.num_ports() && n.ports[port].peer_node == o->node &&
                                                              n.ports[port].peer_port == o->port && link_usable(f, n.ports[port]);
          if (ok) state[x] = kDown;
          else set_bad(x, not_handed);
          continue;
        }
        if (port == kNoRoute || port == 0 || port > n.num_ports() || !n.ports[port].connected() || !link_usable(f, n.ports[port]) ||
            !f.nodes[n.ports[port].peer_node].is_switch()) {
          set_bad(x, port == kNoRoute ? drops : nowhere);
          continue;
        }
        const int32_t y = n.ports[port].peer_node;
        if (state[y] == kOnStack || (state[y] == 0 && (static_cast<size_t>(y) >= s.level.size() || s.level[y] < 1))) {
          set_bad(x, state[y] == kOnStack ? loops : leaves);
          continue;
        }
        if (state[y] == 0) {  // resolve the next switch first
          state[x] = kOnStack;
          stack.push_back(x);
          stack.push_back(y);
          continue;
        }
        const bool down = s.level[y] < s.level[x], up = s.level[y] > s.level[x];
        if (state[y] == kBad) set_bad(x, why[y]);
        else if (state[y] == kDown && (down || up)) state[x] = down ? kDown : kUpDown;
        else if (state[y] == kUpDown && up) state[x] = kUpDown;
        else set_bad(x, climbs_again);
      }
    }
    out.walked += switches.size();
    size_t bad = 0;
    int32_t first_bad = -1;
    const bool host = is_host(owner);
    for (int32_t sw : switches) {
      // The way looked up only where it decides: millions of (switch, LID) at 10 000 hosts.
      const bool ca_entry = !owner.is_switch() && entry[sw];
      if (!ca_entry && state[sw] != kBad) continue;
      auto way = [&] { return t.tops.above[t.index[sw]].intersects(t.tops.reached_by[t.index[target]]); };
      const bool needed = ca_entry ? (host && entry[sw] == 2) || way() : owner.is_switch() && way();
      if (ca_entry && !needed) ++out.no_way;
      if (state[sw] == kBad && ((lid < f.nodes[sw].lft.size() && f.nodes[sw].lft[lid] != kNoRoute) || needed)) {
        ++bad;
        // A drop where no up*/down* way exists is the cabling's (edges that share no director), said so.
        if (first_bad < 0) first_bad = sw, why[sw] = why[sw] == drops && !way() ? uint8_t{no_way_joins} : why[sw];
      }
    }
    if (bad) fail(route_failure(f.nodes[first_bad], bad, lid, owner, why[first_bad])), out.failures += bad - 1;
  }
  return out;
}

}  // namespace ibroute::fabric
