// ibroute analyze: the fabric's structure, its routing balance, and the link load of traffic
// patterns (round-robin all-to-all in name and in topology order, random permutations, random
// bisections), each with the base LID or an LMC policy, and the least worst load any choice of
// DLIDs could give the pattern.
#include <algorithm>
#include <climits>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "fabric_analysis.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/machines.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/lower_bound.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "options.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

// The analysis' request with what the command adds.
struct AnalyzeOptions : AnalysisRequest, StoreOptions {};

nlohmann::json link_ref(const Fabric& f, const LinkRef& l) {
  nlohmann::json j{{"a", f.nodes[l.a_node].desc},
                   {"b", l.b_node >= 0 ? nlohmann::json(f.nodes[l.b_node].desc) : nlohmann::json()}};
  if (l.a_port >= 0) j["a_port"] = l.a_port, j["b_port"] = l.b_port;
  return j;
}

std::pair<int, int> minmax_of(const std::vector<int>& v) {
  return v.empty() ? std::pair{0, 0}
                   : std::pair{*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

std::string pattern_title(const std::string& p) {
  if (p == "rr-name") return "round-robin, name order";
  if (p == "rr-topo") return "round-robin, topology order";
  if (p == "perm") return "random permutations";
  if (p == "bisect") return "random bisections";
  return p;
}

nlohmann::json structure_json(const Fabric& f, const FabricStructure& s) {
  auto names = [&](const std::vector<int32_t>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (int32_t x : v) a.push_back(f.nodes[x].desc);
    return a;
  };
  auto refs = [&](const std::vector<LinkRef>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const LinkRef& l : v) a.push_back(link_ref(f, l));
    return a;
  };
  auto [hmin, hmax] = minmax_of(s.hosts_per_leaf);
  auto [umin, umax] = minmax_of(s.uplinks_per_leaf);
  nlohmann::json j{{"levels", s.levels},
                   {"two_level", s.two_level},
                   {"leaves", names(s.leaves)},
                   {"top", names(s.top)},
                   {"hosts_per_leaf", {{"min", hmin}, {"max", hmax}}},
                   {"uplinks_per_leaf", {{"min", umin}, {"max", umax}}},
                   {"oversubscription", s.oversubscription},
                   {"transfer_bound", s.transfer_bound},
                   {"common_link", format_width_speed(s.common_width, s.common_speed)},
                   {"host_gbps", s.host_gbps},
                   {"link_gbps", s.link_gbps},
                   {"missing", refs(s.missing)},
                   {"extra", refs(s.extra)},
                   {"slow", refs(s.slow)},
                   {"inactive", refs(s.inactive)},
                   {"ports_down", s.ports_down},
                   {"tree", s.tree},
                   {"lateral", refs(s.lateral)},
                   {"loopbacks", refs(s.loopbacks)},
                   {"hosts_above_lowest_level", names(s.hosts_above)},
                   {"unused_switches", names(s.unused)},
                   {"summary", describe_chassis(s)}};
  j["per_level"] = nlohmann::json::array();
  for (const LevelInfo& lv : s.per_level)
    j["per_level"].push_back({{"level", lv.level},
                              {"switches", lv.switches},
                              {"hosts", lv.hosts},
                              {"up_links", lv.up_links},
                              {"down_links", lv.down_links},
                              {"up_gbps", lv.up_gbps},
                              {"down_gbps", lv.down_gbps},
                              {"common_up", lv.common_up},
                              {"common_down", lv.common_down},
                              {"bound", lv.bound}});
  j["chassis"] = nlohmann::json::array();
  for (const Chassis& ch : s.chassis)
    j["chassis"].push_back({{"name", ch.name},
                            {"model", ch.model},
                            {"system_image_guid", guid_hex(ch.sysimg_guid)},
                            {"asics", names(ch.asics)},
                            {"line_asics", ch.line_asics},
                            {"spine_asics", ch.spine_asics}});
  j["standalone_switches"] = s.standalone_switches;
  j["rail_groups"] = nlohmann::json::array();
  for (const RailGroup& g : s.rail_groups)
    j["rail_groups"].push_back({{"leaves", names(g.leaves)},
                                {"rails", g.leaves.size()},
                                {"machines", g.machines.size()},
                                {"machines_crossed", g.crossed}});
  j["other_leaves"] = names(s.other_leaves);
  return j;
}

// Per upper level: the least and most LIDs and routes an up-port carries (lo > hi: none).
struct UpperRange {
  int lo = INT32_MAX, hi = 0;
  long rlo = LONG_MAX, rhi = 0;
};
UpperRange upper_range(const RoutingBalance& rb, size_t u) {
  UpperRange x;
  for (const auto& l : rb.upper[u])
    if (!l.ports.empty())
      x.lo = std::min(x.lo, l.min), x.hi = std::max(x.hi, l.max), x.rlo = std::min(x.rlo, l.route_min),
      x.rhi = std::max(x.rhi, l.route_max);
  return x;
}

nlohmann::json routing_json(const Analysis& a) {
  const Fabric& f = a.c.fabric;
  const RoutingBalance& rb = a.rb;
  nlohmann::json leaves = nlohmann::json::array();
  for (const auto& l : rb.leaves) {
    nlohmann::json ports = nlohmann::json::object();
    for (auto& [p, n] : l.ports) ports[std::to_string(p)] = n;
    leaves.push_back({{"leaf", f.nodes[l.leaf].desc}, {"min", l.min}, {"max", l.max}, {"ports", ports}});
  }
  nlohmann::json top = nlohmann::json::object();
  for (auto& [t, n] : rb.top) top[f.nodes[t].desc] = n;
  nlohmann::json upper = nlohmann::json::array();
  for (size_t u = 0; u < rb.upper.size(); ++u) {
    const UpperRange x = upper_range(rb, u);
    upper.push_back({{"level", u + 2},
                     {"switches", rb.upper[u].size()},
                     {"min", x.lo == INT32_MAX ? 0 : x.lo},
                     {"max", x.hi},
                     {"routes_min", x.rlo == LONG_MAX ? 0 : x.rlo},
                     {"routes_max", x.rhi},
                     {"idle_up_links", u + 1 < rb.idle_per_level.size() ? rb.idle_per_level[u + 1] : 0}});
  }
  nlohmann::json idle = nlohmann::json::array();
  for (const LinkRef& l : rb.idle) idle.push_back(link_ref(f, l));
  nlohmann::json j{{"leaves", leaves}, {"top", top}, {"upper_levels", upper}, {"idle_up_links", idle}};
  if (a.least && f.has_lfts) {
    const std::optional<RoutingAdvice> advice = a.routing_advice();
    j["consequence"] = {{"round_robin_least", a.rr_least},
                        {"bound", a.c.structure.transfer_bound},
                        {"least_time_tables", a.least->tables.time},
                        {"least_time_fabric", a.least->fabric.time},
                        {"tables_limited_by", a.least->tables.limited_by},
                        {"efficiency_ceiling", a.ceiling()},
                        {"routing_advice", advice ? routing_advice_json(*advice) : nlohmann::json(nullptr)}};
  }
  return j;
}

nlohmann::json patterns_json(const Analysis& a) {
  nlohmann::json out = nlohmann::json::array();
  for (const PatternResult& r : a.results) {
    nlohmann::json hist = nlohmann::json::object();
    for (auto& [k, v] : r.load.histogram) hist[std::to_string(k)] = v;
    nlohmann::json x{
        {"pattern", r.pattern},
        {"lids", r.lids},
        {"phases", r.load.phases},
        {"transfers", r.load.transfers},
        {"phase_max_histogram", phase_max_histogram(r.load.phase_max)},
        {"mean_load", r.load.mean_load},
        {"max_load", r.load.max_load},
        {"congested", r.load.congested},
        {"congested_share", r.load.congested_share()},
        {"broken", r.load.broken},
        {"unknown", r.load.unknown},
        {"histogram", hist},
        {"lower_bound",
         {{"worst", r.least.worst}, {"phase", r.least.phase}, {"where", r.least.where}, {"phases", r.least.phases}}}};
    if (r.load.fair_share)
      x["fair_share"] = {{"mean_gbps", r.load.mean_gbps},
                         {"min_gbps", r.load.min_gbps},
                         {"share_of_bound", a.bound_gbps > 0 ? r.load.mean_gbps / a.bound_gbps : 0}};
    x["efficiency"] = r.efficiency ? efficiency_json(*r.efficiency) : nlohmann::json(nullptr);
    out.push_back(std::move(x));
  }
  return out;
}

nlohmann::json analysis_json(const Analysis& a) {
  const Fabric& f = a.c.fabric;
  nlohmann::json others = nlohmann::json::array();
  for (int32_t x : a.c.structure.not_hosts)
    others.push_back({{"name", f.nodes[x].desc}, {"kind", to_string(node_kind(f.nodes[x]))}});
  nlohmann::json gone = nlohmann::json::array();
  for (const LostCable& l : a.changes.cables_gone) gone.push_back(cable_name(f, l));
  return {{"scan_id", a.c.scan_id},
          {"hosts", a.hosts.size()},
          {"machines", machines_json(f)},
          {"structure", structure_json(f, a.c.structure)},
          {"not_hosts", others},
          {"since_previous_scan",
           {{"scan_id", a.changes.previous ? nlohmann::json(a.changes.previous) : nlohmann::json(nullptr)},
            {"cables_gone", gone},
            {"hosts_gone", a.changes.hosts_gone}}},
          {"forwarding_tables", f.has_lfts},
          {"routing_balance", routing_json(a)},
          {"all_to_all_bound_gbps", a.bound_gbps},
          {"patterns", patterns_json(a)}};
}

void print_links(const Fabric& f, const FabricStructure& s, const char* what, const std::vector<LinkRef>& v) {
  std::printf("  %-19s %s", what, v.empty() ? "none\n" : (std::to_string(v.size()) + "\n").c_str());
  for (size_t i = 0; i < v.size() && i < 8; ++i) {
    const LinkRef& l = v[i];
    if (l.b_node < 0)
      std::printf("    %s: an up-link short of its level's %d\n", f.nodes[l.a_node].desc.c_str(),
                  s.per_level[std::max(s.level[l.a_node], 1) - 1].common_up);
    else if (l.a_port >= 0)
      std::printf("    %s[%d] -- %s[%d]\n", f.nodes[l.a_node].desc.c_str(), l.a_port, f.nodes[l.b_node].desc.c_str(),
                  l.b_port);
    else
      std::printf("    %s -- %s\n", f.nodes[l.a_node].desc.c_str(), f.nodes[l.b_node].desc.c_str());
  }
  if (v.size() > 8) std::printf("    ... (--json lists all)\n");
}

// Missing and extra links in plain words: one line per switch (or pair), with the count the
// others have beside what this one has.
void print_differences(const Fabric& f, const FabricStructure& s, const char* what, const std::vector<LinkRef>& v,
                       int sign) {
  std::vector<std::pair<LinkRef, int>> groups;
  for (const LinkRef& l : v) {
    if (!groups.empty() && groups.back().first.a_node == l.a_node && groups.back().first.b_node == l.b_node)
      ++groups.back().second;
    else
      groups.push_back({l, 1});
  }
  std::printf("  %-19s %s", what, v.empty() ? "none\n" : (std::to_string(v.size()) + "\n").c_str());
  const char* word = sign < 0 ? "missing" : "extra";
  for (size_t i = 0; i < groups.size() && i < 8; ++i) {
    const auto& [l, k] = groups[i];
    const Node& a = f.nodes[l.a_node];
    if (l.b_node < 0) {
      const int level = std::max(s.level[l.a_node], 1), common = s.per_level[level - 1].common_up;
      std::printf("    %s: %d up-links where level %d's switches have %d (%d %s)\n", a.desc.c_str(), common + sign * k,
                  level, common, k, word);
      continue;
    }
    int have = 0;
    for (int p = 1; p <= a.num_ports(); ++p) have += a.ports[p].peer_node == l.b_node && port_usable(a.ports[p]);
    std::printf("    %s -- %s: %s where each leaf has %d to each top switch (%d %s)\n", a.desc.c_str(),
                f.nodes[l.b_node].desc.c_str(),
                have == 0 ? "no cable" : (std::to_string(have) + (have == 1 ? " cable" : " cables")).c_str(),
                have - sign * k, k, word);
  }
  if (groups.size() > 8) std::printf("    ... %zu more (--json lists all)\n", groups.size() - 8);
}

// Rail groups as one line ("4 of 8 rails, 32 machines each" or the range), and the other leaves.
void print_rail_groups(const Fabric& f, const FabricStructure& s) {
  if (s.rail_groups.empty()) return;
  size_t rmin = SIZE_MAX, rmax = 0, mmin = SIZE_MAX, mmax = 0;
  for (const RailGroup& g : s.rail_groups) {
    rmin = std::min(rmin, g.leaves.size()), rmax = std::max(rmax, g.leaves.size());
    mmin = std::min(mmin, g.machines.size()), mmax = std::max(mmax, g.machines.size());
  }
  auto range = [](size_t a, size_t b) {
    return a == b ? std::to_string(a) : std::to_string(a) + ".." + std::to_string(b);
  };
  int crossed = 0;
  for (const RailGroup& g : s.rail_groups) crossed += g.crossed;
  const std::string crossed_text =
      crossed ? "; " + std::to_string(crossed) + " machine(s) with rails crossed (another HCA order)" : "";
  std::printf(
      "  rail groups         %zu (leaf k of a group carries rail k of its machines): %s leaves, %s machines each%s\n",
      s.rail_groups.size(), range(rmin, rmax).c_str(), range(mmin, mmax).c_str(), crossed_text.c_str());
  if (s.other_leaves.empty()) return;
  std::printf(
      "  other leaves        %zu (no rail of a grouped machine: management, storage or login; not in the missing "
      "links or the oversubscription):",
      s.other_leaves.size());
  for (size_t i = 0; i < s.other_leaves.size() && i < 4; ++i)
    std::printf(" %s", f.nodes[s.other_leaves[i]].desc.c_str());
  std::printf("%s\n", s.other_leaves.size() > 4 ? " ..." : "");
}

void print_structure(const Analysis& a) {
  const Fabric& f = a.c.fabric;
  const FabricStructure& s = a.c.structure;
  std::printf("scan %lld: %zu hosts analysed; %s (%zu leaves, %zu at the top)%s%s\n",
              static_cast<long long>(a.c.scan_id), a.hosts.size(), describe_chassis(s).c_str(), s.leaves.size(),
              s.top.size(), s.two_level ? ", a two-level tree" : "",
              s.tree ? "" : ", NOT a tree (links within a level or across levels)");
  if (const std::string m = describe_machines(f, group_machines(f)); !m.empty())
    std::printf("  machines: %s\n", m.c_str());
  std::printf("structure\n  %-6s %9s %7s %9s %10s %13s %6s\n", "level", "switches", "hosts", "up-links", "down-links",
              "up/down Gb/s", "bound");
  for (const LevelInfo& lv : s.per_level)
    std::printf("  %-6d %9d %7d %9ld %10ld %6.0f/%-6.0f %6d\n", lv.level, lv.switches, lv.hosts, lv.up_links,
                lv.down_links, lv.up_gbps, lv.down_gbps, lv.bound);
  if (!s.not_hosts.empty()) {
    std::printf("  not hosts           %zu:", s.not_hosts.size());
    for (size_t i = 0; i < s.not_hosts.size() && i < 4; ++i)
      std::printf(" %s (%s)", f.nodes[s.not_hosts[i]].desc.c_str(),
                  std::string(to_string(node_kind(f.nodes[s.not_hosts[i]]))).c_str());
    std::printf("%s\n", s.not_hosts.size() > 4 ? " ..." : "");
  }
  if (!s.hosts_above.empty())
    std::printf("  hosts above level 1 %zu (on switches that also carry traffic between leaves)\n",
                s.hosts_above.size());
  if (!s.unused.empty()) {
    std::printf("  unused switches     %zu (on no shortest path between hosts: no level, no bound):", s.unused.size());
    for (size_t i = 0; i < s.unused.size() && i < 4; ++i) std::printf(" %s", f.nodes[s.unused[i]].desc.c_str());
    std::printf("%s\n", s.unused.size() > 4 ? " ..." : "");
  }
  print_rail_groups(f, s);
  auto [hmin, hmax] = minmax_of(s.hosts_per_leaf);
  auto [umin, umax] = minmax_of(s.uplinks_per_leaf);
  std::printf("  hosts per leaf      %d..%d\n  up-links per leaf   %d..%d\n", hmin, hmax, umin, umax);
  std::printf("  oversubscription    %.2f:1 -> at most %d transfer(s) per link direction at once\n", s.oversubscription,
              s.transfer_bound);
  std::printf("  common links        %s between switches (%.0f Gb/s), hosts at %.0f Gb/s\n",
              format_width_speed(s.common_width, s.common_speed).c_str(), s.link_gbps, s.host_gbps);
  print_differences(f, s, "missing links", s.missing, -1);
  print_differences(f, s, "extra links", s.extra, +1);
  print_links(f, s, "slow links", s.slow);
  print_links(f, s, "links not active", s.inactive);
  print_links(f, s, "loopback cables", s.loopbacks);
  if (!s.tree) print_links(f, s, "lateral links", s.lateral);
  std::printf("  switch ports down   %d (not cabled or down)%s\n", s.ports_down,
              a.changes.cables_gone.empty()
                  ? ""
                  : (", among them the ends of " + std::to_string(a.changes.cables_gone.size()) +
                     " cable(s) there in scan " + std::to_string(a.changes.previous) + ":")
                        .c_str());
  for (size_t i = 0; i < a.changes.cables_gone.size() && i < 8; ++i)
    std::printf("    %s\n", cable_name(f, a.changes.cables_gone[i]).c_str());
  if (a.changes.cables_gone.size() > 8) std::printf("    ... (--json lists all)\n");
}

void print_routing(const Analysis& a) {
  const Fabric& f = a.c.fabric;
  const RoutingBalance& rb = a.rb;
  int gmin = INT32_MAX, gmax = 0;
  for (const auto& l : rb.leaves)
    if (!l.ports.empty()) gmin = std::min(gmin, l.min), gmax = std::max(gmax, l.max);
  if (rb.leaves.empty() || gmax == 0 || gmin > gmax) return;
  std::printf("routing balance: CA LIDs per leaf up-port, min..max over all leaves %d..%d\n", gmin, gmax);
  auto worst = rb.leaves;
  std::sort(worst.begin(), worst.end(), [](auto& x, auto& y) { return x.max - x.min > y.max - y.min; });
  std::printf("  the %zu least even (widest min..max):\n", std::min<size_t>(3, worst.size()));
  for (size_t i = 0; i < worst.size() && i < 3; ++i)
    std::printf("    %-14s %d..%d over %zu up-ports\n", f.nodes[worst[i].leaf].desc.c_str(), worst[i].min, worst[i].max,
                worst[i].ports.size());
  if (!rb.top.empty()) {
    auto [lo, hi] =
        std::minmax_element(rb.top.begin(), rb.top.end(), [](auto& x, auto& y) { return x.second < y.second; });
    std::printf("  top switches carry %ld..%ld routes from the level below (%s least, %s most)\n", lo->second,
                hi->second, f.nodes[lo->first].desc.c_str(), f.nodes[hi->first].desc.c_str());
  }
  for (size_t u = 0; u < rb.upper.size(); ++u) {
    const UpperRange x = upper_range(rb, u);
    const size_t idle = u + 1 < rb.idle_per_level.size() ? rb.idle_per_level[u + 1] : 0;
    if (x.lo <= x.hi)
      std::printf("  level %zu up-ports carry %d..%d host LIDs each in their tables, %ld..%ld host-to-host routes%s\n",
                  u + 2, x.lo, x.hi, x.rlo, x.rhi,
                  idle ? (" (" + std::to_string(idle) +
                          " up-links carry none: the traffic that reaches these switches is routed correlated)")
                             .c_str()
                       : "");
  }
  print_links(f, a.c.structure, "idle up-links", rb.idle);
  if (a.least)
    std::printf(
        "  consequence         round-robin cannot go below %d transfer(s) per link at once (bound %d); the least "
        "possible\n"
        "                      all-to-all time over these tables is %.0f message-times, the fabric's %.0f: at most "
        "%.2f efficiency%s\n",
        a.rr_least, a.c.structure.transfer_bound, a.least->tables.time, a.least->fabric.time, a.ceiling(),
        a.ceiling() < 0.995 ? ("\n                      (" + a.least->tables.limited_by + ")\n                      " +
                               routing_advice_text(*a.routing_advice()))
                                  .c_str()
                            : "");
}

void print_patterns(const AnalyzeOptions& o, const Analysis& a) {
  std::printf(
      "traffic on %zu hosts (bound %d per link direction; over a whole all-to-all the leaves' up-links allow %.1f Gb/s "
      "per node)\n",
      a.hosts.size(), a.c.structure.transfer_bound, a.bound_gbps);
  std::printf("  %-30s %-7s %7s %6s %5s %5s %10s %10s %s\n", "pattern", "LIDs", "phases", "mean", "max", "least",
              "congested", "efficiency", o.fair_share ? "per node (max-min fair)" : "");
  for (const PatternResult& r : a.results) {
    std::printf("  %-30s %-7s %7zu %6.2f %5d %5d %9.1f%% %10s", pattern_title(r.pattern).c_str(), r.lids.c_str(),
                r.load.phases, r.load.mean_load, r.load.max_load, r.least.worst, 100 * r.load.congested_share(),
                r.efficiency ? efficiency_figure(*r.efficiency).c_str() : "-");
    if (r.load.fair_share)
      // Against the host link, a true ceiling: the all-to-all bound averages the leaves' cuts over a
      // whole exchange, and a phase's fair share may lie above it (it read as "102 % of bound").
      std::printf("  %6.1f Gb/s (%3.0f%% of a host link)", r.load.mean_gbps,
                  a.c.structure.host_gbps > 0 ? 100 * r.load.mean_gbps / a.c.structure.host_gbps : 0);
    if (r.load.broken > r.load.unknown)
      std::printf("  %zu broken (no working route: lost)", r.load.broken - r.load.unknown);
    if (r.load.unknown) std::printf("  %zu unknown (a table on the way was not read)", r.load.unknown);
    std::printf("\n");
  }
  std::printf(
      "(mean/max: transfers per switch link direction per phase, broken ones up to where their route ends; least: no "
      "choice\n"
      " of DLIDs gets max below this, from at most %zu evenly spaced phases; congested: transfers crossing a link "
      "above the\n"
      " bound; efficiency: least possible time of the all-to-all over the fabric / its time with each phase as long as "
      "its\n"
      " worst link needs; none where transfers are lost)\n",
      kBoundPhases);
  if (a.least)
    std::printf("least possible all-to-all time: %.0f message-times, limited by %s\n", a.least->fabric.time,
                a.least->fabric.limited_by.c_str());
}

int run_analyze(const AnalyzeOptions& o) {
  store::FabricStore store(o.db, store::Access::read_only);
  ScanContext c(store, o.scan);
  Progress progress;
  const Analysis a = analyze_fabric(store, c, o, std::ref(progress));
  progress.finish();
  if (o.json) {
    print_json(analysis_json(a));
    return kExitOk;
  }
  print_structure(a);
  if (!c.fabric.has_lfts)
    std::printf("routing: unknown (the scan has no forwarding tables); traffic patterns need them\n");
  print_routing(a);
  if (!a.results.empty()) print_patterns(o, a);
  return kExitOk;
}

}  // namespace

Runner setup_analyze(CLI::App& app) {
  auto o = std::make_shared<AnalyzeOptions>();
  auto* c = add_store_command(app, *o, "analyze", kScanAndJson);
  add_hosts_option(c, o->hosts);
  c->add_option("--patterns", o->patterns, "patterns to evaluate")->delimiter(',')->capture_default_str();
  c->add_option("--lids", o->lids, "DLID policies to evaluate")->delimiter(',')->capture_default_str();
  c->add_option("--samples", o->samples, "random permutations / bisections to average")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  c->add_option("--seed", o->seed, "seed of the random patterns")->capture_default_str();
  c->add_flag("!--no-fair-share", o->fair_share, "skip the max-min fair bandwidth estimate (faster)");
  return [o] { return run_analyze(*o); };
}

}  // namespace ibroute::cli
