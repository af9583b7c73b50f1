// The read process of `ibroute watch` (watch.hpp): each read of the fabric runs in a fresh process (this
// executable, `watch --read-once`), which answers with one JSON line. libibumad keeps a process's
// agents registered (umad2sim refuses a second registration in one process, and a forked child
// shares its parent's connection), and weeks of reads must not pile up what a read leaves behind.
//
// A read that stored a changed scan's tables but not yet its routes (a minute of writing at
// 10 000 hosts) answers "routes_pending" and waits, paused, for one line on its standard input:
// "store" (store them, answer a second line) or "quit". The watch plans and publishes the epoch
// first and lets the routes be written afterwards.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ibroute::workflow {

struct PausedRead {
  pid_t pid = -1;
  int to_child = -1, from_child = -1;
  int64_t scan_id = 0;
};

struct ReadAnswer {
  nlohmann::json first;  // the read's answer ("event": ...); a read that ended without one: scan_failed
  bool paused = false;   // the process waits in `read` (its routes to store)
  PausedRead read;
};

// Starts `args` (argv[0] the executable) and returns its first line; a process that is not paused
// has ended when this returns.
ReadAnswer start_read(const std::vector<std::string>& args);

// Starts `args` (argv[0] the executable), reads its standard output to the end and waits for it:
// `ibroute exporter`'s reads (`counters --format prometheus`), a fresh process each for the same
// reason. `status` as waitpid gives it; the output is cut at `max_bytes` (the child is then killed).
struct ChildOutput {
  int status = 0;
  std::string out;
};
ChildOutput run_to_end(const std::vector<std::string>& args, size_t max_bytes);

// Tells a paused read to store its routes (or to quit), waits for it to end and returns its last
// line (its "routes" answer; scan_failed when it ended without one).
nlohmann::json settle_read(PausedRead& p, bool store);

}  // namespace ibroute::workflow
