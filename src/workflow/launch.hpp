// Starting ibroute again: `ibroute scan` before an acceptance test, `ibroute run` under a launcher
// (srun, mpirun), `ibroute watch`'s reader. The command is a shell line: every argument quoted.
#pragma once

#include <string>

namespace ibroute::workflow {

// This executable's path (/proc/self/exe). std::runtime_error where it cannot be read.
std::string own_executable();

// `s` as one shell word: 'it'\''s'.
std::string shell_quoted(const std::string& s);

// Runs `command` through the shell (its output to stderr is the caller's: append 1>&2); returns
// its exit status (128 + signal where one ended it, -1 where the shell could not be started).
int run_shell(const std::string& command);

}  // namespace ibroute::workflow
