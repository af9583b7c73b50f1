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
  auto* c = app.add_subcommand(
      "watch", "Keep the scan current; re-plan a schedule's hosts on every change and publish epochs for peers.");
  c->footer(
      "Reads the fabric every --interval seconds (live, like scan; or the --topology/--lfts files again).\n"
      "A read that differs from the last (links, nodes, LIDs, forwarding tables) is stored as a scan\n"
      "and prints one line naming what changed; then the host set of --schedule (its hosts by port GUID,\n"
      "fixed at start: those gone from the fabric are left out, those back are planned again) is\n"
      "planned on it and published in --export DIR as the next epoch: DIR/epoch-NNNNNN/ (schedule.json,\n"
      "hosts.json, one slice per host), DIR/current pointing at it, replaced atomically; peers switch\n"
      "at the first round that starts --handover seconds or more after it was written (docs/epochs.md).\n"
      "Epoch 1 is written at start. No epoch for an incomplete read, or while transfers have no\n"
      "working route (the subnet manager has not routed again yet): one line each. The epoch's\n"
      "schedule is stored as NAME.eK. Runs until SIGINT/SIGTERM.\n"
      "Exit: 0 stopped by a signal or after --scans reads, 2 bad input (database, schedule, options) or another watch\n"
      "publishing into --export (one writer per directory: a lock on DIR/.ibroute-watch.lock).");
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
  c->add_option("-C,--Ca", o->config.scan.ca, "CA name to scan from (live)");
  c->add_option("-P,--Port", o->config.scan.port, "CA port number to scan from (live)")->check(CLI::Range(0, 254));
  c->add_option("-t,--timeout", o->config.scan.timeout_ms, "MAD timeout in ms (live; default: libibmad's)")
      ->check(CLI::Range(0, 60000));
  c->add_option("--retries", o->config.scan.retries, "MAD retries (live; default: libibmad's)")
      ->check(CLI::Range(0, 100));
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
