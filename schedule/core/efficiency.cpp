#include "ibroute/schedule/efficiency.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>

#include "ibroute/fabric/parallel.hpp"
#include "ibroute/fabric/printf_text.hpp"
#include "ibroute/schedule/admission.hpp"
#include "level_groups.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

namespace {

// Who takes part: per rank, whether it sends and receives, and how many of each there are.
struct Roles {
  std::vector<char> sends, receives;
  size_t senders = 0, receivers = 0;
};

Roles roles_of(size_t n, const std::vector<int32_t>& senders, const std::vector<int32_t>& receivers) {
  Roles r;
  const bool all = senders.empty() && receivers.empty();
  r.sends.assign(n, all), r.receives.assign(n, all);
  for (int32_t s : senders) r.sends[static_cast<size_t>(s)] = 1;
  for (int32_t d : receivers) r.receives[static_cast<size_t>(d)] = 1;
  r.senders = static_cast<size_t>(std::count(r.sends.begin(), r.sends.end(), 1));
  r.receivers = static_cast<size_t>(std::count(r.receives.begin(), r.receives.end(), 1));
  return r;
}

int32_t ingress_of(const Fabric& f, const Host& h) {
  const Port& p = f.nodes[h.node].ports[h.port];
  return p.connected() && f.nodes[p.peer_node].is_switch() ? p.peer_node : -1;
}

void consider(LeastTime& best, double time, const std::string& why) {
  if (time > best.time + 1e-9) best.time = time, best.limited_by = why;
}

// Every group of switches connected below level L+1 (a leaf at L = 1, a pod or a director's line
// cards above): what its senders push out and its receivers take in, over the links that leave it.
// With `used`, only the links some route uses count (the tables' view: an idle up-link carries nothing).
void cut_bounds(const EvalContext& ctx, const std::vector<Host>& hosts, const Roles& roles, double host_gbps,
                const std::vector<char>* used, LeastTime& best) {
  const Fabric& f = ctx.fabric;
  const auto& level = ctx.structure.level;
  const LevelGroups below = level_groups(ctx);
  for (int top = 1; top < ctx.structure.levels; ++top) {
    auto inside = [&](int32_t node) { return node >= 0 && level[node] >= 1 && level[node] <= top; };
    // Per switch: capacity of its links out of the group and of those into it, in host links. Over
    // the tables the two differ: minhop on three levels leaves a pod 81 used up-links of 144 but
    // only 39 used down-links, and what enters the pod is bound by the 39.
    std::vector<double> up(f.nodes.size(), 0), down(f.nodes.size(), 0);
    for (size_t x = 0; x < f.nodes.size(); ++x) {
      if (!inside(static_cast<int32_t>(x))) continue;
      const Node& sw = f.nodes[x];
      for (int p = 1; p <= sw.num_ports(); ++p) {
        const Port& port = sw.ports[p];
        if (!port_usable(port) || !f.nodes[port.peer_node].is_switch()) continue;
        if (!inside(port.peer_node) && level[port.peer_node] > top) {
          const int32_t l = ctx.links.id(static_cast<int32_t>(x), p),
                        back = ctx.links.id(port.peer_node, port.peer_port);
          if (!used || (*used)[l]) up[x] += ctx.links.gbps(l) / host_gbps;
          if (!used || (*used)[back]) down[x] += ctx.links.gbps(back) / host_gbps;
        }
      }
    }
    std::vector<double> cap_out(f.nodes.size(), 0), cap_in(f.nodes.size(), 0);
    std::vector<size_t> s_in(f.nodes.size(), 0), r_in(f.nodes.size(), 0), switches(f.nodes.size(), 0);
    for (size_t x = 0; x < f.nodes.size(); ++x)
      if (inside(static_cast<int32_t>(x))) {
        const int32_t g = below.of(top, static_cast<int32_t>(x));
        cap_out[g] += up[x], cap_in[g] += down[x], ++switches[g];
      }
    for (size_t i = 0; i < hosts.size(); ++i) {
      int32_t sw = ingress_of(f, hosts[i]);
      if (!inside(sw)) continue;
      int32_t g = below.of(top, sw);
      s_in[g] += roles.sends[i], r_in[g] += roles.receives[i];
    }
    for (size_t g = 0; g < f.nodes.size(); ++g) {
      if (s_in[g] == 0 && r_in[g] == 0) continue;
      const double out = static_cast<double>(s_in[g]) * static_cast<double>(roles.receivers - r_in[g]);
      const double in = static_cast<double>(r_in[g]) * static_cast<double>(roles.senders - s_in[g]);
      const std::string who = switches[g] == 1 ? f.nodes[g].desc
                                               : "the " + std::to_string(switches[g]) + " switches below level " +
                                                     std::to_string(top + 1) + " with " + f.nodes[g].desc;
      // Nothing leaves (enters): the plan's unroutable (broken) transfers say so.
      auto cut = [&](double n, double cap, const char* way, const std::string& links) {
        if (n > 0 && cap > 0)
          consider(best, n / cap,
                   who + ": " + printf_text("%.0f transfers ", n) + way +
                       (used ? " over the " + links + " the routes use, worth " : " over " + links + " worth ") +
                       printf_text("%.4g host links", cap));
      };
      cut(out, cap_out[g], "leave", "up-links");
      cut(in, cap_in[g], "enter", "down-links");
    }
  }
}

// Transfers whose every route passes one switch but leaves (enters) it by one of several links:
// those links carry them all between them. Keyed by (direction, switch, the links sorted), with
// the transfers counted; at a switch, a set's load is its own transfers', those of the sets within
// it and those the tables send over one of its links alone (forced_links' counts), over what the
// set's links carry (issue 53: plafrim's tables at LMC 2 send 2 976 transfers out of one switch
// by two DDR links whatever the DLID, where the cuts and single links gave 2 646).
class LinkSets {
 public:
  void add(const LinkIndex& links, const std::vector<std::vector<int32_t>>& routes, double m) {
    // A route's links leave switch node(l); each but the last enters node(next). Switches on
    // every route, by direction: the links leaving (entering) them.
    const std::vector<int32_t>& first = routes.front();
    for (int dir = 0; dir < 2; ++dir)
      for (size_t x = 0; x + static_cast<size_t>(dir) < first.size(); ++x) {
        const int32_t sw = dir == 0 ? links.node(first[x]) : links.node(first[x + 1]);
        key_.assign({dir, sw});
        bool everywhere = true;
        for (const auto& r : routes) {
          int32_t at = -1;
          for (size_t y = 0; y + static_cast<size_t>(dir) < r.size() && at < 0; ++y)
            if ((dir == 0 ? links.node(r[y]) : links.node(r[y + 1])) == sw) at = r[y];
          if (at < 0) {
            everywhere = false;
            break;
          }
          if (std::find(key_.begin() + 2, key_.end(), at) == key_.end()) key_.push_back(at);
        }
        if (!everywhere || key_.size() < 4) continue;  // one link alone: forced_links counts it
        std::sort(key_.begin() + 2, key_.end());
        load_[key_] += m;
      }
  }
  void merge(const LinkSets& o) {
    for (const auto& [k, m] : o.load_) load_[k] += m;
  }
  // The largest load over capacity of any set, at host link rate.
  void bound(const EvalContext& ctx, const std::vector<double>& forced, double host_gbps, LeastTime& best) const {
    constexpr size_t kMaxSets = 2048;  // per switch and direction: sets within a set counted up to this many
    std::vector<const std::pair<const std::vector<int32_t>, double>*> at;
    for (auto it = load_.begin(); it != load_.end();) {
      at.clear();
      for (auto e = it; e != load_.end() && e->first[0] == it->first[0] && e->first[1] == it->first[1]; ++e)
        at.push_back(&*e);
      it = std::next(it, static_cast<long>(at.size()));
      for (const auto* c : at) {
        const std::vector<int32_t>& k = c->first;
        double demand = 0, cap = 0;
        for (size_t y = 2; y < k.size(); ++y) demand += forced[k[y]], cap += ctx.gbps[k[y]] / host_gbps;
        for (const auto* w : at.size() <= kMaxSets ? at : decltype(at){c})
          if (std::includes(k.begin() + 2, k.end(), w->first.begin() + 2, w->first.end())) demand += w->second;
        if (cap <= 0) continue;
        const int32_t sw = k[1];
        consider(best, demand / cap,
                 ctx.fabric.nodes[sw].desc + printf_text(": %.0f transfers ", demand) +
                     (k[0] == 0 ? "leave it" : "enter it") +
                     printf_text(" by %.0f links (worth %.4g host links) that every route of theirs uses there",
                                 static_cast<double>(k.size() - 2), cap));
      }
    }
  }

 private:
  std::map<std::vector<int32_t>, double> load_;  // ordered: a switch's sets are neighbours
  std::vector<int32_t> key_;
};

// Transfers that every LID of their destination routes over one link: that link carries them all.
// Returns, per link, whether any route among the hosts uses it.
std::vector<char> forced_links(const EvalContext& ctx, const std::vector<Host>& hosts, const Roles& roles,
                               double host_gbps, LeastTime& best, uint32_t max_lids) {
  const Fabric& f = ctx.fabric;
  std::vector<int32_t> group_switch;  // ingress switches, and per switch its senders
  std::vector<size_t> senders_at;
  std::vector<int> group_of(hosts.size(), -1);
  for (size_t i = 0; i < hosts.size(); ++i) {
    int32_t sw = ingress_of(f, hosts[i]);
    if (sw < 0) continue;
    auto it = std::find(group_switch.begin(), group_switch.end(), sw);
    if (it == group_switch.end()) group_switch.push_back(sw), senders_at.push_back(0), it = group_switch.end() - 1;
    group_of[i] = static_cast<int>(it - group_switch.begin());
    senders_at[group_of[i]] += roles.sends[i];
  }
  const unsigned threads = static_cast<unsigned>(
      std::clamp<size_t>(hosts.size() / 256, 1, std::max(1u, std::thread::hardware_concurrency())));
  std::vector<std::vector<double>> counts(threads, std::vector<double>(ctx.links.size(), 0));
  std::vector<std::vector<char>> used(threads, std::vector<char>(ctx.links.size(), 0));
  std::vector<LinkSets> sets(threads);
  const SwitchPaths* paths = ctx.switch_paths_for(hosts.size());  // what from_switch walks, read
  run_parallel(threads, [&](unsigned t) {
    PathFinder finder(f, ctx.links);
    std::vector<int32_t> path, common;
    std::vector<std::vector<int32_t>> routes;
    for (size_t j = hosts.size() * t / threads; j < hosts.size() * (t + 1) / threads; ++j) {
      if (!roles.receives[j]) continue;
      const Port& d = f.nodes[hosts[j].node].ports[hosts[j].port];
      if (d.base_lid == 0) continue;
      for (size_t g = 0; g < group_switch.size(); ++g) {
        size_t m = senders_at[g] - (group_of[j] == static_cast<int>(g) && roles.sends[j] ? 1 : 0);
        if (m == 0) continue;
        common.clear();
        routes.clear();
        bool first = true;
        for (uint32_t o = 0; o < std::min(d.lid_count(), max_lids); ++o) {
          path.clear();
          if (switch_path(paths, finder, group_switch[g], static_cast<uint16_t>(d.base_lid + o), path) !=
              RouteStatus::ok)
            continue;
          for (int32_t l : path) used[t][l] = 1;
          routes.push_back(path);
          if (first)
            common = path, first = false;
          else
            common.erase(
                std::remove_if(common.begin(), common.end(),
                               [&](int32_t l) { return std::find(path.begin(), path.end(), l) == path.end(); }),
                common.end());
        }
        for (int32_t l : common) counts[t][l] += static_cast<double>(m);
        if (routes.size() > 1) sets[t].add(ctx.links, routes, static_cast<double>(m));
      }
    }
  });
  for (size_t t = 1; t < threads; ++t) {
    for (size_t l = 0; l < ctx.links.size(); ++l) used[0][l] |= used[t][l], counts[0][l] += counts[t][l];
    sets[0].merge(sets[t]);
  }
  sets[0].bound(ctx, counts[0], host_gbps, best);
  for (size_t l = 0; l < ctx.links.size(); ++l) {
    const double c = counts[0][l];
    if (c <= 0 || !ctx.switch_link(static_cast<int32_t>(l)) || ctx.gbps[l] <= 0) continue;
    consider(
        best, c * host_gbps / ctx.gbps[l],
        describe_link(f, ctx.links, static_cast<int32_t>(l)) + printf_text(": %.0f transfers have no other path", c));
  }
  return std::move(used[0]);
}

// Each host's own link: what it sends and what it receives, at its own rate.
void host_links(const EvalContext& ctx, const std::vector<Host>& hosts, const Roles& roles, double host_gbps,
                LeastTime& best) {
  for (size_t i = 0; i < hosts.size(); ++i) {
    const double sends = roles.sends[i] ? static_cast<double>(roles.receivers - roles.receives[i]) : 0;
    const double gets = roles.receives[i] ? static_cast<double>(roles.senders - roles.sends[i]) : 0;
    const double gbps = ctx.links.gbps(ctx.links.id(hosts[i].node, hosts[i].port));
    const double t = std::max(sends, gets) * host_gbps / (gbps > 0 ? gbps : host_gbps);
    consider(best, t,
             hosts[i].name + "'s link: " + printf_text("%.0f messages ", std::max(sends, gets)) +
                 (sends >= gets ? "sent" : "received") +
                 (gbps > 0 && gbps < host_gbps ? printf_text(" at %.4g of %.4g Gb/s", gbps, host_gbps) : ""));
  }
}

LeastTimes least_times_of(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<int32_t>& senders,
                          const std::vector<int32_t>& receivers, bool over_tables, uint32_t max_lids = UINT32_MAX) {
  LeastTimes out;
  if (hosts.size() < 2) return out;
  const Roles roles = roles_of(hosts.size(), senders, receivers);
  const double host_gbps = ctx.structure.host_gbps > 0 ? ctx.structure.host_gbps : 1;
  host_links(ctx, hosts, roles, host_gbps, out.fabric);
  out.tables = out.fabric;
  cut_bounds(ctx, hosts, roles, host_gbps, nullptr, out.fabric);
  if (!over_tables) return out;
  const std::vector<char> used = forced_links(ctx, hosts, roles, host_gbps, out.tables, max_lids);
  cut_bounds(ctx, hosts, roles, host_gbps, &used, out.tables);
  // The tables cannot do better than the fabric; where they do no worse, the fabric's reason stands.
  if (out.tables.time <= out.fabric.time + 1e-9) out.tables = out.fabric;
  return out;
}

}  // namespace

LeastTimes least_times(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<int32_t>& senders,
                       const std::vector<int32_t>& receivers) {
  return least_times_of(ctx, hosts, senders, receivers, true);
}

LeastTime least_time(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<int32_t>& senders,
                     const std::vector<int32_t>& receivers, bool over_tables, uint32_t max_lids) {
  LeastTimes t = least_times_of(ctx, hosts, senders, receivers, over_tables, max_lids);
  return over_tables ? t.tables : t.fabric;
}

double planned_time(const LoadReport& load) {
  double t = 0;
  for (double p : load.phase_time) t += p > 0 ? phase_slot_count(p) : 0;
  return t;
}

Efficiency efficiency_of(const EvalContext& ctx, const LeastTimes& least, const LoadReport& load, size_t max_sends,
                         const Schedule* timed) {
  Efficiency e;
  e.least = least.fabric.time;
  e.least_tables = std::max(least.tables.time, least.fabric.time);
  e.limited_by = least.fabric.limited_by;
  e.tables_limited_by = least.tables.time > least.fabric.time ? least.tables.limited_by : least.fabric.limited_by;
  e.planned = planned_time(load);
  e.broken = load.broken;
  // A lost transfer never arrives: the exchange does not complete, whatever its time.
  const bool complete = load.broken == 0 && e.planned > 0;
  e.value = complete ? std::min(1.0, e.least / e.planned) : 0;
  e.value_tables = complete ? std::min(1.0, e.least_tables / e.planned) : 0;
  e.timed = timed && timed->timing.slot_s > 0;
  const double delivered =
      load.transfers ? static_cast<double>(load.transfers - load.broken) / static_cast<double>(load.transfers) : 0;
  e.rate_gbps = delivered * (e.timed         ? planned_rate(*timed) * 8 / 1e9
                             : e.planned > 0 ? static_cast<double>(max_sends) / e.planned * ctx.structure.host_gbps
                                             : 0);
  return e;
}

}  // namespace ibroute::schedule
