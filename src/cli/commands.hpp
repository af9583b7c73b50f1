// One subcommand per file: an options struct, setup_<name>() that binds it to CLI11, and
// run_<name>() that runs after parsing and returns the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace ibroute::cli {

using Runner = std::function<int()>;

Runner setup_scan(CLI::App& app);
Runner setup_scans(CLI::App& app);
Runner setup_schedules(CLI::App& app);
Runner setup_routes(CLI::App& app);
Runner setup_diff(CLI::App& app);
Runner setup_topo(CLI::App& app);
Runner setup_analyze(CLI::App& app);
Runner setup_plan(CLI::App& app);
Runner setup_export(CLI::App& app);
Runner setup_validate(CLI::App& app);
Runner setup_run(CLI::App& app);
Runner setup_accept(CLI::App& app);
Runner setup_migrate(CLI::App& app);
Runner setup_routing(CLI::App& app);
Runner setup_counters(CLI::App& app);
Runner setup_watch(CLI::App& app);
Runner setup_exporter(CLI::App& app);

}  // namespace ibroute::cli
