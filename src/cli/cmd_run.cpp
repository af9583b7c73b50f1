// ibroute run: the options. The execution is in src/run/run_execute.cpp (executable ibroute-run).
#include "commands.hpp"
#include "options.hpp"
#include "run_options.hpp"

namespace ibroute::cli {

namespace {

// The rate search, the per-rank outputs, the device, and the options only tests use.
void add_search_trace_and_test_options(CLI::App* c, RunOptions& r) {
  RunOptions* o = &r;
  c->add_flag("--find-rate", o->find_rate,
              "search the highest rate per node whose skipped share stays within --max-skipped: short runs (steps),\n"
              "doubling from --rate while it holds, then bisecting; reports each step and the answer");
  c->add_option("--max-skipped", o->max_skipped, "--find-rate: the skipped share a rate may have and still hold (0..1)")
      ->capture_default_str()
      ->check(decimal_in(0, 1));
  c->add_option("--find-rate-steps", o->find_rate_steps, "--find-rate: at most this many steps")->capture_default_str();
  c->add_option("--step-duration", o->step_s, "--find-rate: seconds of sending per step")
      ->capture_default_str()
      ->check(decimal_in(0.001, 3600));
  c->add_option(
      "--trace", o->trace_dir,
      "directory (on each node) where every rank writes each of its transfers to trace-RANK.csv (docs/run-report.md)");
  c->add_option("--device", o->device, "RDMA device (default: the first with an active port)");
  c->add_option("--port", o->port, "device port (default: the first active)");
  c->add_option("--gid-index", o->gid_index, "GID index on RoCE (default: the IPv4-mapped GID)");
  c->add_flag("--no-verify", o->no_verify, "do not check the received bytes");
  c->add_flag("--no-store", o->no_store, "do not store the run in --db");
  c->add_option("-o,--output", o->output, "write the full report (JSON) to this file");
  c->add_option("--svg", o->svg, "draw the fabric coloured by transfers per link (needs --db)");
  c->add_flag("--json", o->json, "print the report as JSON instead of the text summary");
  c->add_option("--test-clock-skew-us", o->test_skew_us, "tests: artificial clock offset per MPI rank, comma-separated")
      ->group("");
  c->add_option("--test-clock-ppm", o->test_ppm,
                "tests: artificial clock rate error per MPI rank (ppm), comma-separated")
      ->group("");
  c->add_option("--test-stall-rank", o->test_stall_rank, "tests: this MPI rank takes no receives")->group("");
  c->add_option("--test-die-rank", o->test_die_rank, "tests: this MPI rank kills itself")->group("");
  c->add_option("--test-die-at", o->test_die_at, "tests: ... at its k-th send")->group("");
  c->add_option("--test-bad-rkey-rank", o->test_bad_rkey_rank, "tests: this MPI rank writes with a wrong remote key")
      ->group("");
}

}  // namespace

std::function<int()> setup_run_options(CLI::App& app, int (*execute)(const RunOptions&)) {
  auto o = std::make_shared<RunOptions>();
  auto* c = add_command(app, "run");
  c->add_option("--db", o->db,
                "fabric database: the schedule, the routes for per-link figures, and where the run is stored");
  c->add_option("--schedule", o->schedule, "schedule name or id in --db");
  c->add_option("--schedule-file", o->schedule_file, "schedule file (ibroute export --format json)");
  c->add_option(
      "--follow", o->follow,
      "an epochs directory (ibroute watch --export DIR): start on its current epoch and switch to each newer one at a "
      "round rank 0 names, every rank at the same round; transfers of hosts gone are left out. Connects every path "
      "an epoch may choose (2^LMC per pair). A rank silent for --dead-after is dropped and the others run on "
      "(docs/epochs.md)");
  c->add_option("--dead-after", o->dead_after_s,
                "with --follow: seconds of silence after which a rank is dropped as dead")
      ->capture_default_str()
      ->check(decimal_in(0.5, 3600.0));
  c->add_option("--scan", o->scan, "scan whose routes give per-link figures (default: the schedule's, or the newest)");
  c->add_option("--placement", o->placement,
                "file: one host per line, line i = MPI rank i; a host as --hosts names it (hostname, node description, "
                "host/HCA-2, "
                "node or port GUID, LID) (default: by local port GUID)");
  c->add_option("--rate", o->rate,
                "per-node rate: 5G or 5GB/s (bytes), 5GiB/s, or 40Gb/s (bits); default: the schedule's");
  c->add_option("--message-size", o->message_size, "bytes per transfer (default: the schedule's); e.g. 1M");
  c->add_option("--rounds", o->rounds, "times the schedule is repeated (default 1)");
  c->add_option("--duration", o->duration, "seconds to run instead of --rounds")->check(decimal_in(0, 1e7));
  c->add_option(
       "--sl", o->sl,
       "service level of every queue pair (0..15): on a fabric with adaptive routing, the SL whose traffic follows the "
       "LFTs (docs/adaptive-routing.md)")
      ->capture_default_str()
      ->check(CLI::Range(0, 15));
  c->add_option(
       "--transport", o->transport,
       "rc: reliable writes (acknowledged; a stalled receiver or link makes them hang, and the skip rule skips); "
       "uc: unreliable writes (never hang; what the receiver did not take is counted as lost, per path). "
       "docs/transport.md")
      ->capture_default_str()
      ->check(CLI::IsMember({"rc", "uc"}));
  c->add_option(
       "--counters", o->counters,
       "rank 0 reads every port's performance counters before and after the run (as ibroute counters does; "
       "needs --db and MAD access on rank 0's node) and reports per link the bytes measured against those "
       "the run sent there: auto (on InfiniBand, and said why not otherwise), on (a failure to read is an error), off")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "on", "off"}));
  c->add_option("--xmit-wait-tick", o->xmit_wait_tick_ns,
                "nanoseconds per PortXmitWait tick of the switches: the counters' waits as a share of the run's time "
                "(links_measured; accept passes its expectation's xmit_wait_tick_ns)")
      ->check(decimal_in(0.0, 1e9));
  c->add_option("--skip-after", o->skip_after, "unfinished transfers to one destination before the next is skipped")
      ->capture_default_str();
  c->add_option("--drain", o->drain_s, "seconds to wait for completions after the last start")
      ->capture_default_str()
      ->check(decimal_in(0, 3600));
  c->add_option("--finish-timeout", o->finish_timeout_s,
                "seconds rank 0 waits for every rank's end before naming it missing")
      ->capture_default_str()
      ->check(decimal_in(0, 86400));
  c->add_option("--sync-samples", o->sync_samples, "clock round trips per rank before and after the run")
      ->capture_default_str();
  c->add_option("--resync", o->resync_s,
                "seconds between each rank's clock re-measurements during the run (0: never; clocks drift 10-50 ppm)")
      ->capture_default_str()
      ->check(decimal_in(0, 86400));
  c->add_option("--resync-samples", o->resync_samples, "round trips per re-measurement")->capture_default_str();
  c->add_option("--progress", o->progress_s, "seconds between rank 0's progress lines on stderr (0: none)")
      ->capture_default_str()
      ->check(decimal_in(0, 86400));
  c->add_option("--max-anomalies", o->max_anomalies,
                "transfers kept one by one per rank (skipped, failed, late, corrupt); the rest are counted")
      ->capture_default_str();
  c->add_option("--late-threshold", o->late_threshold,
                "a post this late is an anomaly, e.g. 500us (default: one slot)");
  add_search_trace_and_test_options(c, *o);
  return [o, execute] { return execute(*o); };
}

}  // namespace ibroute::cli
