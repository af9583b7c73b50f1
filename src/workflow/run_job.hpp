// One rank's part of `ibroute run` around the verbs runner: its inputs (the schedule from the
// database, a file or an epochs directory; the hosts' identities; a placement), the run's
// settings (RunConfig) from the request and the schedule's timing, the ports' counters before,
// and on rank 0 the report afterwards (stored, written, drawn). The MPI world and the verbs data
// plane stay with the executable (src/run): this class is tested without either.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "fabric_context.hpp"
#include "fabric_store.hpp"
#include "ibroute/fabric/counters.hpp"
#include "ibroute/runner/run_config.hpp"
#include "ibroute/runner/run_outcome.hpp"
#include "ibroute/runner/run_report.hpp"
#include "ibroute/schedule/format.hpp"

namespace ibroute::workflow {

// What `ibroute run` is asked, as values: the command line binds its options to these fields
// (src/cli/cmd_run.cpp), a test sets them.
struct RunRequest {
  std::string db;
  std::string schedule;
  std::string schedule_file;
  std::string follow;       // an epochs directory (ibroute watch --export; docs/epochs.md)
  double dead_after_s = 5;  // --follow: a rank silent this long is dropped
  std::optional<int64_t> scan;
  std::string placement;
  std::string rate, message_size;
  uint32_t rounds = 0;
  double duration = 0;
  uint32_t skip_after = 2;
  int sl = 0;
  std::string transport = "rc";   // rc | uc
  std::string counters = "auto";  // auto | on | off: rank 0 reads the ports' counters around the run
  double xmit_wait_tick_ns = 0;   // the switches' PortXmitWait tick: waits as a share of the run's time
  double drain_s = 2, finish_timeout_s = 60;
  int sync_samples = 200;
  std::string device;
  int port = 0, gid_index = -1;
  bool no_verify = false, no_store = false, json = false;
  std::string output, svg;
  double resync_s = 1, progress_s = 5;
  int resync_samples = 16;
  size_t max_anomalies = 1000;
  std::string late_threshold;  // e.g. 500us; "" = one slot
  std::string trace_dir;
  bool find_rate = false;
  double max_skipped = 0, step_s = 2;
  int find_rate_steps = 10;
  // tests only
  std::string test_skew_us, test_ppm;
  int test_stall_rank = -1, test_die_rank = -1, test_bad_rkey_rank = -1;
  uint32_t test_die_at = 0;
};

// What the run learns of this host's own RDMA port, from the verbs adapter: asked only where the
// request needs it (a following rank without --placement; rank 0 reading counters with auto).
struct LocalPort {
  uint64_t port_guid = 0;
  bool ethernet = false;  // RoCE: no subnet whose counters MADs could read
};
struct RunHooks {
  std::function<LocalPort()> local_port;      // throws where the port cannot be opened
  const char* (*status_name)(int) = nullptr;  // a completion status as the report names it
};

// Rank 0's ending: the report as stored and written, its text, and how the run went.
struct RunEnding {
  nlohmann::json report;
  std::string text;            // the summary and the diagnosis, as printed without --json
  runner::RunSummary summary;  // per link too, for the executable's picture (--svg)
  bool clean = false;          // every planned transfer arrived whole, every rank answered
};

class RunJob {
 public:
  // Reads rank `rank`'s inputs of a world of `world` ranks and the run's settings; rank 0 also
  // takes the counters' first reading. Throws InputError on any bad input.
  RunJob(RunRequest request, int world, int rank, RunHooks hooks);
  ~RunJob();
  RunJob(const RunJob&) = delete;
  RunJob& operator=(const RunJob&) = delete;

  const schedule::Schedule& schedule() const { return doc_.schedule; }
  const runner::RunConfig& config() const { return cfg_; }
  runner::RankMapping mapping() const;
  const std::string& warning() const { return warning_; }        // a scan with missing parts, said once
  const FabricContext* fabric() const { return fabric_.get(); }  // the scan of --db, if given

  // Rank 0 after the run: the report (stored unless no_store, written to `output`; the executable
  // draws `svg`, Graphviz being an adapter the workflow does not link).
  RunEnding finish(const runner::RunOutcome& out);

 private:
  void load_inputs(int world, int rank);
  void read_placement(int world);
  runner::OwnEpoch read_first_slice(int rank);
  void store_run(const runner::RunSummary& sum, const runner::RunOutcome& out, nlohmann::json& report);
  void read_counters_before();

  RunRequest req_;
  RunHooks hooks_;
  schedule::ScheduleDoc doc_;
  std::optional<int64_t> schedule_id_;
  std::unique_ptr<store::FabricStore> store_;
  std::unique_ptr<FabricContext> fabric_;  // the scan the routes come from
  std::vector<int32_t> placement_;
  runner::RunConfig cfg_;
  std::optional<fabric::CounterSnapshot> counters_before_;
  std::string counters_why_;
  std::string warning_;
};

// The run's settings from a request and the schedule's timing (`round_slots`: slots a round);
// throws InputError naming the option.
runner::RunConfig run_config(const RunRequest& r, const schedule::Schedule& s, uint64_t round_slots);

}  // namespace ibroute::workflow
