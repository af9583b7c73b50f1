// ibroute: routes, schedules and acceptance tests for InfiniBand fabrics.
#include "dispatch.hpp"

int main(int argc, char** argv) {
  using namespace ibroute::cli;
  return run_commands(argc, argv,
                      {setup_scan, setup_scans, setup_schedules, setup_routes, setup_diff, setup_topo, setup_analyze,
                       setup_plan, setup_export, setup_validate, setup_run, setup_accept, setup_routing, setup_counters,
                       setup_exporter, setup_watch, setup_migrate},
                      true);
}
