// The checks of `ibroute accept`: the typed expectation and what was found or measured in,
// verdicts out. No I/O: accept_run gathers the facts (scan, plan, run or simulation); the command
// line renders the report (src/cli: accept_text, accept_html).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "expectation.hpp"
#include "ibroute/fabric/cabling.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "run_facts.hpp"
#include "scan_changes.hpp"

namespace ibroute::workflow {

struct Checks {
  nlohmann::json list = nlohmann::json::array();
  int passed = 0, failed = 0;
  // `ok` empty: not measured (a simulation has no clocks). `measured` is the text people read;
  // `value` the same as a number for scripts, under a key that names its unit ("value_gbps").
  struct Value {
    const char* key;
    double v;
  };
  void add(const std::string& name, std::optional<bool> ok, nlohmann::json measured, nlohmann::json expected,
           const std::string& detail = "", std::optional<Value> value = std::nullopt);
};

// 1. Is the fabric what was ordered? topology, hosts, link width and speed, broken links, LMC.
// `changes`: the hosts and cables the scan before had and this one lacks (named where they fail).
void check_fabric(const Expectation& expect, const fabric::Fabric& f, const fabric::FabricStructure& st,
                  const ScanChanges& changes, Checks& out);

// 2. Is the routing balanced? Host-to-host routes per up-port at every level (idle up-links fail).
void check_routing(const Expectation& expect, const fabric::Fabric& f, const fabric::FabricStructure& st, Checks& out);

// 3. Does a congestion-free all-to-all exist, and how close does the plan come to the least time?
struct PlanFacts {
  int max_load = 0, least_worst = 0, bound = 0;
  size_t phases_over = 0, phases = 0;
  std::string why;  // the worst links, and what no DLID choice can avoid
  schedule::Efficiency efficiency;
};
void check_plan(const Expectation& expect, const PlanFacts& p, Checks& out);

// 4. Does the fabric deliver it? From the run's report (or the simulation: what it cannot know is
// "not measured").
struct Delivery {
  bool simulated = false;
  double node_rate = 0;  // bytes/s, the slowest node
  std::optional<double> skipped_share, clock_uncertainty_us, sustainable_rate;
  std::optional<size_t> missing_ranks;
  bool plan_over_bound = false;
  std::string why;  // of the plan, where it is over the bound
};
void check_delivery(const Expectation& expect, const Delivery& d, Checks& out);

// 5. Did the links stay clean? The ports' error counters that rose between two snapshots
// (`ibroute counters`; taken around the run by accept --launch). `facts` empty: not measured, `why`.
struct CounterFacts {
  std::string between;           // "snapshots 3 and 4 of scan 1 (around the run)"
  std::vector<ErrorPort> links;  // with errors that rose, worst first
};
void check_counters(const Expectation& expect, const std::optional<CounterFacts>& facts, const std::string& why,
                    Checks& out);

// 6. Did any link wait for credits? PortXmitWait as a share of the run's time (the tick is the
// switch's, from the expectation: xmit_wait_tick_ns). `links`: name and share, worst first.
struct CongestionFacts {
  std::string between;
  std::vector<std::pair<std::string, double>> links;
};
void check_congestion(const Expectation& expect, const std::optional<CongestionFacts>& facts, const std::string& why,
                      Checks& out);

// 7. Is a part of the fabric located as slow? A suspect of the repair list (diagnosis.suspects[])
// at `fault_confidence` or more whose traffic ran at `fault_max_share` or less of its plan fails
// acceptance, naming the part, whatever the nodes' rates. A simulation locates nothing: not measured.
// "cabling": the scan's cables against the plan the expectation names (docs/cabling.md).
void check_cabling_plan(const Expectation& expect, const std::vector<fabric::Cable>& plan, const fabric::Fabric& f,
                        Checks& out);

void check_faults(const Expectation& expect, const nlohmann::json& diagnosis, bool simulated, Checks& out);

}  // namespace ibroute::workflow
