// ibroute watch: the options, signals and output of the watch (src/workflow/watch.hpp), which keeps
// the scan current and publishes an epoch for peers on every change of the fabric (docs/epochs.md).
#include <csignal>
#include <iostream>
#include <mutex>

#include "commands.hpp"
#include "common.hpp"
#include "options.hpp"
#include "watch.hpp"

namespace ibroute::cli {

using nlohmann::json;

namespace {

struct WatchOptions {
  workflow::WatchConfig config{.db = kDefaultDb};
  int scans = 0;           // stop after this many reads (0: until stopped)
  int64_t read_once = -1;  // >= 0: one read, compared with this scan (0: the newest), for the watch that started it
  bool json = false;
};

volatile std::sig_atomic_t stop_signal = 0;
void on_signal(int sig) { stop_signal = sig; }

// One event: a line for people, or one JSON object per line for scripts. Said from the reading
// thread and the planning one: a line at a time.
std::mutex say_lock;
void say(const WatchOptions& o, const std::string& text, json j) {
  std::lock_guard lock(say_lock);
  if (o.json) {
    j["text"] = text;
    std::cout << j.dump() << std::endl;
  } else {
    std::cout << text << std::endl;
  }
}

int run_watch(WatchOptions& o) {
  workflow::check_scan_request(o.config.scan);
  o.config.read_command = {workflow::own_executable(), "watch"};
  if (o.read_once >= 0) {  // the process of one read (watch_read.hpp)
    workflow::Watch::read_once(
        o.config, o.read_once, [](const json& j) { std::cout << j.dump() << std::endl; }, std::cin);
    return kExitOk;
  }
  signal(SIGPIPE, SIG_IGN);  // a read process that died while paused: its pipe's error, not the watch's end
  workflow::Watch w(o.config, [&o](const std::string& text, const json& j) {
    say(o, text, j);
  });  // the database and the schedule checked first
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  w.run(o.scans, [] { return stop_signal != 0; });
  say(o,
      "stopped" + std::string(stop_signal ? (stop_signal == SIGINT ? " (SIGINT)" : " (SIGTERM)") : "") + " at epoch " +
          std::to_string(w.epoch()),
      {{"event", "stopped"}, {"epoch", w.epoch()}});
  return kExitOk;
}

}  // namespace

Runner setup_watch(CLI::App& app) {
  auto o = std::make_shared<WatchOptions>();
  auto* c = add_command(app, "watch");
  add_db_option(c, o->config.db);
  c->add_option("--schedule", o->config.schedule, "the stored schedule whose hosts to follow")->required();
  c->add_option("--export", o->config.dir, "directory of the epochs (created)")->required();
  c->add_option("--interval", o->config.interval, "seconds between reads of the fabric")
      ->capture_default_str()
      ->check(decimal_in(0.05, 86400.0));
  c->add_option("--handover", o->config.handover,
                "seconds from writing an epoch to the time it holds from (peers must have read it by then)")
      ->capture_default_str()
      ->check(decimal_in(0.0, 3600.0));
  c->add_option("--keep", o->config.keep, "epochs kept on disk (at least 2)")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  c->add_option("--scans", o->scans, "stop after this many reads (0: until stopped)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  add_mad_options(c, o->config.scan.ca, o->config.scan.port, o->config.scan.timeout_ms, o->config.scan.retries, true);
  c->add_option("--topology", o->config.scan.topology,
                "read this topology file each time instead of the live fabric (as scan --topology)");
  c->add_option("--lfts", o->config.scan.lfts, "and these forwarding tables (as scan --lfts)");
  c->add_option("--node-name-map", o->config.scan.node_name_map, "GUID -> name file, as scan takes it");
  c->add_flag("--json", o->json, "one JSON object per event and line");
  c->add_option("--read-once", o->read_once, "(internal) one read, compared with this scan")
      ->group("")
      ->check(CLI::Range(int64_t{0}, INT64_MAX));
  return [o] { return run_watch(*o); };
}

}  // namespace ibroute::cli
