#include "phase_packing.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace ibroute::schedule {

using namespace ibroute::fabric;

std::vector<int> unit_capacities(const EvalContext& ctx) {
  const double host = ctx.structure.host_gbps > 0 ? ctx.structure.host_gbps : 0;
  std::vector<int> cap(ctx.links.size(), 1);
  if (host <= 0) return cap;
  for (size_t l = 0; l < cap.size(); ++l) cap[l] = static_cast<int>(std::floor(ctx.gbps[l] / host + 1e-9));
  return cap;
}

Leaves::Leaves(const EvalContext& ctx, const std::vector<Host>& hosts) {
  const Fabric& f = ctx.fabric;
  const auto& level = ctx.structure.level;
  const double host = ctx.structure.host_gbps > 0 ? ctx.structure.host_gbps : 0;
  std::unordered_map<int32_t, int> id;
  of_rank.assign(hosts.size(), -1);
  for (size_t i = 0; i < hosts.size(); ++i) {
    const Port& p = f.nodes[hosts[i].node].ports[hosts[i].port];
    if (!p.connected() || !f.nodes[p.peer_node].is_switch()) continue;
    const int32_t sw = p.peer_node;
    auto [it, fresh] = id.emplace(sw, static_cast<int>(up.size()));
    if (fresh) {
      int units = 0;
      const Node& node = f.nodes[sw];
      for (int q = 1; q <= node.num_ports(); ++q) {
        const Port& port = node.ports[q];
        if (!port_usable(port) || !f.nodes[port.peer_node].is_switch()) continue;
        if (level[sw] >= 1 && level[port.peer_node] <= level[sw]) continue;  // not up
        const double g = ctx.links.gbps(ctx.links.id(sw, q));
        units += host > 0 ? static_cast<int>(std::floor(g / host + 1e-9)) : 1;  // a slower link: none in a one-slot phase
      }
      up.push_back(units);
    }
    of_rank[i] = it->second;
  }
}

int Leaves::phase_bound(const Phase& ph) const {
  std::vector<int> out(up.size(), 0), in(up.size(), 0);
  for (size_t i = 0; i < ph.dst.size(); ++i) {
    if (ph.dst[i] < 0) continue;
    const int a = of_rank[i], b = of_rank[static_cast<size_t>(ph.dst[i])];
    if (a < 0 || b < 0 || a == b) continue;
    ++out[a], ++in[b];
  }
  int bound = 1;
  for (size_t x = 0; x < up.size(); ++x)
    if (up[x] > 0) bound = std::max({bound, (out[x] + up[x] - 1) / up[x], (in[x] + up[x] - 1) / up[x]});
  return bound;
}

void Leaves::defer_excess(Phase& ph, std::vector<uint32_t>& waits, std::vector<Transfer>& deferred) const {
  // Who waits is chosen against the waits so far: a leaf keeps the transfers of the ranks that
  // waited most and defers those that waited least, so that over all phases every rank waits about
  // as often (the phases that pack the waiting transfers are at least as many as any one rank's).
  // First the senders' leaves, then the receivers' leaves.
  std::vector<std::pair<uint32_t, uint32_t>> order;
  order.reserve(ph.dst.size());
  std::vector<int> count(up.size(), 0);
  for (const bool sending : {true, false}) {
    order.clear();
    std::fill(count.begin(), count.end(), 0);
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] >= 0) order.emplace_back(UINT32_MAX - waits[sending ? i : static_cast<size_t>(ph.dst[i])], static_cast<uint32_t>(i));
    std::sort(order.begin(), order.end());
    for (auto [key, i] : order) {
      const int a = of_rank[i], b = of_rank[static_cast<size_t>(ph.dst[i])];
      if (a < 0 || b < 0 || a == b) continue;
      const int leaf = sending ? a : b;
      if (up[leaf] == 0) continue;
      if (count[leaf] >= up[leaf]) {
        deferred.push_back({static_cast<int32_t>(i), ph.dst[i]});
        ++waits[i], ++waits[static_cast<size_t>(ph.dst[i])];
        ph.dst[i] = -1;
        continue;
      }
      ++count[leaf];
    }
  }
}

std::vector<int32_t> Leaves::interleave(const std::vector<int32_t>& ranks) const {
  std::vector<int> size(up.size() + 1, 0), seen(up.size() + 1, 0);
  auto bucket = [&](int32_t r) { return of_rank[static_cast<size_t>(r)] < 0 ? static_cast<int>(up.size()) : of_rank[static_cast<size_t>(r)]; };
  for (int32_t r : ranks) ++size[bucket(r)];
  std::vector<std::pair<double, int32_t>> keyed;
  keyed.reserve(ranks.size());
  for (int32_t r : ranks) {
    const int b = bucket(r);
    keyed.emplace_back((seen[b]++ + 0.5) / size[b], r);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int32_t> out;
  out.reserve(ranks.size());
  for (const auto& [key, r] : keyed) out.push_back(r);
  return out;
}

bool pack_phases(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, const Leaves& leaves,
                 const std::vector<int>& cap, std::vector<Transfer> deferred, std::vector<Phase>& phases, size_t max_phases, PackWork* pw) {
  PackWork local;
  PackWork& w = pw ? *pw : local;
  const size_t n = hosts.size();
  std::vector<std::vector<int32_t>> todo(n);
  std::vector<uint32_t> send_left(n, 0), recv_left(n, 0);
  std::vector<uint32_t> out_left(leaves.up.size(), 0), in_left(leaves.up.size(), 0);
  auto crosses = [&](int32_t s, int32_t d) {
    const int a = leaves.of_rank[static_cast<size_t>(s)], b = leaves.of_rank[static_cast<size_t>(d)];
    return a >= 0 && b >= 0 && a != b;
  };
  for (const Transfer& t : deferred) {
    todo[static_cast<size_t>(t.src)].push_back(t.dst);
    ++send_left[static_cast<size_t>(t.src)], ++recv_left[static_cast<size_t>(t.dst)];
    if (crosses(t.src, t.dst)) ++out_left[leaves.of_rank[t.src]], ++in_left[leaves.of_rank[t.dst]];
  }
  size_t left = deferred.size();
  deferred = {};
  // How many phases a rank or its leaf still needs at the least: what a phase should serve first.
  auto pressure_out = [&](size_t i) {
    const int a = leaves.of_rank[i];
    const double leaf = a >= 0 && leaves.up[a] > 0 ? double(out_left[a]) / leaves.up[a] : 0;
    return std::max<double>(send_left[i], leaf);
  };
  auto pressure_in = [&](size_t j) {
    const int b = leaves.of_rank[j];
    const double leaf = b >= 0 && leaves.up[b] > 0 ? double(in_left[b]) / leaves.up[b] : 0;
    return std::max<double>(recv_left[j], leaf);
  };
  std::vector<int> load(ctx.links.size(), 0);
  std::vector<int32_t> touched;
  std::vector<char> busy(n, 0);
  std::vector<std::pair<double, uint32_t>> senders, cand;
  // Per leaf, the phase's transfers leaving (entering) it: a leaf whose up-links are full takes no
  // more (every waiting transfer crosses its leaves' up-links: defer_excess defers only those), so
  // its senders and receivers are not tried — most of a phase's work once the leaves fill up.
  std::vector<int> out_used(leaves.up.size(), 0), in_used(leaves.up.size(), 0);
  auto full = [&](const std::vector<int>& used, int leaf) { return leaf >= 0 && leaves.up[leaf] > 0 && used[leaf] >= leaves.up[leaf]; };
  constexpr size_t kTries = 24;    // receivers tried per sender and phase, most pressing first
  constexpr size_t kWindow = 256;  // of its waiting transfers
  // A phase whose links are full above the leaves (a routing that leaves most core links unused)
  // takes no more however many senders try: after this many senders in a row placed nothing, the
  // next phase begins. Work per phase is then bounded by what it places, not by the senders.
  constexpr size_t kMissesInARow = 96;
  // Only a fabric with links slower than a host link has transfers forced onto them.
  const bool any_slow = std::find(cap.begin(), cap.end(), 0) != cap.end();
  constexpr size_t kProjectAfter = 32;  // new phases before their pace is trusted
  size_t fresh_phases = 0, fresh_placed = 0;
  uint64_t fresh_work0 = 0;             // the work done when the first new phase began
  const size_t existing = phases.size();  // the phases there are, passed first
  // First into the phases there are, where senders wait and links have room; then new phases.
  for (size_t p = 0; left > 0; ++p) {
    const bool fresh = p >= phases.size();
    if (fresh && phases.size() >= max_phases) return false;
    // The budget, and the work projected from a steady pace: a packing that will not finish within
    // its budget stops early, its work wasted small. Two paces, each steady on its own: the pass
    // over the phases there are costs about the same per phase (they are nearly full and place
    // little), so its total is projected from the phases passed; new phases place at their own
    // pace, so the rest is projected from theirs. (One pace over both stopped the 864-host tree
    // after a cable loss at 50 M of 312 M: the first pass placed little for its work.)
    constexpr uint64_t kJudgeAfter = 50'000'000;  // about a second: below it nothing is judged
    const auto work = static_cast<double>(w.work), budget = static_cast<double>(w.budget);
    if (!fresh && p >= kProjectAfter && w.work >= kJudgeAfter && work * static_cast<double>(existing) > budget * static_cast<double>(p))
      return w.over = true, false;
    if (fresh && fresh_phases == 0) fresh_work0 = w.work;
    if (fresh && fresh_phases >= kProjectAfter && w.work >= kJudgeAfter &&
        work + static_cast<double>(left) * static_cast<double>(w.work - fresh_work0) / static_cast<double>(std::max<size_t>(fresh_placed, 1)) > budget)
      return w.over = true, false;
    if (w.work > w.budget) return w.over = true, false;
    if (fresh && fresh_phases >= kProjectAfter && fresh_placed > 0 &&
        static_cast<double>(phases.size()) + static_cast<double>(left) * static_cast<double>(fresh_phases) / static_cast<double>(fresh_placed) >
            static_cast<double>(max_phases))
      return false;
    if (fresh) phases.push_back(Phase{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)});
    Phase& ph = phases[p];
    std::fill(busy.begin(), busy.end(), 0);
    std::fill(out_used.begin(), out_used.end(), 0), std::fill(in_used.begin(), in_used.end(), 0);
    for (size_t i = 0; i < n && !fresh; ++i) {  // what the phase holds already
      if (ph.dst[i] < 0) continue;
      busy[static_cast<size_t>(ph.dst[i])] = 1;
      if (crosses(static_cast<int32_t>(i), ph.dst[i])) ++out_used[leaves.of_rank[i]], ++in_used[leaves.of_rank[static_cast<size_t>(ph.dst[i])]];
      auto [a, b] = table.range(i, static_cast<size_t>(ph.dst[i]));
      w.work += 1 + (b - a);  // work too: on a few thousand hosts, thousands of phases of thousands
      for (uint32_t o = a; o < b; ++o)
        if (table.opt(o).dlid == ph.dlid[i]) {
          w.work += table.opt(o).len;
          const int32_t* ls = table.links(o);
          for (uint16_t y = 0; y < table.opt(o).len; ++y)
            if (load[ls[y]]++ == 0) touched.push_back(ls[y]);
          break;
        }
    }
    senders.clear();
    for (size_t i = 0; i < n; ++i)
      if (!todo[i].empty() && ph.dst[i] < 0) senders.emplace_back(-pressure_out(i), static_cast<uint32_t>(i));
    std::sort(senders.begin(), senders.end());
    size_t placed = 0, misses = 0;
    for (auto [key, i] : senders) {
      if (placed > 0 && misses >= kMissesInARow) break;
      if (full(out_used, leaves.of_rank[i]) && !(placed == 0 && fresh)) continue;
      ++misses;  // until it places one
      // A window of the sender's waiting transfers, moved on every phase: scanning all of them
      // in every phase costs phases x waiting transfers (10^9 at a few thousand hosts).
      cand.clear();
      const size_t m = todo[i].size(), window = std::min(m, kWindow), from = (p * kWindow) % m;
      w.work += window;
      for (size_t y = 0; y < window; ++y) {
        const size_t x = (from + y) % m;
        const auto d = static_cast<size_t>(todo[i][x]);
        if (!busy[d] && !full(in_used, leaves.of_rank[d])) cand.emplace_back(-pressure_in(d), static_cast<uint32_t>(x));
      }
      const size_t k = std::min(kTries, cand.size());
      std::partial_sort(cand.begin(), cand.begin() + static_cast<long>(k), cand.end());
      for (size_t c = 0; c < k; ++c) {
        const size_t x = cand[c].second;
        const int32_t d = todo[i][x];
        auto [a, b] = table.range(i, static_cast<size_t>(d));
        // A link slower than a host link carries no transfer in a one-slot phase; where every path
        // crosses one, a transfer takes it alone (its phase then lasts as long as that link needs).
        // One pass over the options: the best that fits as links are, and the best that fits
        // with such links taking one. An option stops at its first link too full for either (on
        // tables that leave most links unusable nearly every option does): one that fits as links
        // are has no slow link, so only where none does is it asked whether every option has one.
        uint32_t best = UINT32_MAX, best_forced = UINT32_MAX;
        long best_sum = 0, best_forced_sum = 0;
        for (uint32_t o = a; o < b; ++o) {
          const int32_t* ls = table.links(o);
          long sum = 0;
          bool fits = true, fits_forced = true;
          for (uint16_t y = 0; y < table.opt(o).len && fits_forced; ++y) {
            const int l = load[ls[y]], c = cap[ls[y]];
            ++w.work;
            fits = fits && l < c, fits_forced = l < std::max(c, 1), sum += l;
          }
          if (fits && (best == UINT32_MAX || sum < best_sum)) best = o, best_sum = sum;
          if (fits_forced && (best_forced == UINT32_MAX || sum < best_forced_sum)) best_forced = o, best_forced_sum = sum;
        }
        if (best == UINT32_MAX && best_forced != UINT32_MAX && any_slow) {
          bool all_slow = true;
          for (uint32_t o = a; o < b && all_slow; ++o) {
            const int32_t* ls = table.links(o);
            bool slow = false;
            for (uint16_t y = 0; y < table.opt(o).len && !slow; ++y) slow = cap[ls[y]] == 0;
            all_slow = slow;
          }
          if (all_slow) best = best_forced;
        }
        const bool routeless = a == b;  // no working route at any LID: sent on the base LID, as the shifts do
        if (best == UINT32_MAX && !(routeless || (placed == 0 && fresh))) continue;
        if (best == UINT32_MAX && !routeless) best = a;  // an empty phase takes any route: progress is certain
        ph.dst[i] = d;
        if (routeless) {
          const Host& h = hosts[static_cast<size_t>(d)];
          ph.dlid[i] = ctx.fabric.nodes[h.node].ports[h.port].base_lid;
        } else {
          ph.dlid[i] = table.opt(best).dlid;
          const int32_t* ls = table.links(best);
          for (uint16_t y = 0; y < table.opt(best).len; ++y) {
            if (load[ls[y]]++ == 0) touched.push_back(ls[y]);
          }
        }
        busy[static_cast<size_t>(d)] = 1;
        --send_left[i], --recv_left[static_cast<size_t>(d)];
        if (crosses(static_cast<int32_t>(i), d)) {
          --out_left[leaves.of_rank[i]], --in_left[leaves.of_rank[static_cast<size_t>(d)]];
          ++out_used[leaves.of_rank[i]], ++in_used[leaves.of_rank[static_cast<size_t>(d)]];
        }
        todo[i][x] = todo[i].back();
        todo[i].pop_back();
        ++placed, --left, misses = 0;
        break;
      }
    }
    for (int32_t l : touched) load[l] = 0;
    touched.clear();
    if (fresh) ++fresh_phases, fresh_placed += placed;
  }
  return true;
}

}  // namespace ibroute::schedule
