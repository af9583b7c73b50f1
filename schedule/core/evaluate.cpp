#include "ibroute/schedule/evaluate.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <thread>

#include "ibroute/fabric/parallel.hpp"
#include "option_table.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

EvalContext::EvalContext(const Fabric& f, const LinkIndex& l, const FabricStructure& s)
    : fabric(f), links(l), structure(s) {
  capacity.resize(l.size());
  gbps.resize(l.size());
  between_switches.resize(l.size());
  at_host_rate.resize(l.size());
  const double host = s.host_gbps > 0 ? s.host_gbps : 1;
  for (size_t i = 0; i < l.size(); ++i) {
    gbps[i] = l.gbps(static_cast<int32_t>(i));
    capacity[i] = link_capacity(s, gbps[i]);
    const Node& n = f.nodes[l.node(static_cast<int32_t>(i))];
    const Port& p = n.ports[l.port(static_cast<int32_t>(i))];
    between_switches[i] = n.is_switch() && p.connected() && f.nodes[p.peer_node].is_switch();
    at_host_rate[i] = gbps[i] == host;
  }
}

const SwitchPaths* EvalContext::switch_paths() const {
  if (walk_only) return nullptr;
  std::call_once(paths_once_, [this] {
    std::vector<int32_t> ingress;
    std::vector<char> seen(fabric.nodes.size(), 0);
    size_t lids = 1;
    for (const Node& n : fabric.nodes) lids = std::max(lids, n.lft.size());
    for (const Node& n : fabric.nodes) {
      if (n.is_switch()) continue;
      for (size_t p = 1; p < n.ports.size(); ++p)
        if (n.ports[p].connected() && fabric.nodes[n.ports[p].peer_node].is_switch() && !seen[n.ports[p].peer_node])
          seen[n.ports[p].peer_node] = 1, ingress.push_back(n.ports[p].peer_node);
    }
    if (!ingress.empty() && SwitchPaths::may_fit(ingress.size(), lids)) {
      auto table =
          std::make_unique<SwitchPaths>(fabric, links, ingress, std::max(1u, std::thread::hardware_concurrency()));
      if (table->bytes()) paths_ = std::move(table);
    }
  });
  return paths_.get();
}

void EvalContext::drop_option_table() const {
  const std::lock_guard<std::mutex> lock(options_mutex_);
  options_.reset();
  options_hosts_.clear();
}

std::shared_ptr<const OptionTable> option_table_of(const EvalContext& ctx, const std::vector<Host>& hosts,
                                                   unsigned threads) {
  const std::lock_guard<std::mutex> lock(ctx.options_mutex_);
  if (!ctx.options_ || ctx.options_hosts_ != hosts) {
    ctx.options_.reset();  // the old one freed before the new one is built
    ctx.options_ = std::make_shared<const OptionTable>(ctx, hosts, threads);
    ctx.options_hosts_ = hosts;
  }
  return ctx.options_;
}

namespace {

// A rank's way into the table: its ingress switch when the table has it and its port works
// (else -1: walked), and its own LIDs (a transfer to itself crosses no link). Gathered once per
// evaluation, so that the phase loop reads one small array instead of the fabric's nodes.
struct Source {
  int32_t sw = -1, link = -1;
  uint16_t base = 0, count = 0;
};

std::vector<Source> sources_of(const EvalContext& ctx, const SwitchPaths* table, const std::vector<Host>& hosts) {
  std::vector<Source> out(table ? hosts.size() : 0);
  for (size_t i = 0; i < out.size(); ++i) {
    const Port& p = ctx.fabric.nodes[hosts[i].node].ports[hosts[i].port];
    if (!p.connected() || !table->has(p.peer_node) || !port_usable(p)) continue;
    out[i] = {p.peer_node, ctx.links.id(hosts[i].node, hosts[i].port), p.base_lid,
              static_cast<uint16_t>(p.lid_count())};
  }
  return out;
}

// The path of a transfer as PathFinder::path gives it, appended to `out`: the switch part from
// the table when it has the ingress switch (else walked into `scratch`).
RouteStatus transfer_path(const SwitchPaths* table, const std::vector<Source>& sources, PathFinder& finder,
                          const Host& h, size_t rank, uint16_t dlid, std::vector<int32_t>& scratch,
                          std::vector<int32_t>& out) {
  if (!table || sources[rank].sw < 0 ||
      (dlid >= sources[rank].base && dlid - sources[rank].base < sources[rank].count)) {
    const RouteStatus s = finder.path(h.node, h.port, dlid, scratch);
    out.insert(out.end(), scratch.begin(), scratch.end());
    return s;
  }
  out.push_back(sources[rank].link);
  return table->append(sources[rank].sw, dlid, out);
}

// How many transfers ahead the table is prefetched: enough to cover a memory access (8 to 32
// measured alike on the 10 000-host all-to-all; 1 and 64 slower).
constexpr size_t kPrefetchAhead = 8;

// Threads for an evaluation of `phases` phases: every core, at least 8 phases each, at most 16.
unsigned phase_threads(size_t phases) {
  return static_cast<unsigned>(
      std::max<size_t>(1, std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 16, phases / 8 + 1})));
}

// Links above capacity kept per phase: enough to name them, few enough that an all-to-all of
// thousands of phases does not keep millions.
constexpr size_t kOverPerPhase = 16;

// What one phase contributes; phases are evaluated on all cores and merged in phase order, so
// the report is the same for any number of threads.
struct PhaseResult {
  int worst = 0;
  double time = 0;             // message-times at the host link rate
  std::vector<OverLink> over;  // its first kOverPerPhase links above capacity, and its worst one last
  double sum_rate = 0, min_rate = std::numeric_limits<double>::infinity();
  size_t rated = 0;
};

// Per thread: commutative tallies (sums and maxima) and the scratch space of the path walks.
struct Worker {
  std::vector<uint32_t> link_total;
  std::vector<int> link_worst, load;
  std::vector<size_t> histogram;  // by load
  size_t transfers = 0, broken = 0, unknown = 0, congested = 0, over_count = 0, load_samples = 0;
  double load_sum = 0;
  std::vector<int32_t> used, flat, path;
  std::vector<uint32_t> begin;
  std::vector<std::vector<int32_t>> flows;  // the fair share's, kept from phase to phase (no allocation per transfer)
  MaxMinFill fill;
  explicit Worker(const EvalContext& ctx)
      : link_total(ctx.links.size(), 0), link_worst(ctx.links.size(), 0), load(ctx.links.size(), 0), fill(ctx.gbps) {}
};

void evaluate_phase(const EvalContext& ctx, const SwitchPaths* table, const std::vector<Source>& sources,
                    const std::vector<Host>& hosts, const Phase& ph, int k, bool fair_share, PathFinder& finder,
                    Worker& w, PhaseResult& out) {
  w.flat.clear();
  w.begin.assign(1, 0);
  for (size_t i = 0; i < ph.dst.size(); ++i) {
    if (table && i + kPrefetchAhead < ph.dst.size()) {
      const size_t j = i + kPrefetchAhead;
      if (ph.dst[j] >= 0 && sources[j].sw >= 0) table->prefetch(sources[j].sw, ph.dlid[j]);
    }
    if (ph.dst[i] < 0) continue;
    ++w.transfers;
    const size_t at = w.flat.size();  // the path goes straight to the phase's list
    if (const RouteStatus st = transfer_path(table, sources, finder, hosts[i], i, ph.dlid[i], w.path, w.flat);
        st != RouteStatus::ok) {
      // A lost transfer still loads the links up to where its route ends (once each, a loop
      // included); it delivers nothing, so it is no flow and no congested transfer.
      ++w.broken;
      w.unknown += st == RouteStatus::unknown;
      const int32_t* p = w.flat.data() + at;
      for (size_t x = 0; x < w.flat.size() - at; ++x)
        if (std::find(p, p + x, p[x]) == p + x && w.load[p[x]]++ == 0) w.used.push_back(p[x]);
      w.flat.resize(at);
      continue;
    }
    for (size_t x = at; x < w.flat.size(); ++x)
      if (w.load[w.flat[x]]++ == 0) w.used.push_back(w.flat[x]);
    w.begin.push_back(static_cast<uint32_t>(w.flat.size()));
  }
  OverLink worst_over{-1, k, 0, 0};
  // The phase lasts as long as its most loaded link needs, relative to the host link rate (a
  // division only for links of another rate: the same figure, a tenth of the pass's cost).
  const double host = ctx.structure.host_gbps > 0 ? ctx.structure.host_gbps : 1;
  int plain = 0;
  for (int32_t l : w.used) {
    const int load = w.load[l];
    if (ctx.at_host_rate[l])
      plain = std::max(plain, load);
    else
      out.time = std::max(out.time, load * host / std::max(ctx.gbps[l], 1e-9));
    w.link_total[l] += load;
    w.link_worst[l] = std::max(w.link_worst[l], load);
    if (ctx.switch_link(l)) {
      out.worst = std::max(out.worst, load);
      if (w.histogram.size() <= static_cast<size_t>(load)) w.histogram.resize(load + 1, 0);
      ++w.histogram[load];
      w.load_sum += load;
      ++w.load_samples;
    }
    if (load > ctx.capacity[l]) {
      ++w.over_count;
      OverLink o{l, k, load, ctx.capacity[l]};
      if (out.over.size() < kOverPerPhase) out.over.push_back(o);
      if (worst_over.link < 0 || o.load - o.capacity > worst_over.load - worst_over.capacity) worst_over = o;
    }
  }
  if (worst_over.link >= 0 && out.over.size() == kOverPerPhase) out.over.push_back(worst_over);
  out.time = std::max(out.time, static_cast<double>(plain));
  if (!w.used.empty()) out.time = std::max(out.time, 1.0);
  for (size_t t = 0; t + 1 < w.begin.size(); ++t) {
    bool hot = false;
    for (uint32_t x = w.begin[t]; x < w.begin[t + 1] && !hot; ++x) hot = w.load[w.flat[x]] > ctx.capacity[w.flat[x]];
    w.congested += hot;
  }
  if (fair_share) {
    size_t count = 0;
    for (size_t t = 0; t + 1 < w.begin.size(); ++t)
      if (w.begin[t + 1] > w.begin[t]) {
        if (w.flows.size() <= count) w.flows.emplace_back();
        w.flows[count++].assign(w.flat.begin() + w.begin[t], w.flat.begin() + w.begin[t + 1]);
      }
    for (double x : w.fill.rates(w.flows, count)) {
      out.sum_rate += x;
      out.min_rate = std::min(out.min_rate, x);
      ++out.rated;
    }
  }
  for (int32_t l : w.used) w.load[l] = 0;
  w.used.clear();
}

}  // namespace

LoadReport evaluate(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<Phase>& phases,
                    bool fair_share, const ProgressFn& progress) {
  LoadReport r;
  r.fair_share = fair_share;
  r.phases = phases.size();
  const size_t nl = ctx.links.size();
  // Max-min fair sharing costs far more than the loads: on many phases it is estimated from an
  // evenly spaced sample of them (the loads are always counted on every phase).
  const size_t widest = std::max<size_t>(1, hosts.size());  // a phase's transfers, at most
  const size_t sampled = std::clamp<size_t>(kFairShareFlows / widest, 8, kFairSharePhases);
  const size_t stride = std::max<size_t>(1, (phases.size() + sampled - 1) / sampled);
  std::vector<PhaseResult> results(phases.size());
  // The table pays off when phases repeat (ingress switch, DLID) pairs: an all-to-all, not a sample.
  const SwitchPaths* table = phases.size() >= 64 ? ctx.switch_paths() : nullptr;
  const std::vector<Source> sources = sources_of(ctx, table, hosts);
  const unsigned threads = phase_threads(phases.size());
  std::vector<Worker> workers;
  workers.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) workers.emplace_back(ctx);
  std::atomic<size_t> next{0};
  auto work = [&](Worker& w) {
    PathFinder finder(ctx.fabric, ctx.links);
    for (size_t k; (k = next.fetch_add(1)) < phases.size();) {
      if (&w == &workers[0] && progress)
        report_or_stop(next, phases.size(), [&] { progress("evaluate", k, phases.size()); });  // the calling thread
      evaluate_phase(ctx, table, sources, hosts, phases[k], static_cast<int>(k), fair_share && k % stride == 0, finder,
                     w, results[k]);
    }
  };
  // Said once before the threads start: a phase at a time goes to whichever thread is free, and
  // under load the other may take them all before the reporting one takes any.
  if (progress) progress("evaluate", 0, phases.size());
  run_parallel(threads, [&](unsigned t) { work(workers[t]); });

  r.link_total.assign(nl, 0);
  r.link_worst.assign(nl, 0);
  size_t load_samples = 0;
  double load_sum = 0;
  for (const Worker& w : workers) {
    for (size_t l = 0; l < nl; ++l)
      r.link_total[l] += w.link_total[l], r.link_worst[l] = std::max(r.link_worst[l], w.link_worst[l]);
    for (size_t k = 0; k < w.histogram.size(); ++k)
      if (w.histogram[k]) r.histogram[static_cast<int>(k)] += w.histogram[k];
    r.transfers += w.transfers, r.broken += w.broken, r.unknown += w.unknown, r.congested += w.congested,
        r.over_count += w.over_count;
    load_samples += w.load_samples, load_sum += w.load_sum;
  }
  double sum_rate = 0, min_rate = std::numeric_limits<double>::infinity();
  size_t rated = 0;
  for (const PhaseResult& p : results) {
    r.phase_max.push_back(p.worst);
    r.phase_time.push_back(p.time);
    r.max_load = std::max(r.max_load, p.worst);
    for (const OverLink& o : p.over) {
      if (r.over.size() < LoadReport::kMaxOver)
        r.over.push_back(o);
      else if (o.load - o.capacity > r.over.back().load - r.over.back().capacity)
        r.over.back() = o;
    }
    sum_rate += p.sum_rate, min_rate = std::min(min_rate, p.min_rate), rated += p.rated;
  }
  r.mean_load = load_samples ? load_sum / load_samples : 0;
  if (rated) {
    r.mean_gbps = sum_rate / rated;
    r.min_gbps = min_rate;
  }
  return r;
}

LongerThan takes_longer_than(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<Phase>& phases,
                             double limit) {
  std::vector<char> busy(phases.size(), 0);
  size_t pending = 0;  // phases with a transfer not yet evaluated: each takes at least one message-time
  for (size_t k = 0; k < phases.size(); ++k) {
    busy[k] = std::any_of(phases[k].dst.begin(), phases[k].dst.end(), [](int32_t d) { return d >= 0; });
    pending += busy[k];
  }
  LongerThan out;
  if (static_cast<double>(pending) > limit) return {true, 0};
  const SwitchPaths* table = phases.size() >= 64 ? ctx.switch_paths() : nullptr;
  const std::vector<Source> sources = sources_of(ctx, table, hosts);
  const unsigned threads = phase_threads(phases.size());
  std::mutex m;
  double spent = 0;  // message-times of the phases evaluated
  std::atomic<bool> stop{false};
  std::atomic<size_t> next{0};
  run_parallel(threads, [&](unsigned) {
    Worker w(ctx);
    PathFinder finder(ctx.fabric, ctx.links);
    for (size_t k; !stop.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < phases.size();) {
      PhaseResult r;
      evaluate_phase(ctx, table, sources, hosts, phases[k], static_cast<int>(k), false, finder, w, r);
      std::lock_guard lock(m);
      spent += r.time > 0 ? phase_slot_count(r.time) : 0;
      pending -= busy[k];
      out.worst = std::max(out.worst, r.worst);
      if (w.broken || spent + static_cast<double>(pending) > limit) out.longer = true, stop = true;
    }
  });
  return out;
}

double all_to_all_bound_gbps(const EvalContext& ctx, const std::vector<Host>& hosts) {
  // Per leaf: its hosts' traffic that leaves the leaf must fit its up-links; a host gets at most
  // its link rate. Averaged over hosts: what the mean per-node rate of all-to-all can reach.
  const Fabric& f = ctx.fabric;
  const size_t n = hosts.size();
  const double host = ctx.structure.host_gbps;
  if (n < 2) return host;
  std::map<int32_t, int> per_leaf;
  for (const Host& h : hosts) {
    const Port& p = f.nodes[h.node].ports[h.port];
    if (p.connected()) ++per_leaf[p.peer_node];
  }
  double sum = 0;
  for (auto& [leaf, count] : per_leaf) {
    double up = 0;
    const Node& node = f.nodes[leaf];
    for (int p = 1; p <= node.num_ports(); ++p) {
      const Port& port = node.ports[p];
      if (port_usable(port) && f.nodes[port.peer_node].is_switch()) up += ctx.links.gbps(ctx.links.id(leaf, p));
    }
    double leaving = count * double(n - count) / double(n - 1);  // transfers per phase leaving the leaf
    double rate = leaving > 0 ? std::min(host, up / leaving) : host;
    sum += count * rate;
  }
  return sum / n;
}

}  // namespace ibroute::schedule
