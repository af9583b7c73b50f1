// compute_tree_tables: routing's tables in a rank order, both constructions where asked, measured.
#include "tree_tables.hpp"

#include <algorithm>
#include <map>

#include "ibroute/schedule/hosts.hpp"
#include "plan_pipeline.hpp"
#include "stopwatch.hpp"

namespace ibroute::workflow {

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

std::vector<CaPort> port_refs(const std::vector<Host>& hosts) {
  std::vector<CaPort> out;
  out.reserve(hosts.size());
  for (const Host& h : hosts) out.push_back({h.node, h.port});
  return out;
}

std::vector<Host> reorder(const std::vector<Host>& hosts, const std::vector<CaPort>& order) {
  std::map<std::pair<int32_t, uint8_t>, const Host*> by_port;
  for (const Host& h : hosts) by_port[{h.node, h.port}] = &h;
  std::vector<Host> out;
  for (CaPort p : order) out.push_back(*by_port.at({p.node, p.port}));
  return out;
}

// `out.routing` written into `routed` and measured: round-robin over it, the least times.
void measure(const FabricContext& c, Fabric& routed, const std::vector<Host>& hosts, TreeTables& out) {
  apply_tree_routing(routed, out.routing);
  const LinkIndex links(routed);
  const EvalContext eval(routed, links, c.structure);
  RoundRobin rr = measure_round_robin(eval, {.hosts = hosts});
  out.load = std::move(rr.load), out.least = rr.figures.least, out.efficiency = rr.figures.efficiency;
  const bool several = std::any_of(hosts.begin(), hosts.end(),
                                   [&](const Host& h) { return routed.nodes[h.node].ports[h.port].lid_count() > 1; });
  out.base_least = several ? least_time(eval, hosts, {}, {}, true, 1).time : out.least.tables.time;
}

TreeTables route_one(const FabricContext& c, Fabric& routed, const std::vector<Host>& hosts, const TreeTablesRequest& r,
                     TreeStyle style) {
  TreeTables out;
  out.hosts = hosts;
  out.style = style;
  out.routing = route_tree(c.fabric, c.structure, port_refs(hosts), style);
  if (r.refine)
    out.refine = refine_for_shift(c.fabric, c.structure, port_refs(hosts), out.routing,
                                  {.work = static_cast<uint64_t>(r.refine_work * 1e6)});
  measure(c, routed, hosts, out);
  return out;
}

// Both constructions where the style is auto: the hubs' (congestion-free shifts on k-ary trees)
// and the spread one (even link totals where edges are cabled to several directors).
TreeTables route_in_order(const FabricContext& c, Fabric& routed, const std::vector<Host>& hosts,
                          const TreeTablesRequest& r) {
  if (r.style != "auto")
    return route_one(c, routed, hosts, r, r.style == "spread" ? TreeStyle::spread : TreeStyle::hubs);
  TreeTables best = route_one(c, routed, hosts, r, TreeStyle::hubs);
  Fabric again = c.fabric;
  TreeTables other = route_one(c, again, hosts, r, TreeStyle::spread);
  if (other.better_than(best)) std::swap(best, other), std::swap(routed, again);
  // At LMC > 0 where the spread construction is kept: its base LIDs and the hubs' LIDs after them.
  // The plan has the paths of both and never plans longer than at LMC 0 (loginoff's SX6036s,
  // where the spread base LIDs alone plan 0.952 at LMC 2: 0.984; three directors: 0.980 -> 0.998;
  // the spread's own other LIDs, laid after its balanced base LIDs, planned a 12-edge director at
  // 0.911 against 0.956). Where the hubs are kept, their own LIDs: a port's LIDs start at hubs that
  // differ at every level.
  if (c.fabric.max_lmc() == 0 || best.style != TreeStyle::spread) return best;
  TreeTables merged = std::move(best);
  merged.routing = merge_lids(c.fabric, merged.routing, other.routing);
  merged.other_lids = other.style;
  Fabric fresh = c.fabric;
  measure(c, fresh, hosts, merged);
  routed = std::move(fresh);
  return merged;
}

}  // namespace

bool TreeTables::better_than(const TreeTables& o) const {
  const double a = base_least, b = o.base_least;
  if (a < 0.98 * b || b < 0.98 * a) return a < b;
  return std::pair(load.max_load, load.congested_share()) < std::pair(o.load.max_load, o.load.congested_share());
}

TreeTablesOutcome compute_tree_tables(const FabricContext& c, const TreeTablesRequest& req) {
  // plan's and accept's words for the same orders
  const std::string order = req.order == "name" ? "given" : req.order == "topology" ? "tree" : req.order;
  TreeTablesOutcome r{{}, c.fabric, order, 0, {}, std::nullopt, std::nullopt};
  const std::vector<Host> given = select_hosts(c.fabric, req.hosts);
  Stopwatch clock;
  const std::vector<Host> tree = reorder(given, tree_order(c.fabric, c.structure, port_refs(given)));
  if (order == "given" || (order == "auto" && !req.hosts.empty())) {
    r.best = route_in_order(c, r.fabric, given, req);
    r.order = "given";
    if (order == "auto" && r.best.load.max_load > c.structure.transfer_bound) {
      Fabric again = c.fabric;
      TreeTables t = route_in_order(c, again, tree, req);
      if (t.load.max_load < r.best.load.max_load) r.best = std::move(t), r.fabric = std::move(again), r.order = "tree";
    }
  } else {
    r.best = route_in_order(c, r.fabric, tree, req);
    r.order = "tree";
  }
  r.seconds = clock.seconds();
  r.check = check_tree_routing(r.fabric, c.structure);
  if (c.fabric.has_lfts) r.before = measure_round_robin(c.eval, {.hosts = r.best.hosts});
  if (req.plan) {
    // The plan pipeline as `ibroute plan` runs it, without the figures routing does not print.
    const LinkIndex links(r.fabric);
    const EvalContext eval(r.fabric, links, c.structure);
    r.planned =
        plan_exchange(eval, {.hosts = r.best.hosts}, {.fair_share = false, .baseline = false, .lower_bound = false})
            .load;
  }
  return r;
}

}  // namespace ibroute::workflow
