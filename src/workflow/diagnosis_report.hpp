// The acceptance test's repair list: suspects from every piece of evidence — the run's pairs read
// like a tomography over their known paths (schedule/diagnosis.hpp), the scan's links that are
// down, narrow, slow or missing against the structure, the ports whose error counters rose —
// joined on the fabric's own parts and ranked, each with its evidence in numbers, a confidence
// and what a technician does about it. JSON: `diagnosis.suspects[]` (docs/acceptance.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabric_context.hpp"
#include "ibroute/schedule/diagnosis.hpp"
#include "ibroute/schedule/schedule.hpp"
#include "run_facts.hpp"
#include "run_report_read.hpp"
#include "scan_changes.hpp"

namespace ibroute::workflow {

// A port whose error counters rose over the run's window, as counter_window names it.
struct DiagnosisInput {
  const schedule::Schedule* plan = nullptr;  // the schedule the run (or simulation) played
  std::vector<float> pair_gbps;  // measured per pair, n x n (moved in: the diagnosis works on it in place); empty: none
  std::optional<schedule::RunDiagnosis> run;  // without pair_gbps: the run's own diagnosis of its pairs, read back
  // A simulation's pairs are not read: max-min fair sharing over the plan's own paths gives every
  // pair at least its planned rate, so they could name no link (and 10^8 of them cost seconds).
  bool simulated = false;
  std::vector<ErrorPort> errors;
  const ScanChanges* changes = nullptr;  // hosts and cables the scan before had and this one lacks
  std::vector<BadLink> bad;              // links with skipped or failed transfers
  std::vector<double> node_send_gbps;    // per rank what it sent over its sending time; empty: unknown
};

// {"suspects": [...], "evidence": {...}}: suspects most likely first.
// A run report's own diagnosis of its pairs (read where it has no pair matrix), its links found
// by name in this scan; a name the scan lacks is an InputError naming `source` and the value.
schedule::RunDiagnosis run_diagnosis_of(const FabricContext& c, const RunReportInput::RunDiagnosisRead& r,
                                        const std::string& source);

// JSON `evidence.run.suspects[]` keeps the run's part (link by name) so that a report without the
// pair matrix (above 2048 ranks) still carries it to accept (run_report_read.hpp).
nlohmann::json diagnosis_json(const FabricContext& c, DiagnosisInput in);

// The terminal lines of the list (the first `most`).
std::string diagnosis_text(const nlohmann::json& diagnosis, size_t most = 5);

}  // namespace ibroute::workflow
