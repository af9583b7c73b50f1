// Local search on tree-routing tables for the shift all-to-all in a rank order: the first hop of
// every (ingress switch, destination) pair is the free choice (it picks the switch the route
// turns at; the switches above keep their entries, so routes stay up*/down*). Loads are counted
// exactly, per switch link and phase. A move re-routes the transfers of all the ingress switch's
// sources to one destination (one per phase) and is kept when it lowers the sum of squared
// excesses over capacity (so the worst links are relieved first) and leaves no link's all-to-all
// total above the worst the tables had: the least time any plan can reach over them (what the
// planner needs) is never traded for the unplanned shifts.
#include <algorithm>
#include <tuple>

#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/fabric/tree_routing.hpp"

namespace ibroute::fabric {

namespace {

constexpr int kMaxHops = 8;

// A path from `from` that never climbs after it has descended (up*/down*).
bool climbs_then_descends(const Fabric& f, const FabricStructure& s, int32_t from, const int32_t* path, int len, const LinkIndex& links) {
  bool descending = false;
  int32_t x = from;
  for (int i = 0; i < len; ++i) {
    const Port& p = f.nodes[x].ports[links.port(path[i])];
    const int32_t y = p.peer_node;
    if (static_cast<size_t>(y) >= s.level.size() || s.level[y] == s.level[x]) return false;
    const bool down = s.level[y] < s.level[x];
    if (descending && !down) return false;
    descending = descending || down;
    x = y;
  }
  return true;
}

struct Search {
  const Fabric& f;
  const FabricStructure& s;
  TreeRouting& r;
  const LinkIndex links;
  size_t n = 0;                       // ranks
  std::vector<int32_t> ingress;       // per rank: its switch (where its sends enter, its receives leave)
  std::vector<uint16_t> lid;          // per rank: base LID
  std::vector<int> cap;               // per directed link: transfers it may carry at once (0: not a switch link)
  std::vector<uint16_t> load;         // [link * n + phase]
  std::vector<int64_t> total;         // per link: transfers over all phases
  int64_t worst_total = 0;            // the worst link's total per capacity, as worst_total / worst_cap
  int worst_cap = 1;
  std::vector<int32_t> sw_list;       // ingress switches
  std::vector<int> sw_of;             // node -> ingress index
  std::vector<std::vector<size_t>> ranks_of;  // ingress index -> its ranks

  Search(const Fabric& fab, const FabricStructure& st, TreeRouting& tr) : f(fab), s(st), r(tr), links(fab) {}

  // The switch links from switch `x` on towards rank t's LID, by the tables being refined.
  int path_from(int32_t x, size_t t, int32_t* out) const {
    int len = 0;
    for (int hop = 0; hop < kMaxHops && x != ingress[t]; ++hop) {
      const auto& lft = r.lft[x];
      if (lid[t] >= lft.size() || lft[lid[t]] == kNoRoute) return -1;
      const Port& p = f.nodes[x].ports[lft[lid[t]]];
      if (!p.connected() || !f.nodes[p.peer_node].is_switch()) return -1;
      out[len++] = links.id(x, lft[lid[t]]);
      x = p.peer_node;
    }
    return x == ingress[t] ? len : -1;
  }

  int excess(int32_t link, size_t phase) const { return std::max(0, int(load[link * n + phase]) - cap[link]); }
  // What one more transfer adds to the cost, the sum of squared excesses (convex: peaks go first).
  int over_if_added(int32_t link, size_t phase) const {
    const int e = int(load[link * n + phase]) - cap[link];
    return e >= 0 ? 2 * e + 1 : 0;
  }

  void add(const int32_t* path, int len, size_t phase, int delta) {
    for (int i = 0; i < len; ++i) {
      load[path[i] * n + phase] = static_cast<uint16_t>(load[path[i] * n + phase] + delta);
      total[path[i]] += delta;
    }
  }
  // Whether `m` more transfers over the links of `path` not on `old` keep every total within the worst.
  bool totals_allow(const int32_t* path, int len, const int32_t* old, int old_len, int64_t m) const {
    for (int i = 0; i < len; ++i)
      if (cap[path[i]] && std::find(old, old + old_len, path[i]) == old + old_len &&
          (total[path[i]] + m) * worst_cap > worst_total * cap[path[i]])
        return false;
    return true;
  }
};

}  // namespace

RefineStats refine_for_shift(const Fabric& f, const FabricStructure& s, const std::vector<CaPort>& order, TreeRouting& r,
                             const RefineLimits& limits) {
  RefineStats st;
  Search q(f, s, r);
  q.n = order.size();
  if (q.n < 3) return st;
  for (CaPort p : order) {
    const Port& port = f.nodes[p.node].ports[p.port];
    q.ingress.push_back(port.peer_node);
    q.lid.push_back(port.base_lid);
  }
  // Capacities as the evaluation counts them: switch-to-switch links only.
  q.cap.assign(q.links.size(), 0);
  for (size_t l = 0; l < q.links.size(); ++l) {
    const Port& p = f.nodes[q.links.node(static_cast<int32_t>(l))].ports[q.links.port(static_cast<int32_t>(l))];
    if (f.nodes[q.links.node(static_cast<int32_t>(l))].is_switch() && p.connected() && f.nodes[p.peer_node].is_switch())
      q.cap[l] = link_capacity(s, q.links.gbps(static_cast<int32_t>(l)));
  }
  if (q.links.size() * q.n > limits.max_cells) {
    st.skipped = true;
    return st;
  }
  q.sw_of.assign(f.nodes.size(), -1);
  for (size_t t = 0; t < q.n; ++t) {
    // Only leaves: their entries for other switches' hosts are first hops and nothing else (a
    // switch above, with hosts of its own, also carries others' transfers through those entries).
    if (q.ingress[t] >= static_cast<int32_t>(s.level.size()) || s.level[q.ingress[t]] != 1) continue;
    int32_t& k = q.sw_of[q.ingress[t]];
    if (k < 0) k = static_cast<int32_t>(q.sw_list.size()), q.sw_list.push_back(q.ingress[t]), q.ranks_of.emplace_back();
    q.ranks_of[k].push_back(t);
  }
  q.load.assign(q.links.size() * q.n, 0);
  q.total.assign(q.links.size(), 0);
  int32_t path[kMaxHops];
  for (size_t src = 0; src < q.n; ++src)
    for (size_t k = 1; k < q.n; ++k) {
      const size_t t = (src + k) % q.n;
      const int len = q.path_from(q.ingress[src], t, path);
      if (len > 0) q.add(path, len, k, +1);
    }
  for (size_t l = 0; l < q.links.size(); ++l)
    if (q.cap[l] && q.total[l] * q.worst_cap > q.worst_total * q.cap[l]) q.worst_total = q.total[l], q.worst_cap = q.cap[l];
  auto totals = [&] {  // the excess summed (transfers above capacity) and the worst
    long sum = 0;
    int worst = 0;
    for (size_t l = 0; l < q.links.size(); ++l)
      if (q.cap[l])
        for (size_t k = 1; k < q.n; ++k) {
          const int e = q.excess(static_cast<int32_t>(l), k);
          sum += e, worst = std::max(worst, e);
        }
    return std::pair<long, int>(sum, worst);
  };
  std::tie(st.excess_before, st.worst_excess_before) = totals();
  st.excess_after = st.excess_before, st.worst_excess_after = st.worst_excess_before;
  // A budget of work, not of time: the same tables on any machine. One unit: one hop of one
  // transfer weighed on a candidate path.
  uint64_t work = 0;

  // One pass: every (ingress switch, destination) whose transfers cross an overloaded link in
  // some phase tries every other first hop; the best strict improvement is kept. The switch's
  // sources share one path to t (it starts at the switch); each sends it in its own phase.
  for (int pass = 0; pass < limits.passes && st.excess_after > 0; ++pass) {
    long improved = 0;
    for (size_t a = 0; a < q.sw_list.size(); ++a) {
      const int32_t x = q.sw_list[a];
      const std::vector<size_t>& srcs = q.ranks_of[a];
      for (size_t t = 0; t < q.n; ++t) {
        if (q.ingress[t] == x) continue;  // so no source is t itself
        if (work > limits.work) {
          st.out_of_budget = true;
          goto done;
        }
        auto phase_of = [&](size_t src) { return (t + q.n - src) % q.n; };
        // The current path to t, and whether it crosses an excess in any source's phase.
        int32_t cur[kMaxHops];
        const int cur_len = std::max(0, q.path_from(x, t, cur));
        bool hot = false;
        for (size_t i = 0; i < srcs.size() && !hot; ++i)
          for (int h = 0; h < cur_len && !hot; ++h) hot = q.excess(cur[h], phase_of(srcs[i])) > 0;
        if (!hot) continue;
        uint8_t& entry = r.lft[x][q.lid[t]];
        const uint8_t was = entry;
        long best_gain = 0;
        uint8_t best = was;
        const Node& node = f.nodes[x];
        for (int p = 1; p <= node.num_ports(); ++p) {
          if (p == was) continue;
          const Port& port = node.ports[p];
          if (!port.connected() || !f.nodes[port.peer_node].is_switch() || q.cap[q.links.id(x, p)] == 0) continue;
          const int32_t y = port.peer_node;
          if (static_cast<size_t>(y) >= s.level.size() || s.level[y] <= s.level[x]) continue;  // first hops climb
          // The way on from y must arrive and only descend or climb-then-descend: y's own route, checked.
          int32_t np[kMaxHops];
          const int rest_len = q.path_from(y, t, np + 1);
          if (rest_len < 0 || rest_len + 1 > kMaxHops) continue;
          if (!climbs_then_descends(f, s, y, np + 1, rest_len, q.links)) continue;
          np[0] = q.links.id(x, p);
          if (!q.totals_allow(np, rest_len + 1, cur, cur_len, static_cast<int64_t>(srcs.size()))) continue;
          // Gain: excess removed on the old path minus excess added on the new, phase by phase
          // (with the transfer taken off: what it caused on its old links, would cause on the new).
          long gain = 0;
          work += srcs.size() * static_cast<uint64_t>(cur_len + rest_len + 1);
          for (size_t src : srcs) {
            const size_t k = phase_of(src);
            q.add(cur, cur_len, k, -1);
            long before = 0, after = 0;
            for (int h = 0; h < cur_len; ++h) before += q.over_if_added(cur[h], k);
            for (int h = 0; h < rest_len + 1; ++h) after += q.over_if_added(np[h], k);
            q.add(cur, cur_len, k, +1);
            gain += before - after;
          }
          if (gain > best_gain) best_gain = gain, best = static_cast<uint8_t>(p);
        }
        if (best == was) continue;
        // Apply: move every transfer of the switch to t onto the new first hop.
        entry = best;
        int32_t np[kMaxHops];
        const int len = std::max(0, q.path_from(x, t, np));
        for (size_t src : srcs) q.add(cur, cur_len, phase_of(src), -1), q.add(np, len, phase_of(src), +1);
        ++st.moves;
        improved += best_gain;
      }
    }
    std::tie(st.excess_after, st.worst_excess_after) = totals();
    ++st.passes;
    if (improved == 0) break;
  }
done:
  st.work = work;
  std::tie(st.excess_after, st.worst_excess_after) = totals();
  return st;
}

}  // namespace ibroute::fabric
