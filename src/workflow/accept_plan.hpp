// Step 3 of `ibroute accept`: the plan, through the one plan pipeline (plan_pipeline.hpp), in the
// order given or by leaf and port when that is better, with what makes it fall short named.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabric_context.hpp"
#include "plan_pipeline.hpp"

namespace ibroute::workflow {

struct AcceptPlanRequest {
  std::string hosts, senders, receivers;
  std::string order = "auto";  // name | topology | auto (name; topology where name leaves a link over the bound)
  PlanRequest plan;
};

struct AcceptPlan {
  Exchange given;  // in the order given: the round-robin baseline's ranks
  PlanOutcome chosen;
  std::string order;  // of the chosen plan
  nlohmann::json orders_tried = nlohmann::json::array();
  std::vector<int32_t> over;               // links above capacity in some phase, worst first
  nlohmann::json worst_links;              // the first few of them
  std::string why;                         // the worst links and what no DLID choice avoids; "" when within the bound
  const FabricContext* context = nullptr;  // the scan it was planned on
};

AcceptPlan plan_for_acceptance(const FabricContext& c, const AcceptPlanRequest& r);

}  // namespace ibroute::workflow
