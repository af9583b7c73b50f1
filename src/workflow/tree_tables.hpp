// `ibroute routing`'s computation: forwarding tables for a tree (fabric/core/tree_routing) built
// in a rank order, refined, checked, and measured as every command measures an exchange — the
// round-robin all-to-all with base LIDs over them (round_robin.hpp), the least time they allow,
// the scanned tables beside them and, asked for, a plan over them (plan_pipeline.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabric_context.hpp"
#include "ibroute/fabric/tree_routing.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "round_robin.hpp"

namespace ibroute::workflow {

struct TreeTablesRequest {
  std::string hosts;           // --hosts; "" = every host
  std::string order = "auto";  // given | tree | auto (name and topology are read as given and tree)
  std::string style = "auto";  // hubs | spread | auto (both, the better kept)
  bool refine = true;
  double refine_work = 8192;  // millions of units (RefineLimits::work)
  bool plan = false;          // plan the all-to-all over the computed tables too
};

// One construction's tables in one rank order and what they give: round-robin with base LIDs.
struct TreeTables {
  schedule::LoadReport load;
  schedule::Efficiency efficiency;  // of that round-robin, as plan and analyze give it
  std::vector<schedule::Host> hosts;
  fabric::TreeRouting routing;
  fabric::RefineStats refine;
  fabric::TreeStyle style = fabric::TreeStyle::hubs;
  // At LMC > 0 where both were built and the spread kept: the hubs, whose LIDs follow the spread's
  // base LIDs (fabric::merge_lids); none where the tables are one construction's.
  std::optional<fabric::TreeStyle> other_lids;
  schedule::LeastTimes least;  // over these tables (what any plan of the all-to-all needs at least) and the fabric's
  double base_least = 0;       // the tables' least time over the base LIDs alone (least.tables' at LMC 0)
  // Better: over the base LIDs a least time lower by more than 2 % (what every plan over them
  // inherits), else a lower worst link of round-robin (base LIDs too). Judged by the base LIDs at
  // any LMC, so that the construction LMC 0 would keep is kept: its base LIDs routed as at LMC 0,
  // a plan at LMC > 0 is never worse than at LMC 0 (docs/planner.md#base-lids).
  bool better_than(const TreeTables& o) const;
};

// What routing found: the tables in the order used, their check, and what they give.
struct TreeTablesOutcome {
  TreeTables best;
  fabric::Fabric fabric;  // the scan's fabric with the computed tables
  std::string order;      // given | tree
  double seconds = 0;
  fabric::RoutingCheck check;
  std::optional<RoundRobin> before;             // the scanned tables, same order (a scan with tables)
  std::optional<schedule::LoadReport> planned;  // TreeTablesRequest::plan: a plan over the computed tables
  double ceiling() const { return best.least.tables.time > 0 ? best.least.fabric.time / best.least.tables.time : 0.0; }
};

// The order: as given, the tree's, or (auto) the given one where it reaches the bound, else the
// tree's. InputError on hosts that are none.
TreeTablesOutcome compute_tree_tables(const FabricContext& c, const TreeTablesRequest& r);

}  // namespace ibroute::workflow
