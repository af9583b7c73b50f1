// ibroute: routes, schedules and acceptance tests for InfiniBand fabrics.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/error.hpp"
#include "man_pages.hpp"
#include "sqlite.hpp"

namespace {

// Edits (insert, delete, replace, swap of neighbours) from a to b: what a typo costs.
size_t edits(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The closest of `names` to `word` within a third of its length (or a prefix of one), else "".
std::string closest(std::string_view word, const std::vector<std::string>& names) {
  std::string best;
  size_t low = std::max<size_t>(1, word.size() / 3) + 1;
  for (const std::string& n : names) {
    const size_t e = n.starts_with(word) && word.size() >= 3 ? 0 : edits(word, n);
    if (e < low) low = e, best = n;
  }
  return best;
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
    return "; unknown command '" + std::string(first.substr(0, 40)) + "'" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)");
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
  for (auto setup : {setup_scan, setup_scans, setup_schedules, setup_routes, setup_diff, setup_topo, setup_analyze, setup_plan, setup_export,
                     setup_validate, setup_run, setup_accept, setup_routing, setup_counters, setup_migrate}) {
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
