// What main() of `ibroute` and of `ibroute-run` share: the subcommands they offer, parsed and run.
#pragma once

#include <CLI/CLI.hpp>
#include <initializer_list>

#include "commands.hpp"

namespace ibroute::cli {

using Setup = Runner (*)(CLI::App&);

// Registers `setups` (each one subcommand), parses the command line and runs the one named.
// Returns the exit code. `build_tools`: also --write-man-pages DIR and --write-bash-completion FILE.
int run_commands(int argc, char** argv, std::initializer_list<Setup> setups, bool build_tools);

}  // namespace ibroute::cli
