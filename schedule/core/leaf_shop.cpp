#include "leaf_shop.hpp"

#include <algorithm>
#include <numeric>

#include "open_shop.hpp"
#include "option_table.hpp"

namespace ibroute::schedule {

namespace {

constexpr size_t kGapTries = 8;  // receiving leaves tried per sender with up-links to spare

// The phases being built: who sends, receives and which links carry what in the newest.
class ShopPhases {
 public:
  ShopPhases(const std::vector<LeafGroup>& groups, size_t n, const LeafPaths* paths, std::vector<Phase>& phases)
      : groups_(groups),
        n_(n),
        paths_(paths),
        out_(phases),
        sent_(n, SIZE_MAX),
        received_(n, SIZE_MAX),
        done_((n * n + 63) / 64, 0),
        behind_(groups.size() * n, 0),
        ahead_(groups.size() * n, 0) {
    if (paths) load_at_.assign(paths->cap.size(), SIZE_MAX), load_.assign(paths->cap.size(), 0);
    for (size_t x = 0; x < groups.size(); ++x)
      for (const LeafGroup& to : groups)
        if (&to != &groups[x])
          for (int32_t r : to.ranks)
            behind_[x * n + static_cast<size_t>(r)] = static_cast<uint16_t>(groups[x].ranks.size()),
                            ahead_[x * n + static_cast<size_t>(r)] = static_cast<uint16_t>(groups[x].ranks.size());
  }

  void fresh() {
    out_.push_back({});
    out_.back().dst.assign(n_, -1), out_.back().dlid.assign(n_, 0);
  }
  bool empty_last() const {
    return std::all_of(out_.back().dst.begin(), out_.back().dst.end(), [](int32_t d) { return d < 0; });
  }

  // Up to `width` transfers from leaf x's hosts to leaf y's into the newest phase. The receivers
  // furthest behind with x first (a receiver whose paths the others' took waits once, not in every
  // phase: 874 of one receiver's transfers were left over else), then in order from `cursor` (moved
  // past the last taken); each receiver's sender, of those not yet busy nor done with it, the one
  // with most still to send to y, ties to the first after the receiver's own place plus `round`
  // (moved on each time the cursor wraps). `routed`: only where a path has room. Returns the
  // transfers taken.
  size_t take(size_t x, size_t y, size_t width, size_t& cursor, size_t& round, bool routed) {
    const LeafGroup& from = groups_[x];
    const LeafGroup& to = groups_[y];
    const size_t p = out_.size() - 1, n = from.ranks.size(), m = to.ranks.size();
    uint16_t* behind = &behind_[x * n_];
    uint16_t* ahead = &ahead_[y * n_];
    order_.clear();
    for (size_t k = 0; k < m; ++k)
      if (const size_t j = (cursor + k) % m;
          received_[static_cast<size_t>(to.ranks[j])] != p && behind[to.ranks[j]] > 0)
        order_.push_back(j);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return behind[to.ranks[a]] > behind[to.ranks[b]]; });
    if (routed)  // the receivers' rows of the option table, asked for at once (read at random, they are most of the
                 // time)
      for (size_t j : order_)
        paths_->table->prefetch_range(static_cast<size_t>(from.ranks[0]), static_cast<size_t>(to.ranks[j]));
    size_t taken = 0, last = SIZE_MAX;
    for (size_t k = 0; k < order_.size() && taken < width; ++k) {
      const size_t j = order_[k];
      const auto r = static_cast<size_t>(to.ranks[j]);
      if (routed) prefetch_ahead(from, to, k);
      size_t s = SIZE_MAX;
      for (size_t q = 0; q < n; ++q) {
        const auto c = static_cast<size_t>(from.ranks[(j + round + q) % n]);
        if (sent_[c] != p && !done(c, r) && (s == SIZE_MAX || ahead[c] > ahead[s])) s = c;
      }
      if (s == SIZE_MAX) continue;
      uint16_t dlid = 0;
      if (routed && !free_path(s, r, p, dlid)) continue;
      bits(s, r), sent_[s] = received_[r] = p, ++taken, --behind[r], --ahead[s];
      if (last == SIZE_MAX || (j + m - cursor) % m > (last + m - cursor) % m) last = j;
      out_.back().dst[s] = static_cast<int32_t>(r), out_.back().dlid[s] = dlid;
    }
    if (last != SIZE_MAX) {
      if (last + 1 >= m) ++round;
      cursor = (last + 1) % m;
    }
    return taken;
  }

  // The options of the receiver two ahead in order_ and the links of the one after this, asked for
  // while this one is looked at (its row came with the prefetch in take()).
  void prefetch_ahead(const LeafGroup& from, const LeafGroup& to, size_t k) const {
    const OptionTable& t = *paths_->table;
    const auto s = static_cast<size_t>(from.ranks[0]);
    if (k + 2 < order_.size()) t.prefetch_options(t.range(s, static_cast<size_t>(to.ranks[order_[k + 2]])).first);
    if (k + 1 < order_.size()) {
      const auto [a, b] = t.range(s, static_cast<size_t>(to.ranks[order_[k + 1]]));
      t.prefetch_links(a, b);
    }
  }

  // What `from`'s hosts have still to send to `to`'s.
  void rest(const LeafGroup& from, const LeafGroup& to, std::vector<Transfer>& into) const {
    for (int32_t s : from.ranks)
      for (int32_t r : to.ranks)
        if (!done(static_cast<size_t>(s), static_cast<size_t>(r))) into.push_back({s, r});
  }

 private:
  bool done(size_t s, size_t r) const { return (done_[(s * n_ + r) / 64] >> ((s * n_ + r) % 64)) & 1; }
  void bits(size_t s, size_t r) { done_[(s * n_ + r) / 64] |= uint64_t{1} << ((s * n_ + r) % 64); }

  // The first of s -> r's paths whose links all have room in phase p, taken (its DLID in `dlid`);
  // a transfer without any path is let through, for the solver to count as unroutable.
  bool free_path(size_t s, size_t r, size_t p, uint16_t& dlid) {
    const OptionTable& t = *paths_->table;
    const auto [first, last] = t.range(s, r);
    if (first == last) return true;
    for (uint32_t k = first; k < last; ++k) {
      const int32_t* ls = t.links(k);
      bool room = true;
      for (uint16_t x = 0; x < t.opt(k).len && room; ++x)
        room = load(ls[x], p) < paths_->cap[static_cast<size_t>(ls[x])];
      if (!room) continue;
      for (uint16_t x = 0; x < t.opt(k).len; ++x) load(ls[x], p) += 1;
      dlid = t.opt(k).dlid;
      return true;
    }
    return false;
  }
  int& load(int32_t l, size_t p) {
    const auto i = static_cast<size_t>(l);
    if (load_at_[i] != p) load_at_[i] = p, load_[i] = 0;
    return load_[i];
  }

  const std::vector<LeafGroup>& groups_;
  size_t n_;
  const LeafPaths* paths_;
  std::vector<Phase>& out_;
  std::vector<size_t> sent_, received_;  // the phase a rank last sent / received in
  std::vector<uint64_t> done_;           // per (sender, receiver): sent
  std::vector<uint16_t> behind_;         // per (sending leaf, receiver on another): transfers still to come
  std::vector<uint16_t> ahead_;          // per (receiving leaf, sender on another): transfers still to go
  std::vector<size_t> order_;
  std::vector<size_t> load_at_;  // per link: the phase load_ counts
  std::vector<int> load_;
};

}  // namespace

void leaf_shop_phases(const std::vector<LeafGroup>& groups, size_t n, const LeafPaths* paths,
                      std::vector<Phase>& phases, std::vector<Transfer>* leftover) {
  const size_t g = groups.size();
  ShopPhases out(groups, n, paths, phases);
  struct State {
    size_t left = 0, width = 1, cursor = 0, round = 0;
  };
  std::vector<State> pairs(g * g);
  for (size_t x = 0; x < g; ++x)
    for (size_t y = 0; y < g; ++y)
      if (x != y) {
        State& st = pairs[x * g + y];
        st.left = groups[x].ranks.size() * groups[y].ranks.size(), st.width = pair_width(groups[x], groups[y]);
        st.cursor = pair_offset(groups[y], st.width, (y + g - x) % g) % groups[y].ranks.size();
      }
  auto take = [&](size_t x, size_t y, size_t width = SIZE_MAX) {
    State& st = pairs[x * g + y];
    const size_t got =
        st.left > 0 ? out.take(x, y, std::min(width, st.width), st.cursor, st.round, paths != nullptr) : 0;
    st.left -= got;
    return got;
  };
  std::vector<size_t> sending(g), receiving(g);  // in the phase being built, per leaf
  // Up-links a pair's routes left unused in a phase: taken by the same leaf's transfers to other
  // leaves with room to receive (their pairs short too, or idle), tried from a place moving on with
  // the phase, a few leaves per sender. Left unused, they would leave a leaf of spare time short
  // at the end (3 000 random hosts of the 3 456-host tree: 13 % of the 15- and 16-host leaves'
  // transfers).
  std::vector<size_t> open, order(g);
  auto fill_gaps = [&](uint64_t t) {
    open.clear();
    for (size_t y = 0; y < g; ++y)
      if (receiving[y] < static_cast<size_t>(groups[y].up)) open.push_back(y);
    if (open.empty()) return;
    for (size_t x : order) {
      for (size_t k = 0, tries = 0;
           k < open.size() && tries < kGapTries && sending[x] < static_cast<size_t>(groups[x].up); ++k) {
        const size_t y = open[(t * 7 + x + k) % open.size()];
        const size_t room = static_cast<size_t>(groups[y].up) - receiving[y];
        if (y == x || room == 0 || pairs[x * g + y].left == 0) continue;
        ++tries;
        const size_t got = take(x, y, std::min(room, static_cast<size_t>(groups[x].up) - sending[x]));
        sending[x] += got, receiving[y] += got;
      }
    }
  };
  // The pairs of the busiest leaves (sending or receiving) choose their paths first: those leaves
  // have no phase to spare.
  for (const ShopSegment& seg : open_shop(pair_durations(groups))) {
    std::iota(order.begin(), order.end(), size_t{0});
    auto busiest = [&](size_t x) { return std::max(groups[x].ranks.size(), groups[seg.column[x]].ranks.size()); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return busiest(a) > busiest(b); });
    for (uint64_t t = 0; t < seg.length; ++t) {
      out.fresh();
      std::fill(sending.begin(), sending.end(), 0), std::fill(receiving.begin(), receiving.end(), 0);
      for (size_t x : order)
        if (seg.column[x] != x) sending[x] = receiving[seg.column[x]] = take(x, seg.column[x]);
      fill_gaps(t);
    }
  }
  std::vector<Transfer> rest;
  std::vector<Transfer>& into = leftover ? *leftover : rest;
  for (size_t x = 0; x < g; ++x)
    for (size_t y = 0; y < g; ++y)
      if (x != y && pairs[x * g + y].left > 0) out.rest(groups[x], groups[y], into);
  if (!phases.empty() && out.empty_last()) phases.pop_back();
  if (!leftover) append_leftover_phases(rest, n, phases);
}

void append_leftover_phases(const std::vector<Transfer>& leftover, size_t n, std::vector<Phase>& phases) {
  std::vector<Transfer> left = leftover;
  std::vector<size_t> sent(n, SIZE_MAX), received(n, SIZE_MAX);
  for (size_t p = 0; !left.empty(); ++p) {
    phases.push_back({});
    Phase& ph = phases.back();
    ph.dst.assign(n, -1), ph.dlid.assign(n, 0);
    std::erase_if(left, [&](const Transfer& t) {
      const auto src = static_cast<size_t>(t.src), dst = static_cast<size_t>(t.dst);
      if (sent[src] == p || received[dst] == p) return false;
      sent[src] = received[dst] = p, ph.dst[src] = t.dst;
      return true;
    });
  }
}

}  // namespace ibroute::schedule
