#include "ibroute/schedule/evaluate.hpp"

#include <algorithm>
#include <limits>

namespace ibroute::schedule {

using namespace ibroute::fabric;

EvalContext::EvalContext(const Fabric& f, const LinkIndex& l, const FabricStructure& s) : fabric(f), links(l), structure(s) {
  capacity.resize(l.size());
  gbps.resize(l.size());
  for (size_t i = 0; i < l.size(); ++i) {
    gbps[i] = l.gbps(static_cast<int32_t>(i));
    capacity[i] = link_capacity(s, gbps[i]);
  }
}

bool EvalContext::switch_link(int32_t link) const {
  const Node& n = fabric.nodes[links.node(link)];
  const Port& p = n.ports[links.port(link)];
  return n.is_switch() && p.connected() && fabric.nodes[p.peer_node].is_switch();
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
  std::vector<std::vector<int32_t>> paths;
  std::vector<int32_t> path;
  double sum_rate = 0, min_rate = std::numeric_limits<double>::infinity();
  size_t rated = 0, load_samples = 0;
  double load_sum = 0;
  for (size_t k = 0; k < phases.size(); ++k) {
    const Phase& ph = phases[k];
    paths.assign(ph.dst.size(), {});
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      ++r.transfers;
      if (finder.path(hosts[i].node, hosts[i].port, ph.dlid[i], path) != RouteStatus::ok) {
        ++r.broken;
        continue;
      }
      for (int32_t l : path)
        if (load[l]++ == 0) used.push_back(l);
      paths[i] = path;
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
      if (load[l] > ctx.capacity[l]) r.over.push_back({l, static_cast<int>(k), load[l], ctx.capacity[l]});
    }
    r.phase_max.push_back(worst);
    r.max_load = std::max(r.max_load, worst);
    for (size_t i = 0; i < paths.size(); ++i) {
      bool hot = false;
      for (int32_t l : paths[i]) hot |= load[l] > ctx.capacity[l];
      r.congested += hot;
    }
    if (fair_share) {
      std::vector<std::vector<int32_t>> flows;
      for (auto& p : paths)
        if (!p.empty()) flows.push_back(p);
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
