// ibroute-exporter: `ibroute exporter` replaces itself with this executable (same arguments, same
// PID), the only one that links the HTTP library.
#include "dispatch.hpp"
#include "exporter_options.hpp"

namespace ibroute::cli {
namespace {
Runner setup_exporter_here(CLI::App& app) { return setup_exporter_options(app, serve_exporter); }
}  // namespace
}  // namespace ibroute::cli

int main(int argc, char** argv) {
  using namespace ibroute::cli;
  return run_commands(argc, argv, {setup_exporter_here}, false);
}
