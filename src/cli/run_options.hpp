// `ibroute run`: its options (parsed by `ibroute`) and its execution, which lives in the sibling
// executable `ibroute-run`: only that one links MPI, whose libraries would cost every other
// command (a route query is a whole process) several milliseconds of loading.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "run_job.hpp"

namespace ibroute::cli {

// The options are the workflow's request (run_job.hpp): bound here, read there.
using RunOptions = workflow::RunRequest;

// Registers `run` and its options; the callback calls `execute`.
std::function<int()> setup_run_options(CLI::App& app, int (*execute)(const RunOptions&));

// In `ibroute` (run_exec.cpp): replaces the process with `ibroute-run` (same arguments, same PID:
// launchers and MPI see no difference).
int exec_run_helper(const RunOptions& o);
// In `ibroute-run` (src/run/run_execute.cpp): the run itself.
int execute_run(const RunOptions& o);

}  // namespace ibroute::cli
