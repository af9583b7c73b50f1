// The command line of both executables: subcommands registered, parsed, run, every error one line
// on stderr with its exit code.
#include "dispatch.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/node_names.hpp"
#include "man_pages.hpp"
#include "sqlite.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

namespace {

// The closest of `names` to `word` (fabric::nearest_names, the one did-you-mean), else "".
std::string closest(std::string_view word, const std::vector<std::string>& names) {
  const std::vector<std::string> near = ibroute::fabric::nearest_names(word, names, 1);
  return near.empty() ? "" : near[0];
}

// A hint for a mistyped command or option: the subcommand or option it was probably meant to be.
std::string did_you_mean(CLI::App& app, int argc, char** argv) {
  if (argc < 2) return "";
  const std::string_view first = argv[1];
  std::vector<std::string> commands;
  CLI::App* sub = nullptr;
  for (CLI::App* c : app.get_subcommands({})) {
    commands.push_back(c->get_name());
    if (c->get_name() == first) sub = c;
  }
  if (!first.starts_with("-") && !sub) {
    const std::string guess = closest(first, commands);
    return "; unknown command '" + std::string(first.substr(0, 40)) + "'" +
           (guess.empty() ? "" : " (did you mean '" + guess + "'?)");
  }
  if (!sub) return "";
  std::vector<std::string> options;
  for (const CLI::Option* o : sub->get_options())
    for (const std::string& n : o->get_lnames()) options.push_back("--" + n);
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = std::string_view(argv[i]).substr(0, std::string_view(argv[i]).find('='));
    if (!arg.starts_with("--") || std::find(options.begin(), options.end(), arg) != options.end()) continue;
    const std::string guess = closest(arg, options);
    if (!guess.empty()) return "; did you mean '" + guess + "' for '" + std::string(arg.substr(0, 40)) + "'?";
  }
  return "";
}

}  // namespace

namespace {

// Parses and runs; errors to their exit codes (main's whole job).
int parse_and_run(CLI::App& app, const Runner& run, int argc, char** argv) {
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
    std::cerr << "ibroute: " + std::string(e.what()) + did_you_mean(app, argc, argv) + " (see --help)\n";
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

}  // namespace

int run_commands(int argc, char** argv, std::initializer_list<Setup> setups, bool build_tools) {
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
  remember_argv(argv);
  for (Setup setup : setups) {
    // Each setup registers one subcommand; the last one added is the one it returned.
    Runner r = setup(app);
    app.get_subcommands({}).back()->callback([&run, r] { run = r; });
    append_examples(*app.get_subcommands({}).back());
  }
  // At build time (src/CMakeLists.txt): the man pages and the completion, from the options above.
  if (build_tools && argc == 3 && std::string_view(argv[1]) == "--write-man-pages") {
    write_man_pages(app, argv[2], IBROUTE_VERSION);
    return 0;
  }
  if (build_tools && argc == 3 && std::string_view(argv[1]) == "--write-bash-completion") {
    std::ofstream f(argv[2]);
    return (f << bash_completion(app)) ? 0 : kExitFailure;
  }
  return parse_and_run(app, run, argc, argv);
}

}  // namespace ibroute::cli
