// SVG rendering through Graphviz's own library, in a child process. libgvc 2.43 can abort inside
// its layout code (a double free in gvFreeLayout on graphs with parallel edges, seen on an
// ordinary 8-switch fabric): a picture must never take the command down with it, so the layout
// runs in a fork whose crash becomes an error message.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include "ibroute/fabric/dot.hpp"

namespace ibroute::fabric {

namespace {

// In the child: lay out, render, write everything to fd. Nothing is freed: the process ends.
[[noreturn]] void render_child(const std::string& dot, int fd) {
  GVC_t* gvc = gvContext();
  Agraph_t* g = gvc ? agmemread(dot.c_str()) : nullptr;
  if (!g) _exit(2);
  if (gvLayout(gvc, g, "dot") != 0) _exit(3);
  char* data = nullptr;
  unsigned int len = 0;
  if (gvRenderData(gvc, g, "svg", &data, &len) != 0 || !data) _exit(4);
  for (unsigned int off = 0; off < len;) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(5);
    off += static_cast<unsigned int>(w);
  }
  _exit(0);
}

}  // namespace

std::string render_svg(const std::string& dot) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("graphviz: pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    throw std::runtime_error(std::string("graphviz: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    render_child(dot, fds[1]);
  }
  close(fds[1]);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    throw std::runtime_error("graphviz: the layout crashed (signal " + std::to_string(WTERMSIG(status)) +
                             "); the DOT text (--format dot) can be drawn with another Graphviz");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.empty())
    throw std::runtime_error("graphviz: layout or SVG rendering failed (step " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  return out;
}

}  // namespace ibroute::fabric
