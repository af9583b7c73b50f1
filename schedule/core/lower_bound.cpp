#include "ibroute/schedule/lower_bound.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "ibroute/fabric/parallel.hpp"
#include "ibroute/schedule/admission.hpp"
#include "level_groups.hpp"
#include "option_table.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

namespace {

// A transfer's possible link where it leaves its ingress switch (key 2s) or enters its egress
// switch (2s + 1): every route of it passes both.
struct Step {
  uint32_t key;
  uint32_t transfer;
  int32_t link;
};

// Where a phase's bound comes from: a switch side (key >= 0: 2s leaving, 2s + 1 entering), a
// group cut (key -2 - c, c from group_cuts: a group of switches left or entered), or one
// link every route of some transfers takes (key -1, transfers on it).
struct PhaseResult {
  int worst = 0;
  int64_t key = kNowhere;
  size_t transfers = 0, links = 0;
  int32_t link = -1;
  static constexpr int64_t kNowhere = INT64_MIN;
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

// Three bounds per phase, each cheap: (1) links that every route of a transfer takes, counted;
// (2) per level boundary, the transfers that must cross it over the links their routes use there
// (the even share); (3) per ingress and egress switch, the least worst load of its transfers'
// first (last) switch links, a b-matching. Arrays over all switches, links and cuts are reset
// through touched lists: a phase costs what its routes hold, with no sorting.
class PhaseBounder {
 public:
  PhaseBounder(const EvalContext& ctx, const OptionTable& t, const std::vector<int32_t>& cut_of, int cuts)
      : ctx_(ctx),
        t_(t),
        cut_of_(cut_of),
        cuts_(static_cast<size_t>(cuts)),
        forced_(ctx.links.size(), 0),
        mark_(ctx.links.size(), 0),
        bucket_size_(2 * ctx.fabric.nodes.size(), 0),
        bucket_start_(bucket_size_.size(), 0),
        fill_(bucket_size_.size(), 0),
        link_slot_(ctx.links.size(), -1),
        cut_routes_(cuts_, 0),
        cut_last_(cuts_, UINT32_MAX),
        cut_links_(cuts_),
        cut_transfers_(cuts_, 0),
        cut_union_(cuts_, 0) {}

  PhaseResult bound(const Phase& ph) {
    steps_.clear();
    ++stamp_;
    std::fill(cut_transfers_.begin(), cut_transfers_.end(), 0);
    std::fill(cut_union_.begin(), cut_union_.end(), 0);
    PhaseResult best;
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      auto [a, b] = t_.range(i, static_cast<size_t>(ph.dst[i]));
      if (a == b) continue;  // no working route: it loads nothing
      collect(static_cast<uint32_t>(i), a, b, best);
    }
    for (int32_t l : forced_links_) forced_[l] = 0;
    forced_links_.clear();
    for (size_t c = 0; c < cuts_; ++c)
      if (cut_union_[c]) {
        const int even = static_cast<int>((cut_transfers_[c] + cut_union_[c] - 1) / cut_union_[c]);
        if (even > best.worst) best = {even, -2 - static_cast<int64_t>(c), cut_transfers_[c], cut_union_[c], -1};
      }
    // Group the steps by switch side, keeping transfer order within one (a counting sort).
    for (uint32_t k : used_keys_) bucket_size_[k] = 0;
    used_keys_.clear();
    for (const Step& st : steps_)
      if (bucket_size_[st.key]++ == 0) used_keys_.push_back(st.key);
    uint32_t at = 0;
    for (uint32_t k : used_keys_) bucket_start_[k] = at, at += bucket_size_[k];
    grouped_.resize(steps_.size());
    for (uint32_t k : used_keys_) fill_[k] = bucket_start_[k];
    for (const Step& st : steps_) grouped_[fill_[st.key]++] = st;
    for (uint32_t k : used_keys_) bucket(k, best);
    return best;
  }

 private:
  void collect(uint32_t i, uint32_t a, uint32_t b, PhaseResult& best) {
    const uint32_t routes = b - a;
    for (uint32_t k = a; k < b; ++k) {
      const int32_t* ls = t_.links(k);
      const uint16_t len = t_.opt(k).len;
      if (len >= 2 && ctx_.switch_link(ls[0])) add_step(2 * static_cast<uint32_t>(ctx_.links.node(ls[0])), i, ls[0]);
      if (len >= 2 && ctx_.switch_link(ls[len - 2]))
        add_step(2 * static_cast<uint32_t>(ctx_.links.node(ls[len - 1])) + 1, i, ls[len - 2]);
      for (uint16_t x = 0; x < len; ++x) {
        if (routes == 1 && ctx_.switch_link(ls[x])) {  // the only route: every link of it is taken
          if (forced_[ls[x]]++ == 0) forced_links_.push_back(ls[x]);
          if (forced_[ls[x]] > best.worst) best = {forced_[ls[x]], -1, static_cast<size_t>(forced_[ls[x]]), 1, ls[x]};
        }
        const int32_t c = cut_of_[ls[x]];
        if (c < 0) continue;
        if (cut_last_[c] != k) cut_last_[c] = k, ++cut_routes_[c], touched_cuts_.push_back(c);
        cut_links_[c].push_back(ls[x]);
      }
    }
    for (int32_t c : touched_cuts_) {
      if (cut_routes_[c] == routes) {  // every route crosses this boundary: the transfer must
        ++cut_transfers_[c];
        for (int32_t l : cut_links_[c])
          if (mark_[l] != stamp_) mark_[l] = stamp_, ++cut_union_[c];
      }
      cut_routes_[c] = 0, cut_last_[c] = UINT32_MAX, cut_links_[c].clear();
    }
    touched_cuts_.clear();
  }
  void add_step(uint32_t key, uint32_t i, int32_t link) {
    if (!steps_.empty() && steps_.back().key == key && steps_.back().transfer == i && steps_.back().link == link)
      return;
    steps_.push_back({key, i, link});
  }

  // The least worst load of one switch side's transfers, where it is above the best so far.
  void bucket(uint32_t key, PhaseResult& best) {
    const Step* st = grouped_.data() + bucket_start_[key];
    const uint32_t n = bucket_size_[key];
    links_.clear();
    cand_.clear();
    for (uint32_t z = 0; z < n; ++z) {
      if (link_slot_[st[z].link] < 0)
        link_slot_[st[z].link] = static_cast<int32_t>(links_.size()), links_.push_back(st[z].link);
      if (z == 0 || st[z].transfer != st[z - 1].transfer) cand_.emplace_back();
      const auto x = static_cast<uint32_t>(link_slot_[st[z].link]);
      if (std::find(cand_.back().begin(), cand_.back().end(), x) == cand_.back().end()) cand_.back().push_back(x);
    }
    for (int32_t l : links_) link_slot_[l] = -1;
    const int even = static_cast<int>((cand_.size() + links_.size() - 1) / links_.size());  // ceil(|T| / |U|)
    if (even <= best.worst && matching_.feasible(cand_, links_.size(), best.worst)) return;
    int w = std::max(even, best.worst + 1);
    while (!matching_.feasible(cand_, links_.size(), w)) ++w;
    best = {w, key, cand_.size(), links_.size(), -1};
  }

  const EvalContext& ctx_;
  const OptionTable& t_;
  const std::vector<int32_t>& cut_of_;  // per link: its group cut, or -1
  const size_t cuts_;
  std::vector<int> forced_;
  std::vector<int32_t> forced_links_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> bucket_size_, bucket_start_, used_keys_;
  std::vector<uint32_t> fill_;
  std::vector<int32_t> link_slot_, links_;
  std::vector<uint32_t> cut_routes_, cut_last_;
  std::vector<std::vector<int32_t>> cut_links_;
  std::vector<int32_t> touched_cuts_;
  std::vector<size_t> cut_transfers_, cut_union_;
  std::vector<Step> steps_, grouped_;
  std::vector<std::vector<uint32_t>> cand_;
  BMatching matching_;
};

// Per directed link between levels l and l + 1 (switch levels from 1) its group cut: the group
// of switches joined below level l + 1 that it leaves (upwards) or enters (downwards). Every
// transfer between two groups crosses both their cuts, and the most loaded group's share over
// the links its transfers' routes use there is at least the whole level's (a pod that only 39 of
// its 144 down-links reach takes 288 transfers of a phase at 8 on one, where the level's 477
// links give 7).
struct GroupCuts {
  std::vector<int32_t> of;  // per link: its cut, or -1 (within a level, off the tree, not between switches)
  struct Cut {
    int32_t group = -1;  // a switch of the group
    int lower = 0;       // the group's top level: the cut lies between it and the level above
    bool down = false;   // entering the group
    size_t switches = 0;
  };
  std::vector<Cut> cuts;
};

GroupCuts group_cuts(const EvalContext& ctx) {
  const auto& level = ctx.structure.level;
  const LevelGroups below = level_groups(ctx);
  GroupCuts out;
  out.of.assign(ctx.links.size(), -1);
  std::vector<int32_t> id(2 * ctx.fabric.nodes.size() * std::max(1, ctx.structure.levels - 1),
                          -1);  // (top, group, down) -> cut
  auto cut_for = [&](int lower, int32_t node, bool down) {
    const int32_t g = below.of(lower, node);
    int32_t& c = id[(static_cast<size_t>(lower - 1) * ctx.fabric.nodes.size() + static_cast<size_t>(g)) * 2 + down];
    if (c < 0) c = static_cast<int32_t>(out.cuts.size()), out.cuts.push_back({g, lower, down, 0});
    return c;
  };
  for (size_t l = 0; l < out.of.size(); ++l) {
    const auto link = static_cast<int32_t>(l);
    if (!ctx.switch_link(link)) continue;
    const Port& p = ctx.fabric.nodes[ctx.links.node(link)].ports[ctx.links.port(link)];
    const int a = level[ctx.links.node(link)], b = level[p.peer_node];
    if (a < 1 || b < 1 || a > ctx.structure.levels || b > ctx.structure.levels) continue;
    if (b == a + 1) out.of[l] = cut_for(a, ctx.links.node(link), false);
    if (b == a - 1) out.of[l] = cut_for(b, p.peer_node, true);
  }
  std::vector<size_t> size(id.size() / 2, 0);  // per (top, group): its switches
  for (size_t t = 0; t < below.groups.size(); ++t)
    for (int32_t g : below.groups[t])
      if (g >= 0) ++size[t * ctx.fabric.nodes.size() + static_cast<size_t>(g)];
  for (GroupCuts::Cut& c : out.cuts)
    c.switches = size[static_cast<size_t>(c.lower - 1) * ctx.fabric.nodes.size() + static_cast<size_t>(c.group)];
  return out;
}

}  // namespace

LowerBound worst_load_lower_bound(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<Phase>& all,
                                  size_t at_most, const std::vector<int>* ceiling, const ProgressFn& progress,
                                  size_t budget) {
  LowerBound out;
  if (all.empty() || hosts.empty()) return out;
  if (ceiling && ceiling->size() != all.size())
    throw std::invalid_argument("worst_load_lower_bound: one ceiling per phase");
  // Which phases are bounded: evenly spaced, as many as at_most and (without ceilings to order
  // them by) the work budget allow.
  size_t count = at_most && at_most < all.size() ? at_most : all.size();
  if (!ceiling) {
    size_t transfers = 0;
    for (const Phase& ph : all)
      for (int32_t d : ph.dst) transfers += d >= 0;
    const size_t per_phase = std::max<size_t>(1, transfers / all.size());
    count = std::clamp<size_t>(budget / per_phase, 1, count);
  }
  std::vector<size_t> index;
  for (size_t k = 0; k < count; ++k) index.push_back(k * all.size() / count);
  // The order they are taken in: highest ceiling first (ties by phase), so that the first phase
  // to reach the final worst is always bounded before anything could skip it; with ceilings the
  // budget keeps the first phases of that order.
  std::vector<size_t> order(index.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (ceiling) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return (*ceiling)[index[a]] > (*ceiling)[index[b]]; });
    size_t transfers = 0, within = 0;
    for (; within < order.size() && (within == 0 || transfers < budget); ++within)
      for (int32_t d : all[index[order[within]]].dst) transfers += d >= 0;
    order.resize(within);
  }
  out.phases = order.size();
  const std::shared_ptr<const OptionTable> shared = option_table_of(ctx, hosts);
  const OptionTable& table = *shared;
  const GroupCuts cuts = group_cuts(ctx);
  std::vector<PhaseResult> results(index.size());
  std::atomic<size_t> next{0};
  std::atomic<int> best{0};
  auto work = [&](bool reports) {
    PhaseBounder b(ctx, table, cuts.of, static_cast<int>(cuts.cuts.size()));
    for (size_t o; (o = next.fetch_add(1, std::memory_order_relaxed)) < order.size();) {
      if (reports && progress) report_or_stop(next, order.size(), [&] { progress("lower bound", o, order.size()); });
      const size_t p = order[o];
      if (ceiling && (*ceiling)[index[p]] <= best.load(std::memory_order_relaxed)) continue;  // cannot beat it
      results[p] = b.bound(all[index[p]]);
      if (results[p].key == PhaseResult::kNowhere) continue;
      for (int seen = best.load(); results[p].worst > seen && !best.compare_exchange_weak(seen, results[p].worst);) {
      }
    }
  };
  const unsigned threads = std::max(
      1u, std::min<unsigned>(std::thread::hardware_concurrency(), static_cast<unsigned>(index.size() / 8 + 1)));
  if (progress) progress("lower bound", 0, order.size());  // before the threads: either may take every phase
  run_parallel(threads, [&](unsigned k) { work(k == 0); });
  for (size_t p : order) {
    const PhaseResult& r = results[p];
    if (r.key == PhaseResult::kNowhere || r.worst <= out.worst) continue;
    out.worst = r.worst;
    out.phase = static_cast<int>(index[p]);
    const std::string over = " over " + std::to_string(r.links) + (r.links == 1 ? " link" : " links");
    if (r.key == -1) {
      out.where = describe_link(ctx.fabric, ctx.links, r.link) + ": the only route of " + std::to_string(r.transfers) +
                  " transfers";
    } else if (r.key < -1) {
      const GroupCuts::Cut& c = cuts.cuts[static_cast<size_t>(-2 - r.key)];
      const std::string& name = ctx.fabric.nodes[static_cast<size_t>(c.group)].desc;
      out.where = (c.switches == 1 ? name
                                   : "the " + std::to_string(c.switches) + " switches below level " +
                                         std::to_string(c.lower + 1) + " with " + name) +
                  ": " + std::to_string(r.transfers) + " transfers " + (c.down ? "enter" : "leave") + over +
                  " that their routes use";
    } else {
      out.where = ctx.fabric.nodes[static_cast<size_t>(r.key / 2)].desc + ": " + std::to_string(r.transfers) +
                  " transfers " + (r.key & 1 ? "enter" : "leave") + over;
      if (static_cast<size_t>(r.worst) > (r.transfers + r.links - 1) / r.links)
        out.where += " their routes allow, but too few of them differ to carry fewer than " + std::to_string(r.worst) +
                     " on one";
    }
  }
  return out;
}

}  // namespace ibroute::schedule
