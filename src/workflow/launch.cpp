#include "launch.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace ibroute::workflow {

std::string own_executable() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw std::runtime_error("cannot find the ibroute executable (/proc/self/exe)");
  self[n] = 0;
  return self;
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

int run_shell(const std::string& command) {
  const int rc = std::system(command.c_str());
  if (rc == -1) return -1;
  if (WIFSIGNALED(rc)) return 128 + WTERMSIG(rc);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : rc;
}

}  // namespace ibroute::workflow
