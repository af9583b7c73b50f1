// The ports' counters around traffic, as accept and run report them: snapshots read live (kept in
// the database when there is one), the change between two, and per link the measured bytes beside
// the planned (fabric/link_measures.hpp) as the reports' "links_measured".
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabric_context.hpp"
#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/link_measures.hpp"
#include "run_facts.hpp"

namespace ibroute::workflow {

struct CounterWindow {
  std::string between;  // "around the run", "snapshots 3 and 4 of scan 1, ..."
  std::vector<fabric::PortDelta> deltas;
};

// A live snapshot of every port of the scan, saved with `label` when `store` is given; nothing
// (and `why`) where the MAD port cannot be opened.
std::optional<fabric::CounterSnapshot> live_counters(store::FabricStore* store, const FabricContext& c,
                                                     const std::string& label, std::string& why);

// The ports whose error counters rose in `w`, worst first (at most 500): "SymbolErrorCounter +7,
// LinkDownedCounter +1".
std::vector<ErrorPort> error_ports(const fabric::Fabric& f, const fabric::LinkIndex& links, const CounterWindow& w);

// The links that waited for credits (PortXmitWait as a share of the time), the largest first (at most 500).
std::vector<std::pair<std::string, double>> waiting_shares(const fabric::Fabric& f, const fabric::LinkIndex& links,
                                                           const fabric::LinkMeasures& m);

// The reports' "links_measured": {"measured": false, "why"} without a window, else the totals, the
// 500 links with the largest gaps (measured against planned) worst first, the ports whose error
// counters rose ("errors": link, what, errors) and the links that waited ("waiting": link,
// wait_share), each worst first: what accept judges a run by, read once, by the run.
nlohmann::json links_measured_json(const fabric::Fabric& f, const fabric::LinkIndex& links, const CounterWindow* w,
                                   const fabric::LinkMeasures* m, const std::string& why, uint64_t rounds,
                                   double seconds, double tick_ns);

}  // namespace ibroute::workflow
