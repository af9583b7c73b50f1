#include "phase_packing.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "critical_links.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

std::vector<int> unit_capacities(const EvalContext& ctx, int slots) {
  const double host = ctx.structure.host_gbps > 0 ? ctx.structure.host_gbps : 0;
  std::vector<int> cap(ctx.links.size(), slots);
  if (host <= 0) return cap;
  for (size_t l = 0; l < cap.size(); ++l) cap[l] = static_cast<int>(std::floor(slots * ctx.gbps[l] / host + 1e-9));
  return cap;
}

int slowest_host_slots(const EvalContext& ctx, const std::vector<Host>& hosts) {
  const double host = ctx.structure.host_gbps;
  int slots = 1;
  for (const Host& h : hosts) {
    const double g = ctx.links.gbps(ctx.links.id(h.node, h.port));
    if (host > 0 && g > 0 && g < host) slots = std::max(slots, static_cast<int>(std::ceil(host / g - 1e-9)));
  }
  return std::min(slots, 8);
}

Leaves::Leaves(const EvalContext& ctx, const std::vector<Host>& hosts, int slots) {
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
        units += host > 0 ? static_cast<int>(std::floor(slots * g / host + 1e-9))
                          : slots;  // a slower link: none in a one-slot phase
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
      if (ph.dst[i] >= 0)
        order.emplace_back(UINT32_MAX - waits[sending ? i : static_cast<size_t>(ph.dst[i])], static_cast<uint32_t>(i));
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
  auto bucket = [&](int32_t r) {
    return of_rank[static_cast<size_t>(r)] < 0 ? static_cast<int>(up.size()) : of_rank[static_cast<size_t>(r)];
  };
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

namespace {

// One packing's state: the waiting transfers per sender, what is left per rank and leaf, and the
// phase being filled (its link loads, busy receivers, leaves' up-links in use).
class Packer {
 public:
  Packer(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, const Leaves& leaves,
         const std::vector<int>& cap, const std::vector<Transfer>& deferred, size_t window, int slots, PackWork& w)
      : window_(window),
        ctx_(ctx),
        table_(table),
        hosts_(hosts),
        leaves_(leaves),
        cap_(cap),
        w_(w),
        n_(hosts.size()),
        todo_(n_),
        send_left_(n_, 0),
        recv_left_(n_, 0),
        intra_left_(n_, 0),
        out_left_(leaves.up.size(), 0),
        in_left_(leaves.up.size(), 0),
        load_(ctx.links.size(), 0),
        busy_(n_, 0),
        from_(n_, -1),
        option_(n_, kNone),
        out_used_(leaves.up.size(), 0),
        in_used_(leaves.up.size(), 0),
        intra_leaf_left_(leaves.up.size(), 0),
        intra_used_(leaves.up.size(), 0),
        intra_quota_(leaves.up.size(), 0),
        link_left_(ctx.links.size(), 0),
        one_slot_(slots <= 1),
        any_slow_(std::find(cap.begin(), cap.end(), 0) != cap.end()) {
    for (const Transfer& t : deferred) count(t.src, t.dst, +1), todo_[static_cast<size_t>(t.src)].push_back(t.dst);
    left_ = deferred.size();
    // In one-slot phases a link holds one transfer, and the critical links' fill costs more than it
    // brings (2 304 hosts under dfsssp: 6 700 -> 6 710 slots): there the ranks' pressure alone.
    critical_.emplace(table, cap, slots > 1 && w.critical_links ? deferred : std::vector<Transfer>{}, phases_left(),
                      w.work);
  }
  size_t left() const { return left_; }

  // The slots that what waits takes at the least, wherever it is placed: each phase takes a slot
  // at least and carries one transfer per rank, its leaves' up-links' worth, and on a link no more
  // than the link carries in its time; a transfer with one route (every transfer over the base
  // LIDs) is sure to cross that route's links. A bound, not an estimate: a packing it shows unable
  // to beat the best stops at once (the base-LID pass on a 1 440-host minhop tree spent 26 s in
  // each of four packings before their projection said so).
  double least_slots_left() const {
    if (left_ == 0) return 0;
    double slots = phases_left();
    for (size_t l = 0; l < link_left_.size(); ++l) {
      if (link_left_[l] == 0) continue;
      const auto link = static_cast<int32_t>(l);
      // In one-slot phases a link carries cap_ at most (none where slower than a host link: a
      // transfer forced onto it is placed alone, its phase counted one slot all the same).
      if (one_slot_)
        slots = cap_[l] > 0 ? std::max(slots, static_cast<double>(link_left_[l]) / cap_[l]) : slots;
      else
        slots = std::max(slots, ctx_.load_time(link, link_left_[l]));
    }
    return slots;
  }

  // Starts phase `ph`: what it holds already (a phase there was) loads its links and leaves.
  void begin(const Phase& ph, bool fresh) {
    std::fill(busy_.begin(), busy_.end(), 0), std::fill(from_.begin(), from_.end(), -1);
    std::fill(out_used_.begin(), out_used_.end(), 0), std::fill(in_used_.begin(), in_used_.end(), 0);
    std::fill(intra_used_.begin(), intra_used_.end(), 0);
    // Transfers within a leaf fill what its up-links leave idle: they are few, and spent early they
    // are missing late (the leaf's up-links then wait for senders). Each phase takes at most its
    // share of them: what is left over the phases the busiest rank or leaf still needs.
    const double phases = phases_left();
    for (size_t l = 0; l < leaves_.up.size(); ++l)
      intra_quota_[l] = static_cast<uint32_t>(std::ceil(intra_leaf_left_[l] / phases));
    for (size_t i = 0; i < n_ && !fresh; ++i) {
      if (ph.dst[i] < 0) continue;
      busy_[static_cast<size_t>(ph.dst[i])] = 1;
      if (crosses(static_cast<int32_t>(i), ph.dst[i])) ++out_used_[leaf(i)], ++in_used_[leaf(ph.dst[i])];
      auto [a, b] = table_.range(i, static_cast<size_t>(ph.dst[i]));
      w_.work += 1 + (b - a);  // work too: on a few thousand hosts, thousands of phases of thousands
      for (uint32_t o = a; o < b; ++o)
        if (table_.opt(o).dlid == ph.dlid[i]) {
          w_.work += table_.opt(o).len;
          add_links(o, +1);
          break;
        }
    }
  }
  // Ends the phase; returns its time in whole slots (at least one), as evaluate() counts it.
  uint32_t end() {
    double time = 1;
    for (int32_t l : touched_) {
      if (load_[l] > 0) time = std::max(time, ctx_.load_time(l, load_[l]));
      load_[l] = 0;
    }
    touched_.clear();
    return phase_slot_count(time);
  }

  // The critical links' room first (critical_links.hpp); then senders by pressure, each its most
  // pressing receiver whose route fits; then swaps for the senders left idle. Returns the
  // transfers placed.
  size_t fill(Phase& ph, size_t p, bool fresh) {
    const size_t critical = critical_->empty() || fresh ? 0 : fill_critical(ph, p);
    senders_.clear();
    for (size_t i = 0; i < n_; ++i)
      if (!todo_[i].empty() && ph.dst[i] < 0) senders_.emplace_back(-pressure_out(i), static_cast<uint32_t>(i));
    std::sort(senders_.begin(), senders_.end());
    size_t placed = 0, misses = 0;
    for (auto [key, i] : senders_) {
      if (placed > 0 && misses >= kMissesInARow) break;
      const bool first = placed == 0 && fresh;  // an empty phase takes any route: progress is certain
      if (full(out_used_, leaf(i)) && intra_left_[i] == 0 && !first) continue;
      ++misses;  // until it places one
      candidates(i, p, [&](int32_t d) { return !busy_[static_cast<size_t>(d)]; });
      for (const auto& [k, x] : cand_) {
        const Choice c = option_for(i, todo_[i][x]);
        if (!c.fits && !(c.routeless || first)) continue;
        take(ph, i, x, c.fits || c.routeless ? c.option : table_.range(i, static_cast<size_t>(todo_[i][x])).first);
        ++placed, misses = 0;
        break;
      }
    }
    return critical + placed + (fresh ? augment(ph, p) : 0);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr size_t kTries = 24;  // receivers tried per sender and phase, most pressing first
  // A phase whose links are full above the leaves (a routing that leaves most core links unused)
  // takes no more however many senders try: after this many senders in a row placed nothing, the
  // next phase begins. Work per phase is then bounded by what it places, not by the senders.
  static constexpr size_t kMissesInARow = 96;
  static constexpr size_t kSwapTries = 24;  // receivers taken by others that an idle sender asks for
  // Idle senders in a row without a swap after which a phase's swaps end: a phase whose senders
  // wait for links (tables that leave few ways) would otherwise cost every idle sender's tries.
  static constexpr size_t kSwapMisses = 16;

  struct Choice {
    uint32_t option = kNone;
    bool fits = false, routeless = false;
  };

  int leaf(int64_t r) const { return leaves_.of_rank[static_cast<size_t>(r)]; }
  // The phases the busiest rank or leaf still needs at the least.
  double phases_left() const {
    double phases = 1;
    for (size_t i = 0; i < n_; ++i) phases = std::max<double>({phases, double(send_left_[i]), double(recv_left_[i])});
    for (size_t l = 0; l < leaves_.up.size(); ++l)
      if (leaves_.up[l] > 0)
        phases = std::max({phases, double(out_left_[l]) / leaves_.up[l], double(in_left_[l]) / leaves_.up[l]});
    return phases;
  }
  // Into the critical links' room: a waiting transfer whose ends are free in the phase and whose
  // route fits.
  size_t fill_critical(Phase& ph, size_t p) {
    return critical_->fill(load_, p, [&](const Transfer& t) {
      using Try = CriticalLinks::Try;
      const auto s = static_cast<size_t>(t.src);
      if (ph.dst[s] >= 0 || busy_[static_cast<size_t>(t.dst)] || !leaves_allow(t.src, t.dst)) return Try::busy;
      std::vector<int32_t>& todo = todo_[s];
      w_.work += todo.size();
      const auto x = std::find(todo.begin(), todo.end(), t.dst);
      if (x == todo.end()) return Try::gone;
      const Choice c = option_for(s, t.dst);
      if (!c.fits) return Try::busy;
      take(ph, s, static_cast<size_t>(x - todo.begin()), c.option);
      return Try::placed;
    });
  }
  bool crosses(int32_t s, int32_t d) const {
    const int a = leaf(s), b = leaf(d);
    return a >= 0 && b >= 0 && a != b;
  }
  bool full(const std::vector<int>& used, int l) const {
    return l >= 0 && leaves_.up[l] > 0 && used[l] >= leaves_.up[l];
  }
  // Whether s -> d may enter the phase as its leaves' up-links are used.
  bool leaves_allow(int32_t s, int32_t d) const {
    if (!crosses(s, d)) return leaf(s) < 0 || intra_used_[leaf(s)] < intra_quota_[leaf(s)];
    return !full(out_used_, leaf(s)) && !full(in_used_, leaf(d));
  }

  // Adds (+1) or takes back (-1) a waiting transfer in the counts of what is left.
  void count(int32_t s, int32_t d, int delta) {
    if (critical_) critical_->count(s, d, delta);
    if (const auto [a, b] = table_.range(static_cast<size_t>(s), static_cast<size_t>(d)); b - a == 1) {
      const int32_t* ls = table_.links(a);
      for (uint16_t y = 0; y < table_.opt(a).len; ++y) link_left_[static_cast<size_t>(ls[y])] += delta;
    }
    send_left_[static_cast<size_t>(s)] += delta, recv_left_[static_cast<size_t>(d)] += delta;
    if (crosses(s, d))
      out_left_[leaf(s)] += delta, in_left_[leaf(d)] += delta;
    else if (intra_left_[static_cast<size_t>(s)] += delta; leaf(s) >= 0)
      intra_leaf_left_[leaf(s)] += delta;  // a rank on no leaf: none
  }
  // How many phases a rank or its leaf still needs at the least: what a phase should serve first.
  double pressure_out(size_t i) const {
    const int a = leaf(i);
    return std::max<double>(send_left_[i], a >= 0 && leaves_.up[a] > 0 ? double(out_left_[a]) / leaves_.up[a] : 0);
  }
  // A transfer's receiving side: its receiver and, for one that crosses, the receiver's leaf. One
  // within its leaf uses no up-link: its receiver alone, and it yields ties to one that crosses.
  // (Tried: the pressure of the links of a transfer's only route at LMC 0 too. It ranked by links
  // whose totals differ little and lost more than it gained: 0.97 -> 0.90 on a half fat-tree with
  // links missing, +0.02-0.04 on small director fabrics.)
  double pressure_in(size_t i, int32_t d) const {
    const auto j = static_cast<size_t>(d);
    if (!crosses(static_cast<int32_t>(i), d)) return recv_left_[j] - 1e-6;
    const int b = leaf(j);
    return std::max<double>(recv_left_[j], b >= 0 && leaves_.up[b] > 0 ? double(in_left_[b]) / leaves_.up[b] : 0);
  }

  // cand_: up to kTries of sender i's waiting transfers that `ok` admits and its leaves allow, most
  // pressing first, from a window of them moved on every phase (scanning all of them in every
  // phase costs phases x waiting transfers: 10^9 at a few thousand hosts).
  template <class Ok>
  void candidates(size_t i, size_t p, Ok ok) {
    cand_.clear();
    const size_t m = todo_[i].size(), window = std::min(m, window_), from = m ? (p * window_) % m : 0;
    w_.work += window;
    for (size_t y = 0; y < window; ++y) {
      const size_t x = (from + y) % m;
      const int32_t d = todo_[i][x];
      if (ok(d) && leaves_allow(static_cast<int32_t>(i), d))
        cand_.emplace_back(-pressure_in(i, d), static_cast<uint32_t>(x));
    }
    const size_t k = std::min(kTries, cand_.size());
    // The keys are unique (x differs), so nth_element then sorting the first k gives partial_sort's
    // order at less cost: this runs for every sender in every phase.
    const auto kth = cand_.begin() + static_cast<long>(k);
    if (k < cand_.size()) std::nth_element(cand_.begin(), kth, cand_.end());
    std::sort(cand_.begin(), kth);
    cand_.resize(k);
  }

  // The route for i -> d: the least loaded option that fits as the links are. A link slower than a
  // host link carries no transfer in a one-slot phase; where every path crosses one, a transfer
  // takes it alone (its phase then lasts as long as that link needs). One pass over the options;
  // an option stops at its first link too full for either (on tables that leave most links
  // unusable nearly every option does).
  Choice option_for(size_t i, int32_t d) {
    auto [a, b] = table_.range(i, static_cast<size_t>(d));
    Choice c;
    if (a == b) return c.routeless = true, c;  // no working route at any LID: sent on the base LID, as the shifts do
    uint32_t forced = kNone;
    long best_sum = 0, forced_sum = 0;
    for (uint32_t o = a; o < b; ++o) {
      const int32_t* ls = table_.links(o);
      long sum = 0;
      bool fits = true, fits_forced = true;
      for (uint16_t y = 0; y < table_.opt(o).len && fits_forced; ++y) {
        const int l = load_[ls[y]], k = cap_[ls[y]];
        ++w_.work;
        fits = fits && l < k, fits_forced = l < std::max(k, 1), sum += l;
      }
      if (fits && (c.option == kNone || sum < best_sum)) c.option = o, best_sum = sum;
      if (fits_forced && (forced == kNone || sum < forced_sum)) forced = o, forced_sum = sum;
    }
    if (c.option == kNone && forced != kNone && any_slow_) {
      bool all_slow = true;
      for (uint32_t o = a; o < b && all_slow; ++o) {
        bool slow = false;
        for (uint16_t y = 0; y < table_.opt(o).len && !slow; ++y) slow = cap_[table_.links(o)[y]] == 0;
        all_slow = slow;
      }
      if (all_slow) c.option = forced;
    }
    c.fits = c.option != kNone;
    return c;
  }

  void add_links(uint32_t o, int delta) {
    const int32_t* ls = table_.links(o);
    for (uint16_t y = 0; y < table_.opt(o).len; ++y) {
      if (load_[ls[y]] == 0 && delta > 0) touched_.push_back(ls[y]);
      load_[ls[y]] += delta;
    }
  }
  // Places the waiting transfer todo_[i][x] in `ph` by option `o` (kNone: no route, the base LID).
  void take(Phase& ph, size_t i, size_t x, uint32_t o) {
    const int32_t d = todo_[i][x];
    ph.dst[i] = d;
    if (o == kNone) {
      const Host& h = hosts_[static_cast<size_t>(d)];
      ph.dlid[i] = ctx_.fabric.nodes[h.node].ports[h.port].base_lid;
    } else {
      ph.dlid[i] = table_.opt(o).dlid;
      add_links(o, +1);
    }
    busy_[static_cast<size_t>(d)] = 1, from_[static_cast<size_t>(d)] = static_cast<int32_t>(i), option_[i] = o;
    count(static_cast<int32_t>(i), d, -1);
    if (crosses(static_cast<int32_t>(i), d))
      ++out_used_[leaf(i)], ++in_used_[leaf(d)];
    else if (leaf(i) >= 0)
      ++intra_used_[leaf(i)];
    todo_[i][x] = todo_[i].back();
    todo_[i].pop_back();
    --left_;
  }
  // Takes i's transfer placed by this packing out of `ph` again: it waits at the end of i's list.
  void untake(Phase& ph, size_t i) {
    const int32_t d = ph.dst[i];
    if (option_[i] != kNone) add_links(option_[i], -1);
    busy_[static_cast<size_t>(d)] = 0, from_[static_cast<size_t>(d)] = -1;
    count(static_cast<int32_t>(i), d, +1);
    if (crosses(static_cast<int32_t>(i), d))
      --out_used_[leaf(i)], --in_used_[leaf(d)];
    else if (leaf(i) >= 0)
      --intra_used_[leaf(i)];
    todo_[i].push_back(d);
    ph.dst[i] = -1, ph.dlid[i] = 0;
    ++left_;
  }

  // Augmenting swaps: a sender left idle takes a receiver that another sender of this packing
  // has, where that one moves on to a free receiver of its own (a path of length two in the
  // phase's matching: the greedy pass leaves a maximal matching, this brings it nearer a maximum).
  size_t augment(Phase& ph, size_t p) {
    size_t placed = 0, misses = 0;
    for (auto [key, i] : senders_) {
      if (misses >= kSwapMisses) break;  // where links, not the matching, leave senders idle
      if (ph.dst[i] >= 0 || todo_[i].empty()) continue;
      if (full(out_used_, leaf(i)) && intra_left_[i] == 0) continue;
      ++misses;  // until a swap succeeds
      candidates(i, p, [&](int32_t d) { return from_[static_cast<size_t>(d)] >= 0; });
      std::vector<std::pair<double, uint32_t>> mine(
          cand_.begin(), cand_.begin() + static_cast<long>(std::min(kSwapTries, cand_.size())));
      for (const auto& [k, x] : mine) {
        const int32_t d = todo_[i][x];
        const auto j = static_cast<size_t>(from_[static_cast<size_t>(d)]);
        const uint32_t old = option_[j];
        untake(ph, j);
        const Choice c = leaves_allow(static_cast<int32_t>(i), d) ? option_for(i, d) : Choice{};
        if (c.fits || c.routeless) {
          take(ph, i, x, c.option);
          // j on to a free receiver
          candidates(j, p, [&](int32_t e) { return !busy_[static_cast<size_t>(e)] && e != d; });
          bool moved = false;
          for (const auto& [k2, x2] : cand_) {
            const Choice c2 = option_for(j, todo_[j][x2]);
            if (!(c2.fits || c2.routeless)) continue;
            take(ph, j, x2, c2.option);
            moved = true;
            break;
          }
          if (moved) {
            ++placed, misses = 0;
            break;
          }
          untake(ph, i);                            // no way on for j: d goes back to it, i's list as it was (the
          std::swap(todo_[i][x], todo_[i].back());  // candidates left refer to its positions)
        }
        take(ph, j, todo_[j].size() - 1, old);
      }
    }
    return placed;
  }

  size_t window_;  // of a sender's waiting transfers, scanned for candidates
  const EvalContext& ctx_;
  const OptionTable& table_;
  const std::vector<Host>& hosts_;
  const Leaves& leaves_;
  const std::vector<int>& cap_;
  PackWork& w_;
  size_t n_, left_ = 0;
  std::vector<std::vector<int32_t>> todo_;
  std::vector<uint32_t> send_left_, recv_left_, intra_left_, out_left_, in_left_;
  std::vector<int> load_;
  std::vector<int32_t> touched_;
  std::vector<char> busy_;
  std::vector<int32_t> from_;            // per receiver: its sender in this phase, where this packing placed it
  std::vector<uint32_t> option_;         // per sender: the option it was placed by
  std::vector<int> out_used_, in_used_;  // per leaf: the phase's transfers leaving (entering) it
  std::vector<uint32_t> intra_leaf_left_, intra_used_, intra_quota_;  // per leaf: transfers within it
  std::vector<std::pair<double, uint32_t>> senders_, cand_;
  std::optional<CriticalLinks> critical_;  // made once the counts are in
  std::vector<int> link_left_;             // per link: the waiting transfers whose one route crosses it
  bool one_slot_;                          // phases of one slot: cap_ is what a link carries in one
  bool any_slow_;  // only a fabric with links slower than a host link has transfers forced onto them
};

// Whether the slots are sure to exceed `max_slots` before phase `p`: those spent and those what
// waits takes at the least. In the pass over the `existing` phases (one slot each), each of those
// still ahead may take a slot's worth of it.
bool sure_to_miss(const Packer& packer, size_t p, size_t existing, double spent, size_t fresh_slots, int slots,
                  size_t max_slots) {
  const double need = std::ceil(packer.least_slots_left() - 1e-9);
  if (p >= existing) return spent + static_cast<double>(fresh_slots) + need > static_cast<double>(max_slots);
  if (slots != 1) return false;  // the phases ahead are counted at their length until passed
  return static_cast<double>(existing) + std::max(0.0, need - static_cast<double>(existing - p)) >
         static_cast<double>(max_slots);
}

}  // namespace

bool pack_phases(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, const Leaves& leaves,
                 const std::vector<int>& cap, std::vector<Transfer> deferred, std::vector<Phase>& phases,
                 size_t max_slots, PackWork* pw, int slots) {
  PackWork local;
  PackWork& w = pw ? *pw : local;
  const size_t n = hosts.size();
  slots = std::max(slots, 1);
  const size_t max_phases = max_slots == SIZE_MAX ? SIZE_MAX : max_slots / static_cast<size_t>(slots);
  // A sender's waiting transfers scanned per phase: 256 where the budget pays for that scan of every
  // sender in every phase the best so far takes, else fewer (64 at the least). (256 over a 2 000-host
  // set of the 3 456-host tree cost 1 364 units per transfer placed, mostly scanning for the few
  // receivers still free: every packing was projected past its budget, 0.84 of the least time;
  // with 64 they finish, 0.99. On 288 hosts under minhop 64 lost a phase in 50: 0.955 -> 0.945.)
  size_t window = 256;
  while (window > 64 && max_phases != SIZE_MAX &&
         static_cast<double>(window) * static_cast<double>(max_phases) * static_cast<double>(n) >
             static_cast<double>(w.budget))
    window /= 2;
  Packer packer(ctx, table, hosts, leaves, cap, deferred, window, slots, w);
  deferred = {};
  constexpr size_t kProjectAfter = 32;  // new phases before their pace is trusted
  size_t fresh_phases = 0, fresh_placed = 0;
  uint64_t fresh_work0 = 0;               // the work done when the first new phase began
  const size_t existing = phases.size();  // the phases there are, passed first
  // The slots spent: the phases there are at `slots` each until the pass has measured them (a
  // composition's long phases are not all full), each new one as long as what it carries. With
  // one-slot phases, every phase counts one.
  double spent = static_cast<double>(existing) * slots;
  size_t fresh_slots = 0;
  const size_t total = packer.left();
  // First into the phases there are, where senders wait and links have room; then new phases.
  for (size_t p = 0; packer.left() > 0; ++p) {
    const bool fresh = p >= phases.size();
    if (fresh && spent + static_cast<double>(fresh_slots) >= static_cast<double>(max_slots)) return false;
    // The budget, and the work projected from a steady pace: a packing that will not finish within
    // its budget stops early, its work wasted small. Two paces, each steady on its own: the pass
    // over the phases there are costs about the same per phase (they are nearly full and place
    // little), so its total is projected from the phases passed; new phases place at their own
    // pace, so the rest is projected from theirs. (One pace over both stopped the 864-host tree
    // after a cable loss at 50 M of 312 M: the first pass placed little for its work.) A pass
    // projected past half the budget is cut short rather than the packing: where most transfers
    // wait (the whole 3 456-host tree at 18 hosts per 8 up-links: 7.9 M of 11.9 M) it placed 1.1 M
    // for 650 M, and only new phases could tell whether the rest fits.
    constexpr uint64_t kJudgeAfter = 50'000'000;  // about a second: below it nothing is judged
    const auto work = static_cast<double>(w.work), budget = static_cast<double>(w.budget);
    const auto left = static_cast<double>(packer.left());
    if (!fresh && p >= kProjectAfter && w.work >= kJudgeAfter &&
        work * static_cast<double>(existing) > budget / 2 * static_cast<double>(p)) {
      p = existing - 1;  // the pass would take more than half the budget: new phases decide
      continue;
    }
    if (fresh && fresh_phases == 0) fresh_work0 = w.work;
    if (fresh && fresh_phases >= kProjectAfter && w.work >= kJudgeAfter &&
        work + left * static_cast<double>(w.work - fresh_work0) /
                    static_cast<double>(std::max<size_t>(fresh_placed, 1)) >
            budget)
      return w.over = true, false;
    if (w.work > w.budget) return w.over = true, false;
    // Not judged once less than a new phase's worth is left: one more phase decides, and the
    // compaction that follows may still take the packing below the best (a 575-shift tree in
    // 12-slot phases: 46 transfers left, projected 0.4 slot over, compacted 6 % under).
    if (fresh && fresh_phases >= kProjectAfter && fresh_placed > 0 && left * fresh_phases > fresh_placed &&
        spent + static_cast<double>(fresh_slots) +
                left * static_cast<double>(fresh_slots) / static_cast<double>(fresh_placed) >
            static_cast<double>(max_slots))
      return false;
    if (max_slots != SIZE_MAX && (p % 4 == 0 || p == existing) &&
        sure_to_miss(packer, p, existing, spent, fresh_slots, slots, max_slots))
      return false;
    if (w.progress) w.progress(total - packer.left(), total);
    if (fresh) phases.push_back(Phase{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)});
    Phase& ph = phases[p];
    packer.begin(ph, fresh);
    const size_t placed = packer.fill(ph, p, fresh);
    const uint32_t took = packer.end();
    if (fresh)
      ++fresh_phases, fresh_placed += placed, fresh_slots += slots == 1 ? 1 : took;
    else if (slots > 1)
      spent -= slots - std::min<double>(took, slots);
  }
  return true;
}

}  // namespace ibroute::schedule
