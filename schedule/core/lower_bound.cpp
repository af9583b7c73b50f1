#include "ibroute/schedule/lower_bound.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "option_table.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

namespace {

// Places every route of a transfer may have to cross, as dense keys: leaving switch s (2s),
// entering it (2s + 1), and crossing between tree levels l and l+1 upwards (2n + 2l) or
// downwards (2n + 2l + 1), n the number of nodes.
struct Step {
  uint32_t key;
  uint32_t transfer;
  int32_t link;
};

struct PhaseResult {
  int worst = 0;
  int64_t key = -1;  // -1: nothing crosses a switch link
  size_t transfers = 0, links = 0;
};

// Whether the transfers can each take one of their candidate links with at most `cap` on any
// link: augmenting paths (Kuhn), candidates as indices into the bucket's links.
class BMatching {
 public:
  bool feasible(const std::vector<std::vector<uint32_t>>& cand, size_t nlinks, int cap) {
    holders_.assign(nlinks, {});
    for (uint32_t t = 0; t < cand.size(); ++t) {
      seen_.assign(nlinks, 0);
      if (!augment(t, cand, cap)) return false;
    }
    return true;
  }

 private:
  bool augment(uint32_t t, const std::vector<std::vector<uint32_t>>& cand, int cap) {
    for (uint32_t x : cand[t]) {
      if (seen_[x]) continue;
      seen_[x] = 1;
      if (static_cast<int>(holders_[x].size()) < cap) {
        holders_[x].push_back(t);
        return true;
      }
      for (uint32_t& other : holders_[x])
        if (augment(other, cand, cap)) {  // `other` moved to another link: t takes its place here
          other = t;
          return true;
        }
    }
    return false;
  }
  std::vector<std::vector<uint32_t>> holders_;
  std::vector<char> seen_;
};

// Counting and grouping with arrays over all keys and links, reset through touched lists: a phase
// costs what its routes hold, with no sorting (3 456 hosts: ~10^5 steps per phase, 3 455 phases).
class PhaseBounder {
 public:
  PhaseBounder(const EvalContext& ctx, const OptionTable& t, const std::vector<int32_t>& cut_of)
      : ctx_(ctx), t_(t), cut_of_(cut_of), nodes_(ctx.fabric.nodes.size()), keys_(2 * nodes_ + 2 * (ctx.structure.levels + 1)),
        routes_at_(keys_, 0), last_route_(keys_, UINT32_MAX), bucket_size_(keys_, 0), bucket_start_(keys_ + 1, 0),
        link_slot_(ctx.links.size(), -1) {}

  PhaseResult bound(const Phase& ph) {
    steps_.clear();
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      auto [a, b] = t_.range(i, static_cast<size_t>(ph.dst[i]));
      if (a == b) continue;  // no working route: it loads nothing
      collect(static_cast<uint32_t>(i), a, b);
    }
    // Group by key, keeping transfer order within a key (a counting sort).
    for (uint32_t k : used_keys_) bucket_size_[k] = 0;
    used_keys_.clear();
    for (const Step& st : steps_)
      if (bucket_size_[st.key]++ == 0) used_keys_.push_back(st.key);
    // Level cuts first: their even share is cheap and lifts the bar the switch matchings must pass.
    std::sort(used_keys_.begin(), used_keys_.end(), [&](uint32_t x, uint32_t y) { return (x >= 2 * nodes_) != (y >= 2 * nodes_) ? x >= 2 * nodes_ : x < y; });
    uint32_t at = 0;
    for (uint32_t k : used_keys_) bucket_start_[k] = at, at += bucket_size_[k];
    grouped_.resize(steps_.size());
    fill_ = bucket_start_;
    for (const Step& st : steps_) grouped_[fill_[st.key]++] = st;
    PhaseResult best;
    for (uint32_t k : used_keys_) bucket(k, best);
    return best;
  }

 private:
  // The places every route of transfer i crosses, with the links its routes take there.
  void collect(uint32_t i, uint32_t a, uint32_t b) {
    mine_.clear();
    for (uint32_t k = a; k < b; ++k) {
      const int32_t* ls = t_.links(k);
      const uint16_t len = t_.opt(k).len;
      auto note = [&](uint32_t key, int32_t link) {
        if (last_route_[key] != k) last_route_[key] = k, ++routes_at_[key];  // a route counts once per place
        mine_.push_back({key, i, link});
      };
      for (uint16_t x = 0; x < len; ++x) {
        const auto node = static_cast<uint32_t>(ctx_.links.node(ls[x]));
        if (ctx_.switch_link(ls[x])) {
          note(2 * node, ls[x]);
          if (const int32_t cut = cut_of_[ls[x]]; cut >= 0) note(static_cast<uint32_t>(cut), ls[x]);
        }
        if (x > 0 && ctx_.switch_link(ls[x - 1])) note(2 * node + 1, ls[x - 1]);
      }
    }
    const uint32_t routes = b - a;
    for (const Step& st : mine_)
      if (routes_at_[st.key] == routes) steps_.push_back(st);
    for (const Step& st : mine_) routes_at_[st.key] = 0, last_route_[st.key] = UINT32_MAX;
  }

  // The least worst load of one place's transfers, where it is above the best so far.
  void bucket(uint32_t key, PhaseResult& best) {
    const Step* st = grouped_.data() + bucket_start_[key];
    const uint32_t n = bucket_size_[key];
    links_.clear();
    cand_.clear();
    for (uint32_t z = 0; z < n; ++z) {
      if (link_slot_[st[z].link] < 0) link_slot_[st[z].link] = static_cast<int32_t>(links_.size()), links_.push_back(st[z].link);
      if (z == 0 || st[z].transfer != st[z - 1].transfer) cand_.emplace_back();
      const auto x = static_cast<uint32_t>(link_slot_[st[z].link]);
      if (std::find(cand_.back().begin(), cand_.back().end(), x) == cand_.back().end()) cand_.back().push_back(x);
    }
    for (int32_t l : links_) link_slot_[l] = -1;
    const int even = static_cast<int>((cand_.size() + links_.size() - 1) / links_.size());  // ceil(|T| / |U|)
    if (key >= 2 * nodes_) {  // a level cut: thousands of transfers; the even share is bound enough
      if (even > best.worst) best = {even, key, cand_.size(), links_.size()};
      return;
    }
    if (even <= best.worst && matching_.feasible(cand_, links_.size(), best.worst)) return;
    int w = std::max(even, best.worst + 1);
    while (!matching_.feasible(cand_, links_.size(), w)) ++w;
    best = {w, key, cand_.size(), links_.size()};
  }

  const EvalContext& ctx_;
  const OptionTable& t_;
  const std::vector<int32_t>& cut_of_;  // per link: its level-cut key, or -1
  const size_t nodes_, keys_;
  std::vector<uint32_t> routes_at_, last_route_, bucket_size_, bucket_start_, fill_, used_keys_;
  std::vector<int32_t> link_slot_, links_;
  std::vector<Step> steps_, mine_, grouped_;
  std::vector<std::vector<uint32_t>> cand_;
  BMatching matching_;
};

// Per directed link: the dense key of the level boundary it crosses (see Step), or -1 within a
// level, off the tree, or not between switches.
std::vector<int32_t> level_cuts(const EvalContext& ctx) {
  const size_t n = ctx.fabric.nodes.size();
  const auto& level = ctx.structure.level;
  std::vector<int32_t> cut(ctx.links.size(), -1);
  for (size_t l = 0; l < cut.size(); ++l) {
    const auto link = static_cast<int32_t>(l);
    if (!ctx.switch_link(link)) continue;
    const Port& p = ctx.fabric.nodes[ctx.links.node(link)].ports[ctx.links.port(link)];
    const int a = level[ctx.links.node(link)], b = level[p.peer_node];
    if (a < 1 || b < 1 || a > ctx.structure.levels || b > ctx.structure.levels) continue;
    if (b == a + 1) cut[l] = static_cast<int32_t>(2 * n + 2 * static_cast<size_t>(a));
    if (b == a - 1) cut[l] = static_cast<int32_t>(2 * n + 2 * static_cast<size_t>(b) + 1);
  }
  return cut;
}

}  // namespace

LowerBound worst_load_lower_bound(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<Phase>& phases) {
  LowerBound out;
  if (phases.empty() || hosts.empty()) return out;
  const OptionTable table(ctx, hosts);
  const std::vector<int32_t> cut_of = level_cuts(ctx);
  std::vector<PhaseResult> results(phases.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    PhaseBounder b(ctx, table, cut_of);
    for (size_t p; (p = next.fetch_add(1, std::memory_order_relaxed)) < phases.size();) results[p] = b.bound(phases[p]);
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), static_cast<unsigned>(phases.size() / 8 + 1)));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < threads; ++k) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (size_t p = 0; p < results.size(); ++p) {
    const PhaseResult& r = results[p];
    if (r.key < 0 || r.worst <= out.worst) continue;
    out.worst = r.worst;
    out.phase = static_cast<int>(p);
    const std::string over = " over " + std::to_string(r.links) + (r.links == 1 ? " link" : " links");
    const size_t n = ctx.fabric.nodes.size();
    if (static_cast<size_t>(r.key) >= 2 * n) {
      const size_t cut = static_cast<size_t>(r.key) - 2 * n;
      const int lower = static_cast<int>(cut / 2);
      out.where = "level " + std::to_string(cut & 1 ? lower + 1 : lower) + " to " + std::to_string(cut & 1 ? lower : lower + 1) +
                  ": " + std::to_string(r.transfers) + " transfers cross" + over + " that their routes use";
    } else {
      out.where = ctx.fabric.nodes[static_cast<size_t>(r.key / 2)].desc + ": " + std::to_string(r.transfers) + " transfers " +
                  (r.key & 1 ? "enter" : "leave") + over;
    }
  }
  return out;
}

}  // namespace ibroute::schedule
