#include "accept_checks.hpp"

#include <cmath>
#include <cstdio>

#include "diagnosis_report.hpp"
#include "expectation.hpp"
#include "fabric_context.hpp"
#include "run_report_read.hpp"

namespace ibroute::workflow {

using nlohmann::json;

namespace {
using Value = Checks::Value;
std::string percent(double share) {
  char b[32];
  std::snprintf(b, sizeof b, share < 0.001 && share > 0 ? "%.4f %%" : "%.1f %%", share * 100);
  return b;
}
std::string port_name(const fabric::Fabric& f, int32_t node, int port) {
  return f.nodes[node].desc + "[" + std::to_string(port) + "]";
}
}  // namespace

void Checks::add(const std::string& name, std::optional<bool> ok, json measured, json expected,
                 const std::string& detail, std::optional<Value> value) {
  std::string result = !ok ? "not measured" : *ok ? "pass" : "fail";
  if (ok) (*ok ? passed : failed)++;
  json c{{"check", name}, {"result", result}, {"measured", measured}, {"expected", expected}};
  if (value && std::isfinite(value->v))
    c[value->key] = value->v;
  else if (value)
    c[value->key] = nullptr;  // unbounded
  if (!detail.empty()) c["detail"] = detail;
  list.push_back(c);
}

void check_fabric(const Expectation& e, const fabric::Fabric& f, const fabric::FabricStructure& st,
                  const ScanChanges& changes, Checks& checks) {
  const std::vector<std::string>& gone = changes.hosts_gone;
  if (e.levels) {
    // "two-level", "three-level", "4-level" or a number: the switch levels counted from the hosts up.
    const json& want = e.doc["topology"];
    const int want_levels = *e.levels;
    std::string got = st.levels == 2   ? "two-level"
                      : st.levels == 3 ? "three-level"
                                       : std::to_string(st.levels) + "-level";
    checks.add("topology", st.levels == want_levels && st.tree, got + (st.tree ? "" : ", not a tree"), want,
               fabric::describe_chassis(st) + "; " + std::to_string(st.leaves.size()) + " leaves, " +
                   std::to_string(st.top.size()) + " top switches",
               Value{"value_levels", static_cast<double>(st.levels)});
  }
  if (e.hosts) {
    // The hosts an earlier scan had and this one has not, by name: the ones to go and look at.
    std::string detail;
    for (size_t i = 0; i < gone.size() && i < 10; ++i)
      detail += (i ? ", " : "not in this scan, in the one before: ") + gone[i];
    if (gone.size() > 10) detail += " and " + std::to_string(gone.size() - 10) + " more";
    checks.add("hosts", st.hosts.size() == *e.hosts, st.hosts.size(), *e.hosts, detail,
               Value{"value_count", static_cast<double>(st.hosts.size())});
  }
  if (e.link_width || e.link_speed) {
    size_t narrow = 0, slow = 0, links = 0;
    std::string first_narrow, first_slow;
    for (size_t a = 0; a < f.nodes.size(); ++a)
      for (size_t p = 1; p < f.nodes[a].ports.size(); ++p) {
        const fabric::Port& x = f.nodes[a].ports[p];
        if (!x.connected() || static_cast<size_t>(x.peer_node) < a ||
            (static_cast<size_t>(x.peer_node) == a && x.peer_port < p))
          continue;
        ++links;
        std::string name =
            port_name(f, static_cast<int32_t>(a), static_cast<int>(p)) + " - " + port_name(f, x.peer_node, x.peer_port);
        if (e.link_width && x.width < *e.link_width) {
          if (!narrow++) first_narrow = name + " at " + std::to_string(x.width) + "x";
        }
        if (e.link_speed && x.speed != *e.link_speed) {
          if (!slow++) first_slow = name + " at " + x.speed;
        }
      }
    if (e.link_width)
      checks.add("link_width", narrow == 0, std::to_string(narrow) + " of " + std::to_string(links) + " links narrower",
                 std::to_string(*e.link_width) + "x everywhere", first_narrow,
                 Value{"value_count", static_cast<double>(narrow)});
    if (e.link_speed)
      checks.add("link_speed", slow == 0,
                 std::to_string(slow) + " of " + std::to_string(links) + " links at another speed",
                 *e.link_speed + " everywhere", first_slow, Value{"value_count", static_cast<double>(slow)});
  }
  {
    size_t broken = st.missing.size() + st.inactive.size();
    std::string detail;
    if (!changes.cables_gone.empty()) {
      detail = "down since scan " + std::to_string(changes.previous) + ": " + cable_name(f, changes.cables_gone[0]);
    } else if (!st.missing.empty()) {
      const fabric::LinkRef& m = st.missing[0];
      detail = m.b_node < 0 ? "missing: an up-link of " + f.nodes[m.a_node].desc
               : m.a_port >= 0
                   ? "missing: " + port_name(f, m.a_node, m.a_port) + " to " + f.nodes[m.b_node].desc
                   : "missing: a cable between " + f.nodes[m.a_node].desc + " and " + f.nodes[m.b_node].desc;
    } else if (!st.inactive.empty()) {
      detail = "not active: " + port_name(f, st.inactive[0].a_node, st.inactive[0].a_port);
    }
    const size_t allowed = e.max_broken_links;
    checks.add("broken_links", broken <= allowed, broken, "at most " + std::to_string(allowed),
               detail.empty() ? "" : detail + (broken > 1 ? " and " + std::to_string(broken - 1) + " more" : ""),
               Value{"value_count", static_cast<double>(broken)});
  }
  if (e.lmc)
    checks.add("lmc", f.max_lmc() == *e.lmc, f.max_lmc(), *e.lmc, "",
               Value{"value_lmc", static_cast<double>(f.max_lmc())});
}

void check_routing(const Expectation& e, const fabric::Fabric& f, const fabric::FabricStructure& st, Checks& checks) {
  if (e.max_routing_imbalance) {
    // At every level below the top: host-to-host routes per up-port (walked through the LFTs, not
    // LFT entries: above the leaves only the destinations the level below sends arrive), max/min;
    // an up-link no route uses at all (while its switch routes up) is unbounded imbalance.
    fabric::RoutingBalance b = fabric::routing_balance(f, st);
    double worst = 1;
    std::string where;
    auto consider = [&](const fabric::RoutingBalance::Leaf& l) {
      if (l.route_min > 0 && static_cast<double>(l.route_max) / static_cast<double>(l.route_min) > worst)
        worst = static_cast<double>(l.route_max) / static_cast<double>(l.route_min), where = f.nodes[l.leaf].desc;
    };
    for (const auto& l : b.leaves) consider(l);
    for (const auto& level : b.upper)
      for (const auto& l : level) consider(l);
    if (!b.idle.empty()) {
      worst = INFINITY;
      where = std::to_string(b.idle.size()) + " up-link(s) carry no route, e.g. " +
              port_name(f, b.idle[0].a_node, b.idle[0].a_port) + " - " +
              port_name(f, b.idle[0].b_node, b.idle[0].b_port);
      for (size_t l = 0; l < b.idle_per_level.size(); ++l)
        if (b.idle_per_level[l])
          where += "; level " + std::to_string(l + 1) + ": " + std::to_string(b.idle_per_level[l]);
    }
    checks.add("routing_balance", worst <= *e.max_routing_imbalance,
               std::isinf(worst) ? json("unbounded") : json(worst),
               "max/min host-to-host routes per up-port <= " + e.text("max_routing_imbalance") + " at every level",
               where, Value{"value_ratio", worst});
  }
}

void check_plan(const Expectation& e, const PlanFacts& p, Checks& checks) {
  if (e.congestion_free)
    checks.add("congestion_free", p.phases_over == 0,
               "worst link " + std::to_string(p.max_load) + ", least possible " + std::to_string(p.least_worst) + ", " +
                   std::to_string(p.phases_over) + " of " + std::to_string(p.phases) + " phases over",
               "at most " + std::to_string(p.bound) + " transfers per link direction in every phase", p.why,
               Value{"value_phases_over", static_cast<double>(p.phases_over)});
  if (e.min_efficiency) {
    const double want = *e.min_efficiency;
    const schedule::Efficiency& eff = p.efficiency;
    char got[160];
    std::snprintf(got, sizeof got, "%.3f (least possible time %.0f / planned %.0f message-times)", eff.value, eff.least,
                  eff.planned);
    char need[48];
    std::snprintf(need, sizeof need, "at least %.3f", want);
    checks.add("min_efficiency", eff.value + 1e-9 >= want, got, need, "limited by " + eff.limited_by,
               Value{"value_efficiency", eff.value});
  }
}

void check_delivery(const Expectation& e, const Delivery& d, Checks& checks) {
  if (e.min_rate_per_node) {
    const double want = *e.min_rate_per_node;
    checks.add("rate_per_node", d.node_rate >= want,
               format_rate(d.node_rate) + (d.simulated ? " (simulated)" : " (slowest node)"),
               "at least " + format_rate(want),
               d.node_rate < want && d.plan_over_bound ? "the plan is over the bound, " + d.why : "",
               Value{"value_gbps", d.node_rate * 8 / 1e9});
  }
  if (e.min_sustainable_rate) {
    const double want = *e.min_sustainable_rate;
    checks.add(
        "sustainable_rate", d.sustainable_rate ? std::optional<bool>(*d.sustainable_rate >= want) : std::nullopt,
        d.sustainable_rate ? json(format_rate(*d.sustainable_rate) + " (the highest rate that held)")
                           : json(d.simulated ? "simulated: not measured"
                                              : "not measured: the run was not a rate search (run --find-rate)"),
        "at least " + format_rate(want), "",
        d.sustainable_rate ? std::optional<Value>(Value{"value_gbps", *d.sustainable_rate * 8 / 1e9}) : std::nullopt);
  }
  if (e.max_skipped_share)
    checks.add("skipped_transfers",
               d.skipped_share ? std::optional<bool>(*d.skipped_share <= *e.max_skipped_share) : std::nullopt,
               d.skipped_share ? json(*d.skipped_share) : json("simulated: none"),
               "at most " + e.text("max_skipped_share"), "",
               d.skipped_share ? std::optional<Value>(Value{"value_share", *d.skipped_share}) : std::nullopt);
  if (e.max_clock_uncertainty_us)
    checks.add(
        "clock_sync",
        d.clock_uncertainty_us ? std::optional<bool>(*d.clock_uncertainty_us <= *e.max_clock_uncertainty_us)
                               : std::nullopt,
        d.clock_uncertainty_us ? json(std::to_string(*d.clock_uncertainty_us) + " us") : json("simulated: no clocks"),
        "at most " + e.text("max_clock_uncertainty_us") + " us", "",
        d.clock_uncertainty_us ? std::optional<Value>(Value{"value_us", *d.clock_uncertainty_us}) : std::nullopt);
  if (!d.simulated && d.missing_ranks)
    checks.add("ranks_alive", *d.missing_ranks == 0, *d.missing_ranks, "none missing", "",
               Value{"value_missing", static_cast<double>(*d.missing_ranks)});
}

void check_counters(const Expectation& e, const std::optional<CounterFacts>& c, const std::string& why,
                    Checks& checks) {
  if (!e.max_link_errors) return;
  const uint64_t limit = *e.max_link_errors;
  const std::string expected = "at most " + std::to_string(limit) + " errors per link";
  if (!c) {
    checks.add("link_errors", std::nullopt, "not measured: " + why, expected);
    return;
  }
  const uint64_t worst = c->links.empty() ? 0 : c->links.front().errors;
  std::string detail;
  for (size_t i = 0; i < c->links.size() && i < 5; ++i)
    detail += (i ? "; " : "") + c->links[i].link + ": " + c->links[i].what;
  if (c->links.size() > 5) detail += "; ... " + std::to_string(c->links.size()) + " links in all";
  checks.add("link_errors", worst <= limit,
             std::to_string(c->links.size()) + " link(s) with errors, worst " + std::to_string(worst) + " (" +
                 c->between + ")",
             expected, detail, Value{"value_errors", static_cast<double>(worst)});
}

void check_congestion(const Expectation& e, const std::optional<CongestionFacts>& c, const std::string& why,
                      Checks& checks) {
  if (!e.max_congestion) return;
  const double limit = *e.max_congestion;
  const std::string expected = "PortXmitWait at most " + percent(limit) + " of the run on any link";
  if (!(e.xmit_wait_tick_ns > 0)) {
    checks.add("congestion", std::nullopt,
               "not measured: give xmit_wait_tick_ns (the switches' PortXmitWait tick, device-specific)", expected);
    return;
  }
  if (!c) {
    checks.add("congestion", std::nullopt, "not measured: " + why, expected);
    return;
  }
  const double worst = c->links.empty() ? 0 : c->links.front().second;
  std::string detail;
  for (size_t i = 0; i < c->links.size() && i < 5 && c->links[i].second > limit; ++i)
    detail += (detail.empty() ? "" : "; ") + c->links[i].first + ": " + percent(c->links[i].second);
  checks.add("congestion", worst <= limit, "worst link waited " + percent(worst) + " of the run (" + c->between + ")",
             expected, detail, Value{"value_share", worst});
}

void check_cabling_plan(const Expectation& e, const std::vector<fabric::Cable>& plan, const fabric::Fabric& f,
                        Checks& checks) {
  if (e.cabling.empty()) return;
  const fabric::CablingCheck c = fabric::check_cabling(f, plan);
  auto text = [](const fabric::Cable& k) {
    return k.a.node + "[" + std::to_string(k.a.port) + "] - " + k.b.node + "[" + std::to_string(k.b.port) + "]";
  };
  std::vector<std::string> found;
  for (const auto& [p, q] : c.swapped) found.push_back("swapped: " + text(p) + " and " + text(q));
  for (const auto& [p, q] : c.moved) found.push_back("moved: " + text(p) + " found as " + text(q));
  for (const fabric::Cable& k : c.missing) found.push_back("missing: " + text(k));
  for (const fabric::Cable& k : c.extra) found.push_back("extra: " + text(k));
  for (const std::string& u : fabric::counted_once(c.unresolved)) found.push_back("not in the fabric: " + u);
  std::string detail;
  for (size_t i = 0; i < found.size() && i < 5; ++i) detail += (i ? "; " : "") + found[i];
  if (found.size() > 5)
    detail += "; ... " + std::to_string(found.size()) + " in all (ibroute diff --against " + e.cabling + ")";
  checks.add("cabling", c.ok(),
             std::to_string(c.as_planned) + " of " + std::to_string(c.planned) + " cables as planned",
             "every cable as " + e.cabling + " plans it", detail,
             Value{"value_differences", static_cast<double>(found.size())});
}

void check_faults(const Expectation& e, const json& diagnosis, bool simulated, Checks& checks) {
  const double confidence = e.fault_confidence, share = e.fault_max_share;
  char want[160];
  std::snprintf(want, sizeof want, "no part at confidence %.2f or more whose traffic ran at %s or less of its plan",
                confidence, percent(share).c_str());
  if (simulated) {
    checks.add("faults", std::nullopt,
               "not measured: a simulation gives every pair its planned rate, so it locates no slow part", want);
    return;
  }
  size_t located = 0, measured = 0;
  std::string detail;
  double worst = 1;
  for (const json& s : diagnosis["suspects"]) {
    if (!s.contains("share_of_plan")) continue;
    ++measured;
    const double at = s["share_of_plan"].get<double>();
    if (s["confidence"].get<double>() + 1e-9 < confidence || at > share + 1e-9) continue;
    worst = std::min(worst, at);
    if (located++ < 5)
      detail += (detail.empty() ? "" : "; ") + s["kind"].get<std::string>() + " " + s["where"].get<std::string>() +
                " at " + percent(at);
  }
  if (located > 5) detail += "; ... " + std::to_string(located) + " parts in all";
  checks.add("faults", located == 0,
             located ? std::to_string(located) + " located part(s), the slowest at " + percent(worst) + " of its plan"
                     : "none located (" + std::to_string(measured) +
                           " part(s) measured slow, none at the confidence and share)",
             want, detail, Value{"value_parts", static_cast<double>(located)});
}

}  // namespace ibroute::workflow
