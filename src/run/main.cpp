// ibroute-run: `ibroute run` replaces itself with this executable (same arguments, same PID), the
// only one that links MPI and libibverbs.
#include "dispatch.hpp"
#include "run_options.hpp"

namespace ibroute::cli {
namespace {
Runner setup_run_here(CLI::App& app) { return setup_run_options(app, execute_run); }
}  // namespace
}  // namespace ibroute::cli

int main(int argc, char** argv) {
  using namespace ibroute::cli;
  return run_commands(argc, argv, {setup_run_here}, false);
}
