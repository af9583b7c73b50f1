// analyze_fabric: the patterns evaluated once, their figures from the one pipeline's functions.
#include "fabric_analysis.hpp"

#include <algorithm>

#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "plan_pipeline.hpp"
#include "round_robin.hpp"

namespace ibroute::workflow {

using namespace ibroute::fabric;
using namespace ibroute::schedule;

namespace {

std::vector<LidPolicy> policies_of(const AnalysisRequest& o) {
  std::vector<LidPolicy> policies;
  for (const std::string& l : o.lids) {
    LidPolicy p;
    if (!lid_policy_from(l, p)) throw InputError("--lids takes base, spread or random, not '" + l + "'");
    policies.push_back(p);
  }
  for (const std::string& p : o.patterns)
    if (p != "rr-name" && p != "rr-topo" && p != "perm" && p != "bisect")
      throw InputError("--patterns takes rr-name, rr-topo, perm, bisect, not '" + p + "'");
  return policies;
}

void evaluate_patterns(const AnalysisRequest& o, const std::vector<LidPolicy>& policies, const ProgressFn& progress,
                       Analysis& a) {
  const Fabric& f = a.c.fabric;
  auto say = [&](const std::string& stage) {
    return [&progress, stage](std::string_view, size_t d, size_t t) {
      if (progress) progress(stage, d, t);
    };
  };
  const std::vector<std::string> patterns =
      f.has_lfts ? o.patterns : std::vector<std::string>{};  // no tables, no routes
  // The round-robin patterns are whole all-to-all exchanges: how close their time comes to the
  // least, by the figures every command gives (plan_pipeline.hpp).
  if (a.hosts.size() >= 2 && std::any_of(patterns.begin(), patterns.end(), Analysis::rr))
    a.least = least_times(a.c.eval, a.hosts, {}, {});
  for (const std::string& p : patterns) {
    const Exchange x{p == "rr-topo" ? topology_order(f, a.hosts) : a.hosts};
    std::vector<Phase> phases = p == "perm"     ? random_permutations(x.hosts.size(), o.samples, o.seed)
                                : p == "bisect" ? random_bisections(x.hosts.size(), o.samples, o.seed)
                                                : round_robin_phases(f, x);
    // On at most kBoundPhases phases: analyze stays quick on big fabrics.
    const LowerBound least =
        worst_load_lower_bound(a.c.eval, x.hosts, phases, kBoundPhases, nullptr, say(p + ": lower bound"));
    if (Analysis::rr(p)) a.rr_least = std::min(a.rr_least, least.worst);
    for (LidPolicy pol : policies) {
      apply_lid_policy(f, x.hosts, phases, pol, o.seed);
      PatternResult r{p, to_string(pol),
                      evaluate(a.c.eval, x.hosts, phases, o.fair_share, say(p + " " + to_string(pol))), least,
                      std::nullopt};
      if (a.least && Analysis::rr(p)) r.efficiency = figures_over(a.c.eval, *a.least, x, r.load).efficiency;
      a.results.push_back(std::move(r));
    }
  }
}

}  // namespace

std::optional<RoutingAdvice> Analysis::routing_advice() const {
  if (!least || ceiling() >= 0.995) return std::nullopt;
  return advise_routing(c.fabric, c.structure, hosts);
}

Analysis analyze_fabric(store::FabricStore& store, const FabricContext& c, const AnalysisRequest& r,
                        const ProgressFn& progress) {
  const std::vector<LidPolicy> policies = policies_of(r);
  Analysis a{c, select_hosts(c.fabric, r.hosts), {}, std::nullopt, {}, INT32_MAX, 0, changes_since_previous(store, c)};
  evaluate_patterns(r, policies, progress, a);
  a.bound_gbps = all_to_all_bound_gbps(c.eval, a.hosts);
  if (c.fabric.has_lfts) a.rb = routing_balance(c.fabric, c.structure);
  return a;
}

}  // namespace ibroute::workflow
