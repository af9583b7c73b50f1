// Where the routing tables, not the fabric, limit an exchange, the commands point at `ibroute
// routing` — only where its tables pass their own check on this fabric, else they say what
// blocks it (advice that fails when followed is worse than none).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabric_context.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::workflow {

struct RoutingAdvice {
  std::string command;     // what to run ("ibroute routing", or with the one --style that passes); empty: none
  std::string blocked_by;  // where command is empty: why, one line
};

// Both constructions of `ibroute routing` built for these hosts (without its refinement, which
// keeps every route up*/down*) and checked as the command checks them before writing.
RoutingAdvice advise_routing(const fabric::Fabric& f, const fabric::FabricStructure& s,
                             const std::vector<schedule::Host>& hosts);

// The advice where the tables limit `e` (Efficiency::routing_limits), else none (nothing built).
std::optional<RoutingAdvice> advise_if_limited(const FabricContext& c, const schedule::Efficiency& e,
                                               const std::vector<schedule::Host>& hosts);

nlohmann::json routing_advice_json(const RoutingAdvice& a);
// "ibroute routing computes tables that pass their check here", or what blocks it.
std::string routing_advice_text(const RoutingAdvice& a);

}  // namespace ibroute::workflow
