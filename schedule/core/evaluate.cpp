#include "ibroute/schedule/evaluate.hpp"

#include <algorithm>
#include <limits>

namespace ibroute::schedule {

using namespace ibroute::fabric;

EvalContext::EvalContext(const Fabric& f, const LinkIndex& l, const FabricStructure& s) : fabric(f), links(l), structure(s) {
  capacity.resize(l.size());
  gbps.resize(l.size());
  between_switches.resize(l.size());
  for (size_t i = 0; i < l.size(); ++i) {
    gbps[i] = l.gbps(static_cast<int32_t>(i));
    capacity[i] = link_capacity(s, gbps[i]);
    const Node& n = f.nodes[l.node(static_cast<int32_t>(i))];
    const Port& p = n.ports[l.port(static_cast<int32_t>(i))];
    between_switches[i] = n.is_switch() && p.connected() && f.nodes[p.peer_node].is_switch();
  }
}

LoadReport evaluate(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<Phase>& phases,
                    bool fair_share) {
  LoadReport r;
  r.fair_share = fair_share;
  r.phases = phases.size();
  const size_t nl = ctx.links.size();
  r.link_total.assign(nl, 0);
  r.link_worst.assign(nl, 0);
  PathFinder finder(ctx.fabric, ctx.links);
  std::vector<int> load(nl, 0);
  std::vector<int32_t> used;
  // This phase's paths, flat: transfer t's links are flat[begin[t] .. begin[t+1]).
  std::vector<int32_t> flat, path;
  std::vector<uint32_t> begin;
  std::vector<std::vector<int32_t>> flows;
  double sum_rate = 0, min_rate = std::numeric_limits<double>::infinity();
  size_t rated = 0, load_samples = 0;
  double load_sum = 0;
  for (size_t k = 0; k < phases.size(); ++k) {
    const Phase& ph = phases[k];
    flat.clear();
    begin.assign(1, 0);
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      ++r.transfers;
      if (finder.path(hosts[i].node, hosts[i].port, ph.dlid[i], path) != RouteStatus::ok) {
        ++r.broken;
        continue;
      }
      for (int32_t l : path)
        if (load[l]++ == 0) used.push_back(l);
      flat.insert(flat.end(), path.begin(), path.end());
      begin.push_back(static_cast<uint32_t>(flat.size()));
    }
    int worst = 0;
    for (int32_t l : used) {
      r.link_total[l] += load[l];
      r.link_worst[l] = std::max(r.link_worst[l], load[l]);
      if (ctx.switch_link(l)) {
        worst = std::max(worst, load[l]);
        ++r.histogram[load[l]];
        load_sum += load[l];
        ++load_samples;
      }
      if (load[l] > ctx.capacity[l]) {
        ++r.over_count;
        OverLink o{l, static_cast<int>(k), load[l], ctx.capacity[l]};
        if (r.over.size() < LoadReport::kMaxOver) r.over.push_back(o);
        else if (o.load - o.capacity > r.over.back().load - r.over.back().capacity) r.over.back() = o;
      }
    }
    r.phase_max.push_back(worst);
    r.max_load = std::max(r.max_load, worst);
    for (size_t t = 0; t + 1 < begin.size(); ++t) {
      bool hot = false;
      for (uint32_t x = begin[t]; x < begin[t + 1]; ++x) hot |= load[flat[x]] > ctx.capacity[flat[x]];
      r.congested += hot;
    }
    if (fair_share) {
      flows.clear();
      for (size_t t = 0; t + 1 < begin.size(); ++t)
        if (begin[t + 1] > begin[t]) flows.emplace_back(flat.begin() + begin[t], flat.begin() + begin[t + 1]);
      for (double x : max_min_rates(flows, ctx.gbps)) {
        sum_rate += x;
        min_rate = std::min(min_rate, x);
        ++rated;
      }
    }
    for (int32_t l : used) load[l] = 0;
    used.clear();
  }
  r.mean_load = load_samples ? load_sum / load_samples : 0;
  if (rated) {
    r.mean_gbps = sum_rate / rated;
    r.min_gbps = min_rate;
  }
  return r;
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
