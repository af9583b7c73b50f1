#include "accept_plan.hpp"

#include <algorithm>
#include <tuple>

#include "ibroute/fabric/error.hpp"

namespace ibroute::workflow {

using namespace ibroute::schedule;
using nlohmann::json;

namespace {

constexpr size_t kWorstShown = 5;

// Within the bound first, then the lowest worst link, then the fewest phases and transfers over.
auto rank_of(const PlanOutcome& p) {
  return std::tuple(p.stats.phases_over > 0, p.load.max_load, p.stats.phases_over, p.load.congested);
}

// The links above their capacity in some phase, worst first (then the busiest over all phases):
// where to look, rather than the first one found.
std::vector<int32_t> links_over(const EvalContext& ctx, const LoadReport& l) {
  std::vector<int32_t> over;
  for (size_t k = 0; k < l.link_worst.size(); ++k)
    if (l.link_worst[k] > ctx.capacity[k]) over.push_back(static_cast<int32_t>(k));
  auto key = [&](int32_t k) { return std::tuple(-l.link_worst[k], -static_cast<int64_t>(l.link_total[k]), k); };
  std::sort(over.begin(), over.end(), [&](int32_t a, int32_t b) { return key(a) < key(b); });
  return over;
}

// "worst: A carries 4 (capacity 2), B carries 3 (capacity 2) and 12 more links"
std::string worst_text(const json& worst, size_t count) {
  if (worst.empty()) return "";
  std::string t = "worst: ";
  for (const json& w : worst)
    t += (&w == &worst.front() ? "" : ", ") + w["link"].get<std::string>() + " carries " +
         std::to_string(w["load"].get<int>()) + " (capacity " + std::to_string(w["capacity"].get<int>()) + ")";
  if (count > worst.size()) t += " and " + std::to_string(count - worst.size()) + " more links";
  return t;
}

}  // namespace

AcceptPlan plan_for_acceptance(const FabricContext& c, const AcceptPlanRequest& r) {
  AcceptPlan a;
  a.context = &c;
  a.given = select_exchange(c.fabric, r.hosts, r.senders, r.receivers, false);
  if (a.given.hosts.size() < 2) throw InputError("an all-to-all needs at least 2 hosts");
  // In the ranks' given (name) order, or by leaf and port: routing engines such as ftree make the
  // topology order's shifts congestion-free, which at LMC 0 no choice of DLIDs can do for another.
  auto in_order = [&](const std::string& order, const PlanRequest& req) {
    const Exchange x = order == "topology" ? select_exchange(c.fabric, r.hosts, r.senders, r.receivers, true) : a.given;
    PlanOutcome p = plan_exchange(c.eval, x, req);
    a.orders_tried.push_back({{"order", order}, {"max_load", p.load.max_load}, {"phases_over", p.stats.phases_over}});
    return p;
  };
  a.order = r.order == "topology" ? "topology" : "name";
  a.chosen = in_order(a.order, r.plan);
  // Not where the plan measured the topology order's shifts already and they were worse.
  const int topo_rr = a.chosen.topology_round_robin_max_load;
  if (r.order == "auto" && a.chosen.stats.phases_over > 0 && !(topo_rr > 0 && topo_rr > a.chosen.load.max_load)) {
    // The second order is there for engines whose shifts in topology order are congestion-free
    // (ftree): its shifts only, without the baselines the first plan measured already, so that
    // accept costs little more than one plan on any routing.
    PlanRequest shifts = r.plan;
    shifts.packing = false, shifts.baseline = false;
    PlanOutcome other = in_order("topology", shifts);
    if (rank_of(other) < rank_of(a.chosen)) a.chosen = std::move(other), a.order = "topology";
  }
  a.over = links_over(c.eval, a.chosen.load);
  a.worst_links = json::array();
  for (size_t k = 0; k < a.over.size() && k < kWorstShown; ++k)
    a.worst_links.push_back({{"link", link_name(c, a.over[k])},
                             {"load", a.chosen.load.link_worst[a.over[k]]},
                             {"capacity", c.eval.capacity[a.over[k]]},
                             {"transfers", a.chosen.load.link_total[a.over[k]]}});
  a.why = worst_text(a.worst_links, a.over.size());
  const LowerBound& least = a.chosen.least;
  if (least.worst > a.chosen.schedule.bound)
    a.why += "; no choice of DLIDs gets below " + std::to_string(least.worst) + ": " + least.where;
  a.chosen.schedule.name =
      "accept-" + std::to_string(a.chosen.schedule.hosts.size()) + "-scan" + std::to_string(c.scan_id);
  return a;
}

}  // namespace ibroute::workflow
