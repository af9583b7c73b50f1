#include "watch_read.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace ibroute::workflow {

using nlohmann::json;

namespace {

// Reads up to the first newline (`line` true) or to the end, or until more than `max_bytes`
// came; EINTR retried.
std::string read_from(int fd, bool line, size_t max_bytes = SIZE_MAX) {
  std::string text;
  char c[65536];
  while (text.size() <= max_bytes) {
    // A line is read a byte at a time: nothing after it may be taken from the pipe.
    const ssize_t n = read(fd, c, line ? 1 : sizeof c);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(c, static_cast<size_t>(n));
    if (line && c[0] == '\n') break;
  }
  return text;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

json parsed(const std::string& text, int status, bool ended) {
  const json r = json::parse(text, nullptr, false);
  if (!r.is_discarded() && r.is_object()) return r;
  std::string how = "still running";
  if (ended)
    how = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                              : "exit " + std::to_string(WEXITSTATUS(status));
  return {{"event", "scan_failed"}, {"error", "the read ended without an answer (" + how + ")"}};
}

// Starts `args` (argv[0] the executable) with its standard output on out[1] and, where given, its
// standard input on in[0]; the child's ends are closed here, and every end when it cannot start.
pid_t spawn(const std::vector<std::string>& args, int out[2], int in[2]) {
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  for (std::string& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  if (in) posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (in) close(in[0]);
  if (err) {
    close(out[0]);
    if (in) close(in[1]);
    throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(err));
  }
  return pid;
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

ReadAnswer start_read(const std::vector<std::string>& args) {
  // Close-on-exec: a later read must not hold this one's pipes open (its end of file would never come).
  int out[2], in[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(in, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t pid = spawn(args, out, in);
  ReadAnswer r;
  const std::string line = read_from(out[0], true);
  const json first = json::parse(line, nullptr, false);
  if (!first.is_discarded() && first.is_object() && first.value("routes_pending", false) && first.contains("scan_id")) {
    r.first = first, r.paused = true;
    r.read = {pid, in[1], out[0], first["scan_id"].is_number_integer() ? first["scan_id"].get<int64_t>() : 0};
    return r;
  }
  close(in[1]);  // nothing to say to it
  const std::string rest = read_from(out[0], false);
  close(out[0]);
  const int status = wait_for(pid);
  r.first = parsed(line.empty() ? rest : line, status, true);
  return r;
}

ChildOutput run_to_end(const std::vector<std::string>& args, size_t max_bytes) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = spawn(args, out, nullptr);
  ChildOutput r;
  r.out = read_from(out[0], false, max_bytes);
  if (r.out.size() > max_bytes) kill(pid, SIGKILL);
  close(out[0]);
  r.status = wait_for(pid);
  return r;
}

json settle_read(PausedRead& p, bool store) {
  if (p.pid < 0) return {{"event", "scan_failed"}, {"error", "no read"}};
  const std::string word = store ? "store\n" : "quit\n";
  for (size_t done = 0; done < word.size();) {
    const ssize_t n = write(p.to_child, word.data() + done, word.size() - done);
    if (n > 0)
      done += static_cast<size_t>(n);
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break;  // it has gone: its end is read below
  }
  close_fd(p.to_child);
  const std::string text = read_from(p.from_child, false);
  close_fd(p.from_child);
  const int status = wait_for(p.pid);
  p.pid = -1;
  return parsed(text, status, true);
}

}  // namespace ibroute::workflow
