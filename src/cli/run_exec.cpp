// `ibroute run` in the ibroute executable: becomes ibroute-run, which links MPI and verbs.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common.hpp"
#include "commands.hpp"
#include "run_options.hpp"

namespace ibroute::cli {

int exec_run_helper(const RunOptions&) {
  const std::string dir = own_directory();
  for (const std::string& helper : {dir + "/ibroute-run", dir + "/../libexec/ibroute/ibroute-run"}) {
    if (access(helper.c_str(), X_OK) != 0) continue;
    execv(helper.c_str(), remembered_argv());
    throw std::runtime_error("cannot start " + helper + ": " + std::strerror(errno));
  }
  throw std::runtime_error("ibroute-run is not installed beside " + dir + "/ibroute (it runs `ibroute run`)");
}

Runner setup_run(CLI::App& app) { return setup_run_options(app, exec_run_helper); }

}  // namespace ibroute::cli
