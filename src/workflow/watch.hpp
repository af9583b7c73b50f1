// ibroute watch's daemon: keeps the scan current, and for every change of the fabric re-plans one
// stored schedule's host set and publishes it as the next epoch for peers (docs/epochs.md). Each
// read runs in a process of its own (watch_read.hpp), each plan on a thread of its own; what
// happens is said through a hook, one event at a time (a line for people, a JSON object for
// scripts), so the command only binds options, signals and output.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "epoch_plan.hpp"
#include "fabric_store.hpp"
#include "scan_pipeline.hpp"
#include "watch_read.hpp"

namespace ibroute::workflow {

struct WatchConfig {
  std::string db, schedule, dir;
  double interval = 5, handover = 5;  // seconds between reads; from writing an epoch to its start
  size_t keep = 5;                    // epochs kept on disk
  ScanRequest scan;
  // The read process's command line up to its options: this executable and `watch` (the watch
  // adds `--read-once` and the rest).
  std::vector<std::string> read_command;
};

// One event: its line for people and its JSON object (its "event" and figures). Called from the
// reading thread and the planning one, one call at a time.
using WatchSay = std::function<void(const std::string& text, const nlohmann::json& j)>;

struct PlanJob;

class Watch {
 public:
  // The database and the schedule checked (InputError) before anything is read.
  Watch(const WatchConfig& config, WatchSay say);
  ~Watch();

  // Reads every `interval` seconds, `scans` times (0: until `stop()` says so, asked every 50 ms),
  // holding the epoch directory's lock; then ends the plan in flight (waited for after `scans`
  // reads, abandoned when stopped) and lets paused reads store their routes (not when stopped).
  void run(int scans, const std::function<bool()>& stop);

  uint64_t epoch() const { return epoch_; }  // the newest epoch published
  const FollowedSet& followed() const { return set_; }

  // In the read process: one read, judged against scan `since` (0: the newest stored scan, if
  // complete), answered through `answer`; a change is stored without its routes first and
  // answered "routes_pending", then, told "store" on `in`, its routes are stored and a second
  // answer says so (watch_read.hpp).
  static void read_once(const WatchConfig& config, int64_t since,
                        const std::function<void(const nlohmann::json&)>& answer, std::istream& in);

 private:
  void count_on();
  void settle_reads(bool store_routes);
  void finish(bool cancel);
  void start_plan(int64_t t_read);
  void step();
  std::vector<std::string> read_args() const;
  void publish(int64_t t_scan, int64_t scan_id, const std::atomic<bool>& cancel);
  void publish_failed(const std::string& error, int64_t scan_id);
  void said_epoch(const EpochPlan& e, const schedule::Schedule& s, int64_t scan_id, int64_t t_scan, int64_t from);

  WatchConfig o;
  WatchSay say_;
  store::FabricStore store_;  // the planning thread's (one at a time); reads store through their own process
  FollowedSet set_;
  int64_t last_id_ = 0;  // the scan of the newest read (0: none yet)
  uint64_t epoch_ = 0;   // the newest epoch published (written by the planning thread, read after it ended)
  std::unique_ptr<PlanJob> job_;
  // The read that stored the newest changed scan's tables and waits to store its routes: let go
  // once no plan is in flight (it writes for a minute at 10 000 hosts; the epoch comes first).
  std::vector<PausedRead> paused_;
  // Held by a read (its process may store a scan), by the plan's loading and storing and while
  // paused reads store their routes: one writer at a time without leaning on SQLite's busy timeout.
  std::mutex db_turn_;
  // A publish that failed for a reason that may pass (a full disk, an I/O error): the scan it was
  // for, planned again at the first read after `retry_at`, the wait doubling up to 16 intervals.
  std::atomic<int64_t> retry_scan_{0};
  std::atomic<int> failures_{0};
  std::chrono::steady_clock::time_point retry_at_;
  bool read_ok_ = false;  // a read answered before: a later read's error may pass (a file moved for a moment)
};

}  // namespace ibroute::workflow
