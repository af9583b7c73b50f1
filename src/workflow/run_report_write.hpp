// The report of a run, as JSON (stored in the database, written with --output) and as text: the
// writing side of the schema that run_report_read.hpp reads back (tests/unit/run_report_test.cpp
// round-trips them).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "fabric_context.hpp"
#include "ibroute/runner/run_outcome.hpp"
#include "ibroute/runner/run_report.hpp"
#include "run_facts.hpp"

namespace ibroute::workflow {

struct RunJsonContext {
  const schedule::Schedule& schedule;
  uint64_t message_size;
  int64_t slot_ns;
  uint32_t rounds, skip_after;
  int service_level;
  const runner::RunOutcome& outcome;
  const runner::RunSummary& summary;
  const FabricContext* fabric;  // null: no per-link figures
  int64_t resync_interval_ns = 0;
  double max_skipped_share = 0;  // of a rate search
  bool unreliable = false;       // data over UC (--transport uc)
  double slot_per_message = 1;   // RunConfig's: the planned per-node rate is slot_per_message x message_size / slot
  // A failed completion's status by name (the verbs data plane's; null: the number).
  const char* (*status_name)(int) = nullptr;
};

// Paths listed one by one: all of them up to this many, else only those with a problem.
inline constexpr size_t kAllPathsUpTo = 4096;
// The per-pair rate matrix is included up to this many ranks (4 MB of JSON at 864 ranks).
inline constexpr size_t kPairMatrixUpTo = 2048;

nlohmann::json run_report_json(const RunJsonContext& c);
// The links whose transfers were skipped or failed, worst first (the report's suspect_links).
std::vector<BadLink> bad_links(const RunJsonContext& c);
// Gb/s of each pair (row: sender) while its transfers were on the wire — bytes over the sum of
// their times; -1 where none completed. At any size (the diagnosis reads it), though the report
// lists it only up to kPairMatrixUpTo ranks.
std::vector<float> pair_gbps_of(const runner::RunOutcome& outcome, size_t ranks);
void print_run_summary(const RunJsonContext& c, std::ostream& out);

}  // namespace ibroute::workflow
