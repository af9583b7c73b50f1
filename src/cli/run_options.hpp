// `ibroute run`: its options (parsed by `ibroute`) and its execution, which lives in the sibling
// executable `ibroute-run`: only that one links MPI, whose libraries would cost every other
// command (a route query is a whole process) several milliseconds of loading.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace ibroute::cli {

struct RunOptions {
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

// Registers `run` and its options; the callback calls `execute`.
std::function<int()> setup_run_options(CLI::App& app, int (*execute)(const RunOptions&));

// In `ibroute` (run_exec.cpp): replaces the process with `ibroute-run` (same arguments, same PID:
// launchers and MPI see no difference).
int exec_run_helper(const RunOptions& o);
// In `ibroute-run` (src/run/run_execute.cpp): the run itself.
int execute_run(const RunOptions& o);

}  // namespace ibroute::cli
