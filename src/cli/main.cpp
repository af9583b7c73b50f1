// ibroute: routes, schedules and acceptance tests for InfiniBand fabrics.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <string_view>

#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/error.hpp"
#include "man_pages.hpp"
#include "sqlite.hpp"

int main(int argc, char** argv) {
  using namespace ibroute::cli;
  CLI::App app{
      "ibroute - every route of an InfiniBand fabric, cached in SQLite.\n"
      "(Not the infiniband-diags tool /usr/sbin/ibroute, which dumps one switch's table.)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ibroute " IBROUTE_VERSION);
  app.footer(
      "Exit codes: 0 ok; 1 failure (fabric, system); 2 bad input (option, file, database, node);\n"
      "3 scan stored but incomplete (unanswered MADs).\n"
      "Database: docs/database.md. Run 'ibroute COMMAND --help' for a command's options.");
  Runner run;
  auto pick = [&](Runner r) { return [&run, r] { run = r; }; };
  remember_argv(argv);
#ifdef IBROUTE_RUN_HELPER
  // ibroute-run: `ibroute run` replaced itself with this, same arguments.
  for (auto setup : {setup_run}) {
#else
  for (auto setup : {setup_scan, setup_scans, setup_routes, setup_diff, setup_topo, setup_analyze, setup_plan, setup_export,
                     setup_validate, setup_run, setup_accept, setup_routing, setup_migrate}) {
#endif
    // Each setup registers one subcommand; the last one added is the one it returned.
    Runner r = setup(app);
    app.get_subcommands({}).back()->callback(pick(r));
    append_examples(*app.get_subcommands({}).back());
  }
#ifndef IBROUTE_RUN_HELPER
  // At build time (src/CMakeLists.txt): the man pages and the completion, from the options above.
  if (argc == 3 && std::string_view(argv[1]) == "--write-man-pages") {
    write_man_pages(app, argv[2], IBROUTE_VERSION);
    return 0;
  }
  if (argc == 3 && std::string_view(argv[1]) == "--write-bash-completion") {
    std::ofstream f(argv[2]);
    return (f << bash_completion(app)) ? 0 : kExitFailure;
  }
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "ibroute: " + std::string(e.what()) + " (see --help)\n";
    return kExitBadInput;
  }
  try {
    return run();
  } catch (const ibroute::InputError& e) {
    std::cerr << "ibroute: " + std::string(e.what()) + "\n";  // one write: ranks of a run share stderr
    return kExitBadInput;
  } catch (const ibroute::store::SqliteError& e) {
    std::cerr << "ibroute: " + std::string(e.what()) + "\n";
    return e.code() == SQLITE_NOTADB ? kExitBadInput : kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "ibroute: " + std::string(e.what()) + "\n";
    return kExitFailure;
  }
}
