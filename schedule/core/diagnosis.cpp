#include "ibroute/schedule/diagnosis.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace ibroute::schedule {

using namespace ibroute::fabric;

namespace {

// One measured pair: where it is, and its share of plan (after the suspects taken so far).
struct Pair {
  int32_t src, dst;
  uint16_t dlid;
  float share;
};

// Shares of plan per link as a histogram of 200 bins over 0..1 (1 and above in the last): the
// median of millions of pairs without keeping them per link.
constexpr size_t kBins = 200;
size_t bin_of(double q) { return std::min(kBins - 1, static_cast<size_t>(std::max(0.0, q) * kBins)); }
double median_of(const uint32_t* h, uint64_t n) {
  uint64_t seen = 0;
  for (size_t b = 0; b < kBins; ++b)
    if ((seen += h[b]) * 2 >= n) return std::min(1.0, (static_cast<double>(b) + 0.5) / kBins);
  return 1;
}

// Every pair's path, one at a time: the source's own link, then the switches' path from the
// table of (ingress switch, DLID) paths where the context has one (one memory access), else walked.
template <class Fn>
void for_each_path(const EvalContext& ctx, const Schedule& s, const std::vector<Pair>& pairs, Fn&& fn) {
  PathFinder finder(ctx.fabric, ctx.links);
  const SwitchPaths* table = ctx.switch_paths();
  std::vector<int32_t> path;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Host& h = s.hosts[static_cast<size_t>(pairs[i].src)];
    const Port& p = ctx.fabric.nodes[h.node].ports[h.port];
    RouteStatus st;
    if (table && p.connected() && port_usable(p) && table->has(p.peer_node)) {
      path.assign(1, ctx.links.id(h.node, h.port));
      st = table->append(p.peer_node, pairs[i].dlid, path);
    } else {
      st = finder.path(h.node, h.port, pairs[i].dlid, path);
    }
    if (st == RouteStatus::ok) fn(i, path);
  }
}

}  // namespace

std::vector<float> planned_pair_gbps(const EvalContext& ctx, const Schedule& s, double cap_gbps) {
  const size_t n = s.hosts.size();
  std::vector<float> out(n * n, -1.f);
  PathFinder finder(ctx.fabric, ctx.links);
  std::vector<int> load(ctx.links.size(), 0);
  std::vector<std::vector<int32_t>> paths(n);
  std::vector<int32_t> used;
  for (const Phase& ph : s.phases) {
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      paths[i].clear();
      if (ph.dst[i] < 0) continue;
      const Host& h = s.hosts[i];
      if (finder.path(h.node, h.port, ph.dlid[i], paths[i]) != RouteStatus::ok) {
        paths[i].clear();
        continue;
      }
      for (int32_t l : paths[i])
        if (load[l]++ == 0) used.push_back(l);
    }
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0 || paths[i].empty()) continue;
      double g = INFINITY;
      for (int32_t l : paths[i]) g = std::min(g, ctx.gbps[l] / load[l]);
      out[i * n + static_cast<size_t>(ph.dst[i])] = static_cast<float>(cap_gbps > 0 ? std::min(g, cap_gbps) : g);
    }
    for (int32_t l : used) load[l] = 0;
    used.clear();
  }
  return out;
}

RunDiagnosis diagnose_run(const EvalContext& ctx, const Schedule& s, const std::vector<float>& observed, double cap_gbps,
                          size_t at_most, size_t min_transfers) {
  RunDiagnosis d;
  const size_t n = s.hosts.size();
  if (observed.size() != n * n) return d;
  const std::vector<float> planned = planned_pair_gbps(ctx, s, cap_gbps);
  std::vector<uint16_t> dlid(n * n, 0);
  for (const Phase& ph : s.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] >= 0) dlid[i * n + static_cast<size_t>(ph.dst[i])] = ph.dlid[i];
  std::vector<Pair> pairs;
  std::array<uint32_t, kBins> all{};
  for (size_t k = 0; k < n * n; ++k)
    if (planned[k] > 0 && observed[k] >= 0) {
      const float q = std::min(1.f, observed[k] / planned[k]);
      pairs.push_back({static_cast<int32_t>(k / n), static_cast<int32_t>(k % n), dlid[k], q});
      ++all[bin_of(q)];
    }
  d.pairs = pairs.size();
  d.median_share = median_of(all.data(), pairs.size());
  // A run slower than plan everywhere (a slower transport than the scan's links, a loaded fabric)
  // has no part to blame for it: judge each link against the run's own median instead.
  if (d.median_share < 0.9 && d.median_share > 0)
    for (Pair& p : pairs) p.share = static_cast<float>(std::min(1.0, p.share / d.median_share));
  // Which host's own link each directed link is, and in which direction.
  std::vector<int32_t> host_of(ctx.links.size(), -1);
  std::vector<char> receive(ctx.links.size(), 0);
  for (size_t r = 0; r < n; ++r) {
    const Host& h = s.hosts[r];
    const int32_t up = ctx.links.id(h.node, h.port);
    host_of[static_cast<size_t>(up)] = static_cast<int32_t>(r);
    const Port& p = ctx.fabric.nodes[h.node].ports[h.port];
    if (p.connected()) {
      const int32_t down = ctx.links.id(p.peer_node, p.peer_port);
      host_of[static_cast<size_t>(down)] = static_cast<int32_t>(r), receive[static_cast<size_t>(down)] = 1;
    }
  }
  std::vector<uint32_t> hist(ctx.links.size() * kBins);
  std::vector<uint64_t> count(ctx.links.size());
  std::vector<char> taken(ctx.links.size(), 0);
  for (size_t round = 0; round < at_most; ++round) {
    std::fill(hist.begin(), hist.end(), 0u);
    std::fill(count.begin(), count.end(), 0u);
    for_each_path(ctx, s, pairs, [&](size_t i, const std::vector<int32_t>& path) {
      for (int32_t l : path) ++hist[static_cast<size_t>(l) * kBins + bin_of(pairs[i].share)], ++count[static_cast<size_t>(l)];
    });
    int32_t worst = -1;
    double worst_median = 1;
    for (size_t l = 0; l < ctx.links.size(); ++l) {
      if (taken[l] || count[l] < min_transfers) continue;
      const double m = median_of(&hist[l * kBins], count[l]);
      if (m < worst_median - 1e-12 || (worst >= 0 && m == worst_median && count[l] > count[static_cast<size_t>(worst)]))
        worst = static_cast<int32_t>(l), worst_median = m;
    }
    if (worst < 0 || worst_median > 0.9) break;  // what is left runs at 90 % of plan or better
    RunSuspect x;
    x.link = worst, x.rank = host_of[static_cast<size_t>(worst)], x.receive = receive[static_cast<size_t>(worst)];
    x.factor = worst_median, x.transfers = count[static_cast<size_t>(worst)];
    taken[static_cast<size_t>(worst)] = 1;
    // Its transfers: how many are slow, which senders they come from; then take its factor out.
    std::vector<char> over(pairs.size(), 0), sender(n, 0);
    size_t slow = 0;
    const double middle = (1 + x.factor) / 2;
    for_each_path(ctx, s, pairs, [&](size_t i, const std::vector<int32_t>& path) {
      if (std::find(path.begin(), path.end(), worst) == path.end()) return;
      over[i] = 1, sender[static_cast<size_t>(pairs[i].src)] = 1;
      slow += pairs[i].share < middle;
    });
    x.slow_share = x.transfers ? static_cast<double>(slow) / static_cast<double>(x.transfers) : 0;
    std::array<uint32_t, kBins> rest{};
    uint64_t rest_n = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (over[i]) pairs[i].share = static_cast<float>(std::min(1.0, pairs[i].share / std::max(x.factor, 1e-3)));
      else if (sender[static_cast<size_t>(pairs[i].src)]) ++rest[bin_of(pairs[i].share)], ++rest_n;
    }
    x.others = rest_n ? median_of(rest.data(), rest_n) : 1;
    // Confident where it is clearly slow, consistently so, on enough transfers, and its senders'
    // other transfers are not as slow (a host link has no others: its every transfer is its own).
    const double deficit = std::clamp((1 - x.factor - 0.1) / 0.3, 0.0, 1.0);
    const double enough = std::min(1.0, static_cast<double>(x.transfers) / (4.0 * static_cast<double>(min_transfers)));
    const double apart = x.rank >= 0 ? 1.0 : std::clamp((x.others - x.factor) / 0.2, 0.0, 1.0);
    x.confidence = deficit * x.slow_share * enough * apart;
    d.suspects.push_back(x);
  }
  std::stable_sort(d.suspects.begin(), d.suspects.end(), [](const RunSuspect& a, const RunSuspect& b) { return a.confidence > b.confidence; });
  return d;
}

namespace {

// Pairs into phases where no host sends or receives twice (first fit).
std::vector<Phase> pack_pairs(size_t n, const std::vector<std::array<int32_t, 3>>& pairs) {
  std::vector<Phase> phases;
  std::vector<std::vector<char>> sends, receives;
  for (const auto& [src, dst, dlid] : pairs) {
    size_t k = 0;
    while (k < phases.size() && (sends[k][static_cast<size_t>(src)] || receives[k][static_cast<size_t>(dst)])) ++k;
    if (k == phases.size()) {
      phases.emplace_back();
      phases.back().dst.assign(n, -1), phases.back().dlid.assign(n, 0);
      sends.emplace_back(n, 0), receives.emplace_back(n, 0);
    }
    phases[k].dst[static_cast<size_t>(src)] = dst, phases[k].dlid[static_cast<size_t>(src)] = static_cast<uint16_t>(dlid);
    sends[k][static_cast<size_t>(src)] = 1, receives[k][static_cast<size_t>(dst)] = 1;
  }
  return phases;
}

double median(std::vector<double> v) {
  if (v.empty()) return 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

Confirmation confirmation_schedule(const EvalContext& ctx, const Schedule& plan, const std::vector<int32_t>& links, size_t per_link) {
  Confirmation c;
  c.links = links;
  c.over.resize(links.size()), c.controls.resize(links.size());
  const size_t n = plan.hosts.size();
  std::vector<std::array<int32_t, 3>> chosen;
  std::vector<char> used(n * n, 0);
  PathFinder finder(ctx.fabric, ctx.links);
  std::vector<int32_t> path;
  auto take = [&](size_t i, const Phase& ph, std::vector<std::pair<int32_t, int32_t>>& into) {
    const size_t at = i * n + static_cast<size_t>(ph.dst[i]);
    if (used[at]) return;
    used[at] = 1;
    into.emplace_back(static_cast<int32_t>(i), ph.dst[i]);
    chosen.push_back({static_cast<int32_t>(i), ph.dst[i], ph.dlid[i]});
  };
  for (size_t s = 0; s < links.size(); ++s) {
    std::vector<char> sender(n, 0), receiver(n, 0);
    for (const Phase& ph : plan.phases)  // its transfers
      for (size_t i = 0; i < ph.dst.size() && c.over[s].size() < per_link; ++i)
        if (ph.dst[i] >= 0 && finder.path(plan.hosts[i].node, plan.hosts[i].port, ph.dlid[i], path) == RouteStatus::ok &&
            std::find(path.begin(), path.end(), links[s]) != path.end())
          take(i, ph, c.over[s]), sender[i] = 1, receiver[static_cast<size_t>(ph.dst[i])] = 1;
    // The controls: transfers of the same senders, or to the same receivers (a host's own link
    // carries all of its sends), that avoid every suspect.
    for (const Phase& ph : plan.phases)
      for (size_t i = 0; i < ph.dst.size() && c.controls[s].size() < c.over[s].size(); ++i)
        if (ph.dst[i] >= 0 && (sender[i] || receiver[static_cast<size_t>(ph.dst[i])]) &&
            finder.path(plan.hosts[i].node, plan.hosts[i].port, ph.dlid[i], path) == RouteStatus::ok &&
            std::none_of(path.begin(), path.end(), [&](int32_t l) { return std::find(links.begin(), links.end(), l) != links.end(); }))
          take(i, ph, c.controls[s]);
  }
  c.schedule.name = plan.name + "-confirm";
  c.schedule.hosts = plan.hosts;
  c.schedule.bound = plan.bound;
  c.schedule.method = "confirmation";
  c.schedule.timing = plan.timing;
  c.schedule.phases = pack_pairs(n, chosen);
  return c;
}

std::vector<Verdict> judge_confirmation(const EvalContext& ctx, const Confirmation& c, const std::vector<float>& observed) {
  const size_t n = c.schedule.hosts.size();
  const std::vector<float> planned = planned_pair_gbps(ctx, c.schedule);
  auto shares = [&](const std::vector<std::pair<int32_t, int32_t>>& pairs) {
    std::vector<double> v;
    for (auto [s, d] : pairs) {
      const size_t at = static_cast<size_t>(s) * n + static_cast<size_t>(d);
      if (observed.size() == n * n && planned[at] > 0 && observed[at] >= 0) v.push_back(std::min(1.0, static_cast<double>(observed[at] / planned[at])));
    }
    return v;
  };
  std::vector<Verdict> out;
  for (size_t s = 0; s < c.links.size(); ++s) {
    Verdict v;
    v.link = c.links[s];
    const std::vector<double> over = shares(c.over[s]), controls = shares(c.controls[s]);
    v.share = median(over), v.controls = median(controls);
    v.confirmed = !over.empty() && v.share <= 0.8 * v.controls;
    v.cleared = !over.empty() && v.share >= 0.95 * v.controls;
    out.push_back(v);
  }
  return out;
}

}  // namespace ibroute::schedule
