// `ibroute run` and `ibroute exporter` in the ibroute executable: become ibroute-run (MPI and verbs)
// and ibroute-exporter (the HTTP library).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "commands.hpp"
#include "common.hpp"
#include "exporter_options.hpp"
#include "launch.hpp"
#include "run_options.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

namespace {

// Replaces this process by the sibling executable `name` with the same arguments (same PID).
int exec_helper(const std::string& name, const std::string& command) {
  const std::string dir = own_directory();
  for (const std::string& helper : {dir + "/" + name, dir + "/../libexec/ibroute/" + name}) {
    if (access(helper.c_str(), X_OK) != 0) continue;
    setenv("IBROUTE_EXECUTABLE", workflow::own_executable().c_str(), 1);  // the helper may start ibroute again
    execv(helper.c_str(), remembered_argv());
    throw std::runtime_error("cannot start " + helper + ": " + std::strerror(errno));
  }
  throw std::runtime_error(name + " is not installed beside " + dir + "/ibroute (it runs `ibroute " + command + "`)");
}

}  // namespace

int exec_run_helper(const RunOptions&) { return exec_helper("ibroute-run", "run"); }

Runner setup_run(CLI::App& app) { return setup_run_options(app, exec_run_helper); }
Runner setup_exporter(CLI::App& app) {
  return setup_exporter_options(app,
                                [](const ExporterOptions&) { return exec_helper("ibroute-exporter", "exporter"); });
}

}  // namespace ibroute::cli
