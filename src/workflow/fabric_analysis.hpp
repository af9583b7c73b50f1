// `ibroute analyze`'s findings, gathered once for the command to print or write as JSON: the
// traffic patterns' link loads (round-robin in name and topology order through round_robin.hpp,
// random permutations and bisections) under each LID policy with the least worst load any DLIDs
// allow, the all-to-all's least times, the routing balance and what changed since the scan before.
#pragma once

#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "fabric_context.hpp"
#include "fabric_store.hpp"
#include "ibroute/fabric/progress.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/lower_bound.hpp"
#include "routing_advice.hpp"
#include "scan_changes.hpp"

namespace ibroute::workflow {

struct AnalysisRequest {
  std::string hosts;  // --hosts; "" = every host
  std::vector<std::string> patterns{"rr-name", "rr-topo", "perm", "bisect"};
  std::vector<std::string> lids{"base", "spread"};
  int samples = 10;
  uint32_t seed = 1;
  bool fair_share = true;
};

struct PatternResult {
  std::string pattern, lids;
  schedule::LoadReport load;
  schedule::LowerBound least;                      // of the pattern's phases, whatever the DLIDs
  std::optional<schedule::Efficiency> efficiency;  // round-robin: a whole all-to-all, its time against the least
};

// Everything analyze finds.
struct Analysis {
  const FabricContext& c;
  std::vector<schedule::Host> hosts;
  std::vector<PatternResult> results;
  std::optional<schedule::LeastTimes> least;  // of the all-to-all among the hosts (with a round-robin pattern)
  fabric::RoutingBalance rb;
  int rr_least = INT32_MAX;  // the least worst link any DLID choice leaves round-robin
  double bound_gbps = 0;
  ScanChanges changes;  // cables and hosts the scan before had
  static bool rr(const std::string& pattern) { return pattern.rfind("rr-", 0) == 0; }
  // Over these tables against the fabric's own: at most this efficiency for any plan.
  double ceiling() const { return least && least->tables.time > 0 ? least->fabric.time / least->tables.time : 0; }
  // Where the tables cost time: whether `ibroute routing` passes its check here (routing_advice.hpp).
  std::optional<RoutingAdvice> routing_advice() const;
};

// Patterns are evaluated on at most this many phases for their lower bound (plan bounds every phase).
inline constexpr size_t kBoundPhases = 256;

// InputError on a pattern or LID policy that is none.
Analysis analyze_fabric(store::FabricStore& store, const FabricContext& c, const AnalysisRequest& r,
                        const fabric::ProgressFn& progress);

}  // namespace ibroute::workflow
