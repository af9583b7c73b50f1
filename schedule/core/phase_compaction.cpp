#include "phase_compaction.hpp"

#include <algorithm>
#include <deque>
#include <random>
#include <tuple>

#include "ibroute/fabric/prefetch.hpp"

namespace ibroute::schedule {

namespace {

constexpr uint32_t kNone = UINT32_MAX;
// Phases x links (4 bytes each) and phases x ranks (16 bytes): at most some hundred MB.
constexpr uint64_t kCells = 40'000'000;
// Moves per transfer of the phase being emptied (each looks at every phase) before the phase is
// given up: on a 216-host director fabric at LMC 0, 32 removed 50 phases, 64 removed 52, 200 53.
constexpr size_t kMovesPerTransfer = 64;
// A transfer just placed is not moved again for this many moves (tabu search's tenure): 3 and 15
// removed as many phases as 7.
constexpr uint32_t kTabu = 7;
// Transfers ejected at most to place one: with 1 the chains end early (39 phases removed there, 50
// with 2); 3 removes no more than 2 and costs more.
constexpr size_t kMaxBlockers = 2;
// Phases ahead whose link cells are asked for (home()).
constexpr size_t kReadAhead = 8;

class Compactor {
 public:
  Compactor(const OptionTable& t, const std::vector<int>& cap, std::vector<Phase>& phases, CompactWork& w)
      : t_(t),
        cap_(cap),
        ph_(phases),
        w_(w),
        n_(phases[0].dst.size()),
        nl_(cap.size()),
        np_(phases.size()),
        dst_(np_ * n_, -1),
        src_(np_ * n_, -1),
        opt_(np_ * n_, kNone),
        link_(np_ * nl_, 0),
        count_(np_, 0),
        alive_(np_, 1),
        closed_(np_, 0),
        moved_(np_ * n_, 0) {
    for (size_t p = 0; p < np_; ++p)
      for (size_t s = 0; s < n_; ++s) {
        const int32_t d = ph_[p].dst[s];
        if (d < 0) continue;
        ++count_[p], dst_[at(s, p)] = d, src_[at(d, p)] = static_cast<int32_t>(s);
        const uint32_t o = option_of(s, static_cast<size_t>(d), ph_[p].dlid[s]);
        opt_[at(s, p)] = o;
        if (o != kNone) links(p, o, +1, static_cast<int32_t>(s));
      }
    for (size_t l = 0; l < nl_; ++l)
      for (size_t p = 0; p < np_; ++p)
        closed_[p] = closed_[p] || static_cast<int>(link_[at(l, p)] >> 16) > cap_[l];  // over already: left alone
  }

  size_t phases() const { return np_; }

  // The open phase with the fewest transfers (the latest of equals): the next to empty.
  size_t emptiest() const {
    size_t v = np_;
    for (size_t p = 0; p < np_; ++p)
      if (alive_[p] && !closed_[p] && (v == np_ || count_[p] <= count_[v])) v = p;
    return v;
  }

  // Moves every transfer of phase v elsewhere and removes it; or, where that takes more moves than
  // its share, puts everything back and returns false.
  bool empty_phase(size_t v) {
    const size_t mark = log_.size();
    std::deque<Homeless> out;
    for (size_t s = 0; s < n_; ++s)
      if (dst_[at(s, v)] >= 0)
        out.push_back({static_cast<int32_t>(s), dst_[at(s, v)], ph_[v].dlid[s], opt_[at(s, v)], v});
    for (const Homeless& h : out) remove(v, static_cast<size_t>(h.s));
    const size_t limit = kMovesPerTransfer * out.size();
    for (size_t moves = 0; !out.empty(); ++moves) {
      const Homeless h = out.front();
      out.pop_front();
      if (moves > limit || w_.work > w_.budget || !home(h, v, ++move_, out)) {
        undo(mark);
        return false;
      }
    }
    alive_[v] = 0;
    log_.clear();
    return true;
  }

  // The phases kept, in their order.
  void finish() {
    size_t k = 0;
    for (size_t p = 0; p < np_; ++p)
      if (alive_[p]) {
        if (k != p) ph_[k] = std::move(ph_[p]);  // (a vector moved onto itself is left empty)
        ++k;
      }
    ph_.resize(k);
  }

 private:
  struct Homeless {
    int32_t s, d;
    uint16_t dlid;
    uint32_t o;
    size_t from;  // the phase it left
  };
  struct Op {
    bool add;
    uint32_t p;
    int32_t s, d;
    uint16_t dlid;
    uint32_t o;
  };

  // Per rank and per link, the phases side by side: a search over every phase reads them in a row.
  size_t at(size_t x, size_t p) const { return x * np_ + p; }
  size_t at(int32_t x, size_t p) const { return static_cast<size_t>(x) * np_ + p; }

  uint32_t option_of(size_t s, size_t d, uint16_t dlid) const {
    auto [a, b] = t_.range(s, d);
    for (uint32_t o = a; o < b; ++o)
      if (t_.opt(o).dlid == dlid) return o;
    return kNone;  // no working route at any LID (sent on the base LID), or a broken one: no links
  }
  void links(size_t p, uint32_t o, int delta, int32_t s) {
    const int32_t* ls = t_.links(o);
    for (uint16_t y = 0; y < t_.opt(o).len; ++y) {
      const size_t c = at(ls[y], p);
      const uint32_t load = (link_[c] >> 16) + static_cast<uint32_t>(delta);
      link_[c] = load ? load << 16 | static_cast<uint32_t>(s + 1)
                      : 0;  // the owner: meaningful on a link that carries one at a time
    }
    w_.work += t_.opt(o).len;
  }
  void place(size_t p, int32_t s, int32_t d, uint16_t dlid, uint32_t o) {
    ph_[p].dst[static_cast<size_t>(s)] = d, ph_[p].dlid[static_cast<size_t>(s)] = dlid;
    dst_[at(s, p)] = d, src_[at(d, p)] = s, opt_[at(s, p)] = o, ++count_[p];
    if (o != kNone) links(p, o, +1, s);
    log_.push_back({true, static_cast<uint32_t>(p), s, d, dlid, o});
  }
  void remove(size_t p, size_t s) {
    const int32_t d = dst_[at(s, p)];
    const uint32_t o = opt_[at(s, p)];
    log_.push_back({false, static_cast<uint32_t>(p), static_cast<int32_t>(s), d, ph_[p].dlid[s], o});
    if (o != kNone) links(p, o, -1, static_cast<int32_t>(s));
    ph_[p].dst[s] = -1, ph_[p].dlid[s] = 0, dst_[at(s, p)] = -1, src_[at(d, p)] = -1, opt_[at(s, p)] = kNone,
    --count_[p];
  }
  void undo(size_t mark) {
    while (log_.size() > mark) {
      const Op op = log_.back();
      if (op.add) {
        remove(op.p, static_cast<size_t>(op.s));
        log_.pop_back();
      } else {
        place(op.p, op.s, op.d, op.dlid, op.o);
        log_.pop_back();
      }
      log_.pop_back();
    }
  }

  // At most kMaxBlockers senders, without repeats: what stands in a transfer's way in one phase.
  struct Few {
    int32_t v[kMaxBlockers] = {};
    size_t n = 0;
    bool has(int32_t x) const {
      for (size_t i = 0; i < n; ++i)
        if (v[i] == x) return true;
      return false;
    }
    // Adds x unless there; false where that would make more than `limit`.
    bool add(int32_t x, size_t limit) {
      if (has(x)) return true;
      if (n >= limit) return false;
      v[n++] = x;
      return true;
    }
  };

  // The sender and the receiver of s -> d busy in phase p: the same for every option, so read
  // once per phase. False where more than `limit`.
  bool ends(size_t p, int32_t s, int32_t d, size_t limit, Few& who) const {
    who.n = 0;
    if (dst_[at(s, p)] >= 0 && !who.add(s, limit)) return false;
    if (const int32_t r = src_[at(d, p)]; r >= 0 && !who.add(r, limit)) return false;
    return true;
  }

  // What stands in the way of option o in phase p beyond `at_ends` (ends()'s, at most `limit`):
  // the senders of the transfers on its full links that are not among them, into `more`, while
  // both together stay within `limit`; false where more, or a link that takes none more. (Apart
  // from at_ends, not added to a copy of it: the copy, a 16-byte read of what ends() had just
  // written in 8, waited on the store in every phase looked at.)
  bool on_links(size_t p, uint32_t o, size_t limit, const Few& at_ends, Few& more) const {
    more.n = 0;
    if (o == kNone) return true;
    const int32_t* ls = t_.links(o);
    for (uint16_t y = 0; y < t_.opt(o).len; ++y) {
      const uint32_t v = link_[at(ls[y], p)];
      const int cap = cap_[static_cast<size_t>(ls[y])];
      if (static_cast<int>(v >> 16) < cap) continue;
      if (cap != 1 || !(v & 0xffff)) return false;
      const int32_t x = static_cast<int32_t>(v & 0xffff) - 1;
      if (!at_ends.has(x) && !more.add(x, limit - at_ends.n)) return false;
    }
    return true;
  }

  // Places h outside the victim: where nothing is in its way, in the fullest such phase; else where
  // the fewest transfers are (at random among equals), none of them moved in the last kTabu moves
  // and none the way h came from; those wait in `out`. False where no phase takes it at all.
  bool home(const Homeless& h, size_t victim, uint32_t move, std::deque<Homeless>& out) {
    auto [a, b] = t_.range(static_cast<size_t>(h.s), static_cast<size_t>(h.d));
    if (h.o == kNone) a = b = kNone;  // kept on its LID: no links of its own to place
    size_t best_p = np_, best_k = kMaxBlockers + 1;
    uint32_t best_o = kNone;
    ties_.clear();
    // A phase looked at costs its two ends and each option's links: counted as one unit and one
    // per option (two where the transfer has one path, as at LMC 0).
    const uint64_t per_phase = 1 + std::max<uint64_t>(1, b - a);
    // Every option's links, read ahead of the phase that reads them (below).
    hot_.clear();
    if (a != kNone)
      for (uint32_t o = a; o < b; ++o) hot_.insert(hot_.end(), t_.links(o), t_.links(o) + t_.opt(o).len);
    std::sort(hot_.begin(), hot_.end());
    hot_.erase(std::unique(hot_.begin(), hot_.end()), hot_.end());
    // First at most one in the way (the sender or the receiver idle there: a phase where both are
    // busy is passed at the cost of two reads), then, where no phase has that, two.
    for (size_t limit = 1; limit <= kMaxBlockers && best_k > limit - 1 && best_p == np_ && ties_.empty(); ++limit)
      for (size_t p = 0; p < np_; ++p) {
        // A phase's link cells lie in as many rows of link_ as the options have links: read in
        // turn, each waited on the memory (41 % of a 1 296-host plan's compaction on that read). A
        // phase some way ahead whose ends may pass has them asked for now; a hint, nothing more.
        if (const size_t q = p + kReadAhead; q < np_ && (limit > 1 || dst_[at(h.s, q)] < 0 || src_[at(h.d, q)] < 0))
          for (const int32_t l : hot_) fabric::prefetch_read(&link_[at(l, q)]);
        if (!alive_[p] || closed_[p] || p == victim || p == h.from) continue;
        w_.work += per_phase;
        Few at_ends;
        if (!ends(p, h.s, h.d, std::min(best_k, limit), at_ends)) continue;  // no option can fit
        for (uint32_t o = a; o == a || o < b; ++o) {
          Few more;  // best_k may have fallen below at_ends at an option before
          if (at_ends.n <= std::min(best_k, limit) && on_links(p, o, std::min(best_k, limit), at_ends, more)) {
            bool tabu = false;
            for (size_t i = 0; i < at_ends.n; ++i) tabu = tabu || moved_[at(at_ends.v[i], p)] + kTabu > move;
            for (size_t i = 0; i < more.n; ++i) tabu = tabu || moved_[at(more.v[i], p)] + kTabu > move;
            const size_t k = at_ends.n + more.n;
            if (!tabu && k < best_k) best_k = k, best_p = np_, ties_.clear();
            // Nothing in the way: the fullest phase (the emptiest are the next to empty). Else one of
            // the equals, drawn at random below.
            if (!tabu && k == 0 && (best_p == np_ || count_[p] > count_[best_p])) best_p = p, best_o = o;
            if (!tabu && k > 0) ties_.emplace_back(p, o);
          }
          if (o == kNone) break;
        }
      }
    if (best_k > 0 && !ties_.empty()) std::tie(best_p, best_o) = ties_[rng_() % ties_.size()];
    if (best_p == np_) return false;
    Few who, more;  // what is in the way there (within kMaxBlockers: so it was found), to be moved on
    ends(best_p, h.s, h.d, kMaxBlockers, who);
    on_links(best_p, best_o, kMaxBlockers, who, more);
    for (size_t i = 0; i < more.n; ++i) who.v[who.n++] = more.v[i];
    for (size_t i = 0; i < who.n; ++i) {
      const int32_t u = who.v[i];
      out.push_back({u, dst_[at(u, best_p)], ph_[best_p].dlid[static_cast<size_t>(u)], opt_[at(u, best_p)], best_p});
      remove(best_p, static_cast<size_t>(u));
    }
    place(best_p, h.s, h.d, best_o == kNone ? h.dlid : t_.opt(best_o).dlid, best_o);
    moved_[at(h.s, best_p)] = move;
    return true;
  }

  const OptionTable& t_;
  const std::vector<int>& cap_;
  std::vector<Phase>& ph_;
  CompactWork& w_;
  size_t n_, nl_, np_;
  std::vector<int32_t> dst_;   // per sender and phase: its receiver (-1 none), as the phase has it
  std::vector<int32_t> src_;   // per receiver and phase: its sender (-1 none)
  std::vector<uint32_t> opt_;  // per sender and phase: the option its transfer takes (kNone: no links)
  // Per link and phase: the transfers over it (high 16 bits) and the sender of the last placed + 1
  // (low 16 bits; ranks are fewer than 2^16 where compaction fits), read in one access.
  std::vector<uint32_t> link_;
  std::vector<uint32_t> count_;
  std::vector<char> alive_, closed_;
  std::vector<Op> log_;  // what the emptying of the current phase did, to undo it
  // Per sender and phase: the move that placed the transfer there (a transfer is where it was
  // placed last). Moves are counted over the whole compaction from past the tenure, so that a
  // transfer never moved is never tabu.
  std::vector<uint32_t> moved_;
  uint32_t move_ = kTabu;
  std::vector<std::pair<size_t, uint32_t>> ties_;  // the phases (and options) with the fewest in the way
  std::vector<int32_t> hot_;                       // the links of the transfer being placed
  std::mt19937_64 rng_{0x1b2042};                  // fixed seed: the same choices on any machine
};

}  // namespace

bool compaction_fits(size_t phases, size_t hosts, size_t links) {
  return phases > 1 && phases * links <= kCells && phases * hosts <= kCells &&
         hosts < 0xffff;  // link_'s owner: 16 bits
}

size_t compact_phases(const OptionTable& table, const std::vector<int>& cap, std::vector<Phase>& phases, size_t floor,
                      CompactWork& work) {
  if (phases.size() <= std::max<size_t>(floor, 1) || !compaction_fits(phases.size(), phases[0].dst.size(), cap.size()))
    return 0;
  Compactor c(table, cap, phases, work);
  size_t removed = 0;
  while (c.phases() - removed > floor && work.work <= work.budget) {
    // The emptiest phase only: where it cannot be emptied, the next emptiest could not either on
    // the fabrics tried (4 or 16 tried: as many phases removed, more work).
    const size_t v = c.emptiest();
    if (v == c.phases() || !c.empty_phase(v)) break;
    ++removed;
    if (work.progress) work.progress(removed, c.phases());
  }
  c.finish();
  return removed;
}

}  // namespace ibroute::schedule
