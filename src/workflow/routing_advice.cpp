#include "routing_advice.hpp"

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/tree_routing.hpp"

namespace ibroute::workflow {

using namespace ibroute::fabric;

namespace {

// The check's verdict on one construction: empty when its tables pass, else its first failure.
std::string fails(const Fabric& f, const FabricStructure& s, const std::vector<CaPort>& order, TreeStyle style) {
  try {
    const TreeRouting r = route_tree(f, s, order, style);
    Fabric routed = f;
    apply_tree_routing(routed, r);
    const RoutingCheck check = check_tree_routing(routed, s);
    if (check.ok()) return {};
    return "its tables fail their own check here (" + std::to_string(check.failures) + " routes, e.g. " +
           (check.first.empty() ? std::string("none named") : check.first.front()) + ")";
  } catch (const InputError& e) {
    return std::string("it cannot route this fabric: ") + e.what();
  }
}

}  // namespace

std::optional<RoutingAdvice> advise_if_limited(const FabricContext& c, const schedule::Efficiency& e,
                                               const std::vector<schedule::Host>& hosts) {
  if (!e.routing_limits() || hosts.empty()) return std::nullopt;
  return advise_routing(c.fabric, c.structure, hosts);
}

RoutingAdvice advise_routing(const Fabric& f, const FabricStructure& s, const std::vector<schedule::Host>& hosts) {
  std::vector<CaPort> order;
  order.reserve(hosts.size());
  for (const schedule::Host& h : hosts) order.push_back({h.node, h.port});
  const std::string hubs = fails(f, s, order, TreeStyle::hubs), spread = fails(f, s, order, TreeStyle::spread);
  if (hubs.empty() && spread.empty()) return {"ibroute routing", {}};
  if (hubs.empty()) return {"ibroute routing --style hubs", {}};
  if (spread.empty()) return {"ibroute routing --style spread", {}};
  return {{}, hubs};
}

nlohmann::json routing_advice_json(const RoutingAdvice& a) {
  return {{"command", a.command.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.command)},
          {"blocked_by", a.blocked_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.blocked_by)}};
}

std::string routing_advice_text(const RoutingAdvice& a) {
  if (!a.command.empty())
    return a.command + " computes other tables (their check passes here; it prints the least time they allow)";
  return "ibroute routing cannot lift it: " + a.blocked_by;
}

}  // namespace ibroute::workflow
