#include "ibroute/schedule/diagnosis.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <thread>

#include "ibroute/fabric/parallel.hpp"
#include "ibroute/fabric/prefetch.hpp"
#include "path_of.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

namespace {

// Shares of plan per link as a histogram of 200 bins over 0..1 (1 and above in the last): the
// median of millions of pairs without keeping them per link.
constexpr size_t kBins = 200;
size_t bin_of(double q) { return std::min(kBins - 1, static_cast<size_t>(std::max(0.0, q) * kBins)); }

// The pair matrix is turned, in place, into what the diagnosis reads of each pair: its share of
// plan (16 bits) and the DLID its transfer used (16 bits), so that no second n x n array is
// needed — 10 000 ranks are 10^8 pairs — and every pass reads the matrix in order.
constexpr uint32_t kNone = 0xffffffffu;
uint32_t pack(double share, uint16_t dlid) {
  return static_cast<uint32_t>(std::lround(std::clamp(share, 0.0, 1.0) * 65534)) << 16 | dlid;
}
double share_of(uint32_t v) { return static_cast<double>(v >> 16) / 65534; }
uint32_t word(const float& f) { return std::bit_cast<uint32_t>(f); }
void put(float& f, uint32_t v) { std::memcpy(&f, &v, sizeof v); }

unsigned threads_for(size_t work) {
  return static_cast<unsigned>(
      std::clamp<size_t>(work / (1u << 18), 1, std::max(1u, std::thread::hardware_concurrency())));
}

// Pass 1: each transfer's planned rate in its phase, the measured one turned into its share.
// Returns the histogram of all shares; `claimed` marks the pairs converted (a pair the schedule
// sends twice keeps its first phase).
std::array<uint64_t, kBins> to_shares(const EvalContext& ctx, const Schedule& s, std::vector<float>& m,
                                      double cap_gbps) {
  const size_t n = s.hosts.size();
  std::vector<std::atomic<uint64_t>> claimed((n * n + 63) / 64);
  const unsigned threads = threads_for(n * n);
  std::vector<std::array<uint64_t, kBins>> hist(threads);
  std::atomic<size_t> next{0};
  run_parallel(threads, [&](unsigned t) {
    PathOf path_of(ctx, s.hosts, ctx.switch_paths());
    std::vector<int> load(ctx.links.size(), 0);
    std::vector<std::vector<int32_t>> paths(n);
    std::vector<int32_t> used;
    for (size_t k; (k = next.fetch_add(1)) < s.phases.size();) {
      const Phase& ph = s.phases[k];
      for (size_t i = 0; i < ph.dst.size(); ++i) {
        if (const size_t j = i + kPathsAhead; j < ph.dst.size() && ph.dst[j] >= 0) path_of.prefetch(j, ph.dlid[j]);
        if (ph.dst[i] < 0 || !path_of(i, ph.dlid[i], paths[i])) {
          paths[i].clear();
          continue;
        }
        for (int32_t l : paths[i])
          if (load[static_cast<size_t>(l)]++ == 0) used.push_back(l);
      }
      for (size_t i = 0; i < ph.dst.size(); ++i) {
        // A phase's pairs lie one row apart in the matrix (400 MB at 10 000 ranks): each a miss
        // unless asked for ahead.
        if (const size_t j = i + kPathsAhead; j < ph.dst.size() && ph.dst[j] >= 0) {
          const size_t ahead = j * n + static_cast<size_t>(ph.dst[j]);
          prefetch_read(&m[ahead]);
          prefetch_read(&claimed[ahead / 64]);
        }
        if (ph.dst[i] < 0) continue;
        const size_t at = i * n + static_cast<size_t>(ph.dst[i]);
        if (claimed[at / 64].fetch_or(uint64_t{1} << (at % 64)) >> (at % 64) & 1) continue;
        const float observed = m[at];
        double g = INFINITY;
        for (int32_t l : paths[i]) g = std::min(g, ctx.gbps[static_cast<size_t>(l)] / load[static_cast<size_t>(l)]);
        if (cap_gbps > 0) g = std::min(g, cap_gbps);
        if (paths[i].empty() || !(g > 0) || !(observed >= 0)) {
          put(m[at], kNone);
          continue;
        }
        const double q = std::min(1.0, observed / g);
        put(m[at], pack(q, ph.dlid[i]));
        ++hist[t][bin_of(q)];
      }
      for (int32_t l : used) load[static_cast<size_t>(l)] = 0;
      used.clear();
    }
  });
  for (size_t at = 0; at < n * n; ++at)  // what no phase sends is not a pair
    if (!(claimed[at / 64].load(std::memory_order_relaxed) >> (at % 64) & 1)) put(m[at], kNone);
  std::array<uint64_t, kBins> all{};
  for (const auto& h : hist)
    for (size_t b = 0; b < kBins; ++b) all[b] += h[b];
  return all;
}

// One pass of the peeling: the suspect found last (`taken`, or -1) has its factor divided out of
// its transfers, counted as they go (how many are slow, the share of its senders' other
// transfers); then every link's histogram of the shares as they now are.
struct Pass {
  // kBins x links, bin-major: a pair adds to the same bin of every link on its path, and most
  // pairs' shares fall in a few bins, so the rows in use stay in the cache.
  std::vector<uint32_t> hist;
  std::vector<uint64_t> count;
  uint64_t slow = 0;
  std::array<uint64_t, kBins> rest{};
  explicit Pass(size_t links) : hist(links * kBins, 0), count(links, 0) {}
};

Pass peel_pass(const EvalContext& ctx, const Schedule& s, std::vector<float>& m, int32_t taken, double factor) {
  const size_t n = s.hosts.size(), nl = ctx.links.size();
  const unsigned threads = threads_for(n * n);
  std::vector<Pass> part;
  for (unsigned t = 0; t < threads; ++t) part.emplace_back(nl);
  const double middle = (1 + factor) / 2;
  std::atomic<size_t> next{0};
  run_parallel(threads, [&](unsigned t) {
    Pass& w = part[t];
    PathOf path_of(ctx, s.hosts, ctx.switch_paths());
    std::vector<int32_t> path;
    std::array<uint64_t, kBins> row_rest{};
    for (size_t i; (i = next.fetch_add(1)) < n;) {  // a row is one sender's transfers
      bool over_any = false;
      row_rest.fill(0);
      for (size_t k = 0; k < n; ++k) {
        if (const size_t j = k + kPathsAhead; j < n && word(m[i * n + j]) != kNone)
          path_of.prefetch(i, static_cast<uint16_t>(word(m[i * n + j]) & 0xffff));
        uint32_t v = word(m[i * n + k]);
        if (v == kNone || !path_of(i, static_cast<uint16_t>(v & 0xffff), path)) continue;
        double q = share_of(v);
        if (taken >= 0 && std::find(path.begin(), path.end(), taken) != path.end()) {
          over_any = true;
          w.slow += q < middle;
          q = std::min(1.0, q / std::max(factor, 1e-3));
          v = pack(q, static_cast<uint16_t>(v & 0xffff));
          put(m[i * n + k], v);
        } else if (taken >= 0) {
          ++row_rest[bin_of(q)];
        }
        const size_t b = bin_of(share_of(v));
        uint32_t* row = &w.hist[b * nl];
        for (int32_t l : path) ++row[l], ++w.count[static_cast<size_t>(l)];
      }
      if (over_any)
        for (size_t b = 0; b < kBins; ++b) w.rest[b] += row_rest[b];
    }
  });
  for (unsigned t = 1; t < threads; ++t) {
    for (size_t x = 0; x < part[0].hist.size(); ++x) part[0].hist[x] += part[t].hist[x];
    for (size_t l = 0; l < nl; ++l) part[0].count[l] += part[t].count[l];
    part[0].slow += part[t].slow;
    for (size_t b = 0; b < kBins; ++b) part[0].rest[b] += part[t].rest[b];
  }
  return std::move(part[0]);
}

// Parsimony: of the links about as slow as the slowest, the one that best explains the slow
// transfers — the most of them, while the transfers over it that ran at plan count against it
// (twice: a part at fault slows all its transfers). A switch port crossed by the slow transfers of
// several hosts explains each host's slowness, where a host's own link explains only its own; a
// host's link, whose every transfer is slow, beats any one port its transfers cross (each carries
// a part of them); and a port that carries only one host's transfers from outside its leaf beats
// the host, whose transfers from its own leaf ran at plan. Another link that explains nearly as
// well (97 %), at the same median, cannot be told apart by this run: `alternative`.
struct Explanation {
  int32_t link = -1, alternative = -1;
};

Explanation fewest_parts(const Pass& pass, const std::vector<double>& median, const std::vector<char>& taken,
                         size_t min_transfers, int32_t worst, double worst_median) {
  constexpr double kAlike = 0.1;  // medians this close to the slowest compete on what they explain
  const size_t nl = median.size(), slow_bins = bin_of((1 + worst_median) / 2);
  auto score = [&](size_t l) {
    uint64_t slow = 0;
    for (size_t b = 0; b < slow_bins; ++b) slow += pass.hist[b * nl + l];
    return static_cast<double>(slow) - 2.0 * static_cast<double>(pass.count[l] - slow);
  };
  std::vector<std::pair<size_t, double>> alike;
  for (size_t l = 0; l < nl; ++l)
    if (!taken[l] && pass.count[l] >= min_transfers && median[l] <= worst_median + kAlike)
      alike.emplace_back(l, score(l));
  Explanation out{worst, -1};
  double best = score(static_cast<size_t>(worst));
  for (const auto& [l, sc] : alike)
    if (sc > best || (sc == best && median[l] < median[static_cast<size_t>(out.link)]))
      best = sc, out.link = static_cast<int32_t>(l);
  double second = -INFINITY;
  for (const auto& [l, sc] : alike)
    if (static_cast<int32_t>(l) != out.link && sc >= 0.97 * best && sc > second &&
        std::abs(median[l] - median[static_cast<size_t>(out.link)]) <= 0.02)
      second = sc, out.alternative = static_cast<int32_t>(l);
  return out;
}

double median_of(const std::array<uint64_t, kBins>& h) {
  uint64_t n = 0;
  for (uint64_t x : h) n += x;
  uint64_t seen = 0;
  for (size_t b = 0; b < kBins; ++b)
    if ((seen += h[b]) * 2 >= n && n) return std::min(1.0, (static_cast<double>(b) + 0.5) / kBins);
  return 1;
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

namespace {

// Which host's own link each directed link is (its rank; -1: none), and in which direction.
struct HostLinks {
  std::vector<int32_t> rank;
  std::vector<char> receive;
};
HostLinks host_links(const EvalContext& ctx, const Schedule& s) {
  HostLinks out{std::vector<int32_t>(ctx.links.size(), -1), std::vector<char>(ctx.links.size(), 0)};
  for (size_t r = 0; r < s.hosts.size(); ++r) {
    const Host& h = s.hosts[r];
    out.rank[static_cast<size_t>(ctx.links.id(h.node, h.port))] = static_cast<int32_t>(r);
    const Port& p = ctx.fabric.nodes[h.node].ports[h.port];
    if (p.connected()) {
      const auto down = static_cast<size_t>(ctx.links.id(p.peer_node, p.peer_port));
      out.rank[down] = static_cast<int32_t>(r), out.receive[down] = 1;
    }
  }
  return out;
}

}  // namespace

RunDiagnosis diagnose_run(const EvalContext& ctx, const Schedule& s, std::vector<float> observed, double cap_gbps,
                          size_t at_most, size_t min_transfers) {
  RunDiagnosis d;
  const size_t n = s.hosts.size();
  if (observed.size() != n * n || n == 0) return d;
  std::vector<float>& m = observed;  // from here on: the pairs' packed shares (pack)
  const std::array<uint64_t, kBins> all = to_shares(ctx, s, m, cap_gbps);
  for (uint64_t x : all) d.pairs += x;
  d.median_share = median_of(all);
  // A run slower than plan everywhere (a slower transport than the scan's links, a loaded fabric)
  // has no part to blame for it: judge each link against the run's own median instead.
  if (d.median_share < 0.9 && d.median_share > 0)
    for (float& f : m)
      if (const uint32_t v = word(f); v != kNone)
        put(f, pack(std::min(1.0, share_of(v) / d.median_share), static_cast<uint16_t>(v & 0xffff)));
  // Every pair at 90 % of plan or better (the run's median above it): no link's median is below,
  // so the peeling would name nothing — a passed acceptance at 10 000 hosts skips its pass.
  if (d.median_share >= 0.9 &&
      std::accumulate(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(bin_of(0.9)), uint64_t{0}) == 0)
    return d;
  const HostLinks hosts = host_links(ctx, s);
  const std::vector<int32_t>& host_of = hosts.rank;
  const std::vector<char>& receive = hosts.receive;
  std::vector<char> taken(ctx.links.size(), 0);
  for (size_t round = 0;; ++round) {
    RunSuspect* last = d.suspects.empty() ? nullptr : &d.suspects.back();
    const Pass pass = peel_pass(ctx, s, m, last ? last->link : -1, last ? last->factor : 1);
    if (last) {
      // The suspect found last, now that its transfers were read: confident where it is clearly
      // slow, consistently so, on enough transfers, and its senders' other transfers are not as
      // slow (a host link has no others: its every transfer is its own).
      RunSuspect& x = *last;
      x.slow_share = x.transfers ? static_cast<double>(pass.slow) / static_cast<double>(x.transfers) : 0;
      x.others = median_of(pass.rest);
      const double deficit = std::clamp((1 - x.factor - 0.1) / 0.3, 0.0, 1.0);
      const double enough =
          std::min(1.0, static_cast<double>(x.transfers) / (4.0 * static_cast<double>(min_transfers)));
      const double apart = x.rank >= 0 ? 1.0 : std::clamp((x.others - x.factor) / 0.2, 0.0, 1.0);
      x.confidence = deficit * x.slow_share * enough * apart;
    }
    if (round == at_most) break;
    // Every link's median share at once, bin by bin through the bin-major histogram.
    const size_t nl = ctx.links.size();
    std::vector<double> median(nl, 1);
    std::vector<uint64_t> seen(nl, 0);
    for (size_t b = 0; b < kBins; ++b)
      for (size_t l = 0; l < nl; ++l)
        if (const uint64_t before = seen[l];
            (seen[l] += pass.hist[b * nl + l]) * 2 >= pass.count[l] && before * 2 < pass.count[l])
          median[l] = std::min(1.0, (static_cast<double>(b) + 0.5) / kBins);
    int32_t worst = -1;
    double worst_median = 1;
    for (size_t l = 0; l < nl; ++l) {
      if (taken[l] || pass.count[l] < min_transfers) continue;
      const double med = median[l];
      if (med < worst_median - 1e-12 ||
          (worst >= 0 && med == worst_median && pass.count[l] > pass.count[static_cast<size_t>(worst)]))
        worst = static_cast<int32_t>(l), worst_median = med;
    }
    if (worst < 0 || worst_median > 0.9) break;  // what is left runs at 90 % of plan or better
    const Explanation pick = fewest_parts(pass, median, taken, min_transfers, worst, worst_median);
    worst = pick.link;
    RunSuspect x;
    x.link = worst, x.rank = host_of[static_cast<size_t>(worst)], x.receive = receive[static_cast<size_t>(worst)];
    x.factor = median[static_cast<size_t>(worst)], x.transfers = pass.count[static_cast<size_t>(worst)];
    x.alternative = pick.alternative;
    taken[static_cast<size_t>(worst)] = 1;
    d.suspects.push_back(x);
  }
  std::stable_sort(d.suspects.begin(), d.suspects.end(),
                   [](const RunSuspect& a, const RunSuspect& b) { return a.confidence > b.confidence; });
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
    phases[k].dst[static_cast<size_t>(src)] = dst,
    phases[k].dlid[static_cast<size_t>(src)] = static_cast<uint16_t>(dlid);
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

Confirmation confirmation_schedule(const EvalContext& ctx, const Schedule& plan, const std::vector<int32_t>& links,
                                   size_t per_link) {
  Confirmation c;
  c.links = links;
  c.over.resize(links.size()), c.controls.resize(links.size());
  const size_t n = plan.hosts.size();
  std::vector<std::array<int32_t, 3>> chosen;
  std::vector<char> used(n * n, 0);
  PathFinder finder(ctx.fabric, ctx.links);
  std::vector<int32_t> path;
  auto take_over = [&](size_t i, int32_t dst, uint16_t dlid, std::vector<std::pair<int32_t, int32_t>>& into) {
    const size_t at = i * n + static_cast<size_t>(dst);
    if (used[at]) return;
    used[at] = 1;
    into.emplace_back(static_cast<int32_t>(i), dst);
    chosen.push_back({static_cast<int32_t>(i), dst, dlid});
  };
  auto take = [&](size_t i, const Phase& ph, std::vector<std::pair<int32_t, int32_t>>& into) {
    take_over(i, ph.dst[i], ph.dlid[i], into);
  };
  auto crosses = [&](size_t i, uint16_t dlid, int32_t link) {
    return finder.path(plan.hosts[i].node, plan.hosts[i].port, dlid, path) == RouteStatus::ok &&
           std::find(path.begin(), path.end(), link) != path.end();
  };
  auto others_crossed = [&](size_t s) {  // of the last path walked
    return std::any_of(path.begin(), path.end(), [&](int32_t l) {
      return l != links[s] && std::find(links.begin(), links.end(), l) != links.end();
    });
  };
  for (size_t s = 0; s < links.size(); ++s) {
    std::vector<char> sender(n, 0), receiver(n, 0);
    // Its transfers, each over a DLID of its destination that crosses it and no other suspect
    // where one does (a host and the one port all its planned transfers cross are told apart so);
    // then, to fill up, the plan's own transfers over it.
    size_t budget = 1u << 18;  // transfers looked at for DLIDs apart (10 000 hosts have 10^8)
    for (const bool apart : {true, false})
      for (const Phase& ph : plan.phases)
        for (size_t i = 0; i < ph.dst.size() && c.over[s].size() < per_link && (!apart || budget > 0); ++i) {
          if (ph.dst[i] < 0) continue;
          budget -= apart;
          const Port& to = ctx.fabric.nodes[plan.hosts[static_cast<size_t>(ph.dst[i])].node]
                               .ports[plan.hosts[static_cast<size_t>(ph.dst[i])].port];
          const uint16_t lids = static_cast<uint16_t>(apart && to.owns_lid(ph.dlid[i]) ? to.lid_count() : 1);
          for (uint16_t k = 0; k < lids; ++k) {
            const uint16_t dlid =
                apart ? static_cast<uint16_t>(to.base_lid + (ph.dlid[i] - to.base_lid + k) % lids) : ph.dlid[i];
            if (!crosses(i, dlid, links[s]) || (apart && others_crossed(s))) continue;
            take_over(i, ph.dst[i], dlid, c.over[s]), sender[i] = 1, receiver[static_cast<size_t>(ph.dst[i])] = 1;
            break;
          }
        }
    // The controls: transfers of the same senders, or to the same receivers (a host's own link
    // carries all of its sends), that avoid every suspect.
    for (const Phase& ph : plan.phases)
      for (size_t i = 0; i < ph.dst.size() && c.controls[s].size() < c.over[s].size(); ++i)
        if (ph.dst[i] >= 0 && (sender[i] || receiver[static_cast<size_t>(ph.dst[i])]) &&
            finder.path(plan.hosts[i].node, plan.hosts[i].port, ph.dlid[i], path) == RouteStatus::ok &&
            std::none_of(path.begin(), path.end(),
                         [&](int32_t l) { return std::find(links.begin(), links.end(), l) != links.end(); }))
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

std::vector<Verdict> judge_confirmation(const EvalContext& ctx, const Confirmation& c,
                                        const std::vector<float>& observed) {
  const size_t n = c.schedule.hosts.size();
  const std::vector<float> planned = planned_pair_gbps(ctx, c.schedule);
  auto shares = [&](const std::vector<std::pair<int32_t, int32_t>>& pairs) {
    std::vector<double> v;
    for (auto [s, d] : pairs) {
      const size_t at = static_cast<size_t>(s) * n + static_cast<size_t>(d);
      if (observed.size() == n * n && planned[at] > 0 && observed[at] >= 0)
        v.push_back(std::min(1.0, static_cast<double>(observed[at] / planned[at])));
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
