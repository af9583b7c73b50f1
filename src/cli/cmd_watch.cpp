// ibroute watch: keeps the scan current, and for every change of the fabric re-plans one stored
// schedule's host set and publishes it as the next epoch for peers (docs/epochs.md).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <exception>
#include <filesystem>
#include <ctime>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "commands.hpp"
#include "common.hpp"
#include "epoch_plan.hpp"
#include "export_files.hpp"
#include "options.hpp"
#include "scan_pipeline.hpp"
#include "watch_read.hpp"
#include "ibroute/fabric/diff.hpp"
#include "ibroute/fabric/error.hpp"

namespace ibroute::cli {

using namespace ibroute::fabric;
using nlohmann::json;

namespace {

struct WatchOptions {
  std::string db = kDefaultDb;
  std::string schedule, dir;
  double interval = 5, handover = 5;
  size_t keep = 5;
  int scans = 0;  // stop after this many reads (0: until stopped)
  int64_t read_once = -1;  // >= 0: one read, compared with this scan (0: the newest), for the watch that started it
  workflow::ScanRequest scan;
  bool json = false;
};

volatile std::sig_atomic_t stop_signal = 0;
void on_signal(int sig) { stop_signal = sig; }

int64_t unix_ns() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::string utc(int64_t ns) {
  const std::time_t s = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

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

// "1 link down (L1[3] - S2[1]), 1 host gone (node1-005), 352 routes changed": what diff says, in one line.
std::string change_text(const FabricDiff& d) {
  std::string out;
  auto part = [&](size_t n, const char* what, const std::string& example) {
    if (!n) return;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what + (example.empty() ? "" : " (" + example + (n > 1 ? ", ..." : "") + ")");
  };
  auto link = [](const LinkChange& c) { return c.a.desc + "[" + std::to_string(c.a.port) + "] - " + c.b.desc + "[" + std::to_string(c.b.port) + "]"; };
  part(d.links_removed.size(), "link(s) gone", d.links_removed.empty() ? "" : link(d.links_removed[0]));
  part(d.links_added.size(), "link(s) new", d.links_added.empty() ? "" : link(d.links_added[0]));
  part(d.links_changed.size(), "link(s) changed", d.links_changed.empty() ? "" : link(d.links_changed[0]) + ": " + d.links_changed[0].before + " -> " + d.links_changed[0].after);
  part(d.nodes_removed.size(), "node(s) gone", d.nodes_removed.empty() ? "" : d.nodes_removed[0].desc);
  part(d.nodes_added.size(), "node(s) new", d.nodes_added.empty() ? "" : d.nodes_added[0].desc);
  part(d.lids_changed.size(), "LID(s) changed", "");
  part(d.routes_changed, "route(s) changed", "");
  if (d.routes_compared == 0 && d.lft_entries_changed)  // routes not compared yet (they are, after the epoch)
    out += (out.empty() ? "" : ", ") + std::to_string(d.lft_entries_changed) + " forwarding table entries changed on " +
           std::to_string(d.switches_with_lft_changes) + " switch(es)";
  return out.empty() ? "no change" : out;
}

// Thrown through the planner (by its progress callback) when a newer read has made its plan stale.
struct Superseded {};

// The plan of one scan's epoch, on a thread of its own: the reads go on meanwhile, so that a change
// that lands while an epoch is being planned (OpenSM's sweep after the dead link the watch saw
// first) is read at once and the stale plan abandoned, not finished, written and only then read.
struct PlanJob {
  std::thread thread;
  std::atomic<bool> cancel{false}, done{false};
  std::exception_ptr error;  // what the plan threw besides Superseded and InputError (rethrown by the watch)
};

struct Watch {
  const WatchOptions& o;
  store::FabricStore store;  // the planning thread's (one at a time); reads store through their own process
  workflow::FollowedSet set;
  int64_t last_id = 0;  // the scan of the newest read (0: none yet)
  uint64_t epoch = 0;   // the newest epoch published (written by the planning thread, read after it ended)
  std::unique_ptr<PlanJob> job;
  // The read that stored the newest changed scan's tables and waits to store its routes: let go
  // once no plan is in flight (it writes for a minute at 10 000 hosts; the epoch comes first).
  std::vector<PausedRead> paused;
  // Held by a read (its process may store a scan), by the plan's loading and storing and while
  // paused reads store their routes: one writer at a time without leaning on SQLite's busy timeout.
  std::mutex db_turn;

  // A publish that failed for a reason that may pass (a full disk, an I/O error): the scan it was
  // for, planned again at the first read after `retry_at`, the wait doubling up to 16 intervals.
  std::atomic<int64_t> retry_scan{0};
  std::atomic<int> failures{0};
  std::chrono::steady_clock::time_point retry_at;
  bool read_ok = false;  // a read answered before: a later read's error may pass (a file moved for a moment)

  explicit Watch(const WatchOptions& opt) : o(opt), store(opt.db, store::Access::read_write), set(workflow::followed_set(store, opt.schedule)) {}

  // Goes on counting where the directory's epochs end (a watch started again), once it holds the lock.
  void count_on() {
    epoch = workflow::last_epoch_in(o.dir);
    if (epoch >= workflow::kMaxEpoch)
      throw InputError("--export " + o.dir + ": its last epoch is " + std::to_string(epoch) + ", the last peers read: publish into a new directory");
  }
  ~Watch() {
    try {
      finish(true);
    } catch (...) {  // leaving on another error already: the plan's own is not the one to tell
    }
    try {
      settle_reads(false);
    } catch (...) {
    }
  }

  // Lets the paused reads store their routes (or quit: their scans' routes are then answered from
  // the stored tables), one line each; waits for them.
  void settle_reads(bool store_routes) {
    if (paused.empty()) return;
    std::lock_guard turn(db_turn);
    for (PausedRead& p : paused) {
      const json r = settle_read(p, store_routes);
      if (!store_routes) continue;
      const std::string id = std::to_string(p.scan_id);
      if (r.value("event", "") != "routes") {
        say(o, "scan " + id + ": routes not stored (" + r.value("error", std::string("no answer")) + "); answered from its tables",
            {{"event", "routes_failed"}, {"scan_id", p.scan_id}, {"error", r.value("error", std::string())}});
        continue;
      }
      std::string text = "scan " + id + ": " + std::to_string(r.value("routes", 0)) + " routes stored";
      if (r.contains("routes_changed")) text += ", " + std::to_string(r.value("routes_changed", 0)) + " route(s) changed";
      say(o, text, r);
    }
    paused.clear();
  }

  // Ends the plan in flight: abandoned when `cancel`, else waited for. Rethrows what it failed with.
  void finish(bool cancel) {
    if (!job) return;
    if (cancel) job->cancel = true;
    if (job->thread.joinable()) job->thread.join();
    const std::exception_ptr e = job->error;
    job.reset();
    if (e) std::rethrow_exception(e);
  }

  // Plans the newest scan's epoch on a thread; a plan still running for an older scan is abandoned.
  void start_plan(int64_t t_read) {
    finish(true);
    job = std::make_unique<PlanJob>();
    job->thread = std::thread([this, t_read, scan = last_id, j = job.get()] {
      try {
        publish(t_read, scan, j->cancel);
      } catch (const Superseded&) {
        say(o, "the plan on scan " + std::to_string(scan) + " abandoned: the fabric changed again", {{"event", "abandoned"}, {"scan_id", scan}});
      } catch (...) {
        j->error = std::current_exception();
      }
      j->done = true;
    });
  }

  // One read of the fabric, in a process of its own (watch_read.hpp); a change (or the first read)
  // is stored there and planned here, on the plan's thread, as the next epoch. Reads that wait to
  // store routes are let go first where no plan is in flight.
  void step() {
    if (job && job->done) finish(false);  // an epoch planned meanwhile (or its error)
    if (!job) settle_reads(true);
    const int64_t t0 = unix_ns();
    json r;
    {
      std::lock_guard turn(db_turn);
      ReadAnswer a = start_read(read_args());
      if (a.paused) {
        // A newer scan supersedes the ones waiting: they quit (their routes answered from their
        // tables), so that a fabric that changes on every read while plans run piles up no processes.
        for (PausedRead& p : paused) {
          settle_read(p, false);
          say(o, "scan " + std::to_string(p.scan_id) + ": routes not stored (scan " + std::to_string(a.read.scan_id) + " is newer); answered from its tables",
              {{"event", "routes_dropped"}, {"scan_id", p.scan_id}, {"newer", a.read.scan_id}});
        }
        paused.assign(1, a.read);
      }
      r = std::move(a.first);
    }
    const std::string event = r.value("event", "");
    if (event == "input_error" && !read_ok) throw InputError(r.value("error", std::string("the read failed")));
    if (event == "input_error") {  // it read before: a file gone for a moment, a disk full
      say(o, "read failed: " + r.value("error", std::string()) + "; again in " + fixed(o.interval, 1) + " s", {{"event", "read_failed"}, {"error", r.value("error", std::string())}});
      return;
    }
    read_ok = true;
    if (event == "same" && retry_scan && !job && std::chrono::steady_clock::now() >= retry_at) {
      last_id = retry_scan;
      say(o, "publishing scan " + std::to_string(last_id) + "'s epoch again", {{"event", "retry"}, {"scan_id", last_id}, {"failures", failures.load()}});
      return start_plan(t0);
    }
    if (event == "scan_failed") {
      say(o, "scan failed: " + r.value("error", std::string()) + "; again in " + fixed(o.interval, 1) + " s", r);
      return;
    }
    if (event == "incomplete") {
      say(o, "incomplete read (" + r.value("problem", std::string()) + "): no epoch; again in " + fixed(o.interval, 1) + " s", r);
      return;
    }
    if (event == "same") return;
    if (event == "changed") say(o, "changed: " + r.value("what", std::string()), {{"event", "changed"}, {"what", r.value("what", std::string())}});
    last_id = r.at("scan_id").get<int64_t>();
    if (r.value("stored", false)) say(o, "scan " + std::to_string(last_id) + " stored", {{"event", "scan"}, {"scan_id", last_id}});
    start_plan(t0);
  }

  // The read process's command line (watch_read.hpp): this executable, `watch --read-once`.
  std::vector<std::string> read_args() const {
    std::vector<std::string> args{own_executable(), "watch", "--db", o.db, "--schedule", o.schedule, "--export", o.dir,
                                  "--read-once", std::to_string(last_id)};
    auto add = [&](const char* flag, const std::string& v) {
      if (!v.empty()) args.insert(args.end(), {flag, v});
    };
    add("--Ca", o.scan.ca), add("--topology", o.scan.topology), add("--lfts", o.scan.lfts), add("--node-name-map", o.scan.node_name_map);
    if (o.scan.port) add("--Port", std::to_string(o.scan.port));
    if (o.scan.timeout_ms) add("--timeout", std::to_string(o.scan.timeout_ms));
    if (o.scan.retries) add("--retries", std::to_string(o.scan.retries));
    return args;
  }

  // In the child: the read, judged against scan `since` (0: the newest stored scan, if complete),
  // answered on standard output. A change is stored without its routes first and answered
  // "routes_pending"; then, told "store" on standard input, the routes are resolved and stored
  // and a second line says so (watch_read.hpp).
  static void read_once(const WatchOptions& o, int64_t since) {
    auto answer = [](const json& j) { std::cout << j.dump() << std::endl; };
    int64_t pending = 0;
    try {
      workflow::ScanResult x = workflow::read_scan(o.scan);
      if (!x.f.complete)
        return answer({{"event", "incomplete"}, {"problem", x.f.problems.empty() ? std::string("some MADs went unanswered") : x.f.problems[0].detail}});
      store::FabricStore db(o.db, store::Access::read_write);
      json r{{"event", since ? "changed" : "first"}};
      if (!since) {
        const std::vector<store::ScanInfo> scans = db.scans();
        if (!scans.empty() && scans.back().complete && scans.back().has_lfts) since = scans.back().id;
      }
      // Compared by what routes come from: nothing changed, no route resolved or loaded (at 10 000
      // hosts that is 22 M routes every interval).
      const Fabric last = since ? db.load_fabric(since, true) : Fabric{};
      const json same = r["event"] == "first" ? json{{"event", "first"}, {"scan_id", since}, {"stored", false}} : json{{"event", "same"}};
      if (since && same_tables(last, x.f)) return answer(same);
      const FabricDiff quick = since ? diff_fabrics(last, RouteSet{}, x.f, RouteSet{}, 1) : FabricDiff{};
      if (since && quick.empty()) {  // tables read on other switches than before: only the routes tell
        workflow::resolve_scan_routes(x);
        const FabricDiff d = diff_fabrics(last, last.has_lfts ? resolve_routes(last) : RouteSet{}, x.f, x.routes, 1);
        if (d.empty()) return answer(same);
        r["what"] = change_text(d);
        r["scan_id"] = db.save_scan(x.info, x.f, x.routes), r["stored"] = true;
        return answer(r);
      }
      if (since) r["what"] = change_text(quick);
      pending = db.save_scan_tables(x.info, x.f);
      r["scan_id"] = pending, r["stored"] = true, r["routes_pending"] = true;
      answer(r);
      std::string go;
      std::getline(std::cin, go);  // "store" or "quit" (end of file: the watch has gone; stored all the same)
      if (go == "quit") return;
      const size_t known = x.f.problems.size();
      workflow::resolve_scan_routes(x);
      db.save_routes(pending, x.routes, {x.f.problems.begin() + static_cast<std::ptrdiff_t>(known), x.f.problems.end()});
      json done{{"event", "routes"}, {"scan_id", pending}, {"routes", x.routes.size()}};
      if (since && last.has_lfts) done["routes_changed"] = diff_fabrics(last, resolve_routes(last), x.f, x.routes, 0).routes_changed;
      answer(done);
    } catch (const InputError& e) {
      answer({{"event", pending ? "routes_failed" : "input_error"}, {"error", e.what()}});
    } catch (const std::exception& e) {
      answer({{"event", pending ? "routes_failed" : "scan_failed"}, {"error", e.what()}});
    }
  }

  void publish(int64_t t_scan, int64_t scan_id, const std::atomic<bool>& cancel) {
    std::unique_lock turn(db_turn);
    const workflow::FabricContext c(store, scan_id);
    turn.unlock();
    workflow::EpochPlan e;
    try {
      e = workflow::plan_epoch(c.eval, set, [&](std::string_view, size_t, size_t) {
        if (cancel) throw Superseded{};
      });
    } catch (const InputError& x) {
      say(o, std::string("no epoch: ") + x.what(), {{"event", "no_epoch"}, {"why", x.what()}});
      return;
    }
    if (e.broken) {
      const std::string why = std::to_string(e.broken) + " transfers have no working route: waiting for the subnet manager to route again";
      say(o, "no epoch: " + why, {{"event", "no_epoch"}, {"why", why}, {"broken", e.broken}});
      return;
    }
    schedule::Schedule s = e.outcome.schedule;
    s.name = set.name + ".e" + std::to_string(epoch + 1);
    turn.lock();
    if (cancel) throw Superseded{};  // not stored, not published: an epoch for a fabric already gone
    store.save_schedule(scan_id, s, e.outcome.load.max_load, static_cast<int64_t>(e.outcome.load.congested), e.outcome.plan_seconds, true);
    const store::ScheduleInfo info = store.schedule_info(s.name);
    const int64_t from = unix_ns() + static_cast<int64_t>(o.handover * 1e9);
    try {
      workflow::publish_epoch(o.dir, workflow::epoch_doc(c.fabric, c.info, s, epoch + 1, from, info.created_at), o.keep);
    } catch (const std::exception& x) {
      // Stored only once published: the database lists no epoch that never was. Tried again
      // after a wait (a full disk may be cleared); the watch runs on.
      store.delete_schedule(s.name);
      const int k = ++failures;
      const double wait = o.interval * static_cast<double>(1 << std::min(k - 1, 4));
      retry_at = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(wait));
      retry_scan = scan_id;
      say(o, "no epoch: " + std::string(x.what()) + "; tried again in " + fixed(wait, 1) + " s",
          {{"event", "publish_failed"}, {"error", x.what()}, {"failures", k}, {"retry_s", wait}});
      return;
    }
    retry_scan = 0, failures = 0;
    ++epoch;
    // The database keeps the epochs the directory keeps (weeks of epochs must not pile up), and
    // any a stored run names.
    if (epoch > std::max<uint64_t>(o.keep, 2)) store.delete_schedule(set.name + ".e" + std::to_string(epoch - std::max<uint64_t>(o.keep, 2)));
    const double after = static_cast<double>(unix_ns() - t_scan) / 1e9;
    std::string absent;
    for (size_t i = 0; i < e.absent.size() && i < 3; ++i) absent += (i ? ", " : "") + e.absent[i];
    if (e.absent.size() > 3) absent += ", ...";
    const schedule::Efficiency& eff = e.outcome.figures.efficiency;
    say(o,
        "epoch " + std::to_string(epoch) + " from " + utc(from) + ": " + std::to_string(e.exchange.hosts.size()) + " hosts" +
            (e.absent.empty() ? std::string() : " (" + std::to_string(e.absent.size()) + " absent: " + absent + ")") + ", efficiency " +
            fixed(eff.value, 2) + " (fabric; " + fixed(eff.value_tables, 2) + " of the tables'), worst link " + std::to_string(e.outcome.load.max_load) + " (bound " + std::to_string(s.bound) +
            "), " + fixed(s.timing.rate * 8 / 1e9, 2) + " Gb/s per node" +
            (e.rate_lowered ? " (" + fixed(set.request.rate * 8 / 1e9, 2) + " Gb/s asked: more than this fabric carries)" : std::string()) +
            ", no broken route; " + fixed(after, 1) + " s after the read began, planned in " + fixed(e.outcome.plan_seconds, 1) + " s" +
            " (scan " + std::to_string(scan_id) + ", schedule " + s.name + ")",
        {{"event", "epoch"}, {"epoch", epoch}, {"from_unix_ns", from}, {"hosts", e.exchange.hosts.size()}, {"absent", e.absent},
         {"efficiency", eff.value}, {"efficiency_tables", eff.value_tables}, {"max_load", e.outcome.load.max_load}, {"bound", s.bound},
         {"rate_gbps", s.timing.rate * 8 / 1e9}, {"rate_lowered", e.rate_lowered},
         {"seconds_after_read", after}, {"plan_seconds", e.outcome.plan_seconds}, {"scan_id", scan_id}, {"schedule", s.name},
         {"dir", (std::filesystem::path(o.dir) / workflow::epoch_dir_name(epoch)).string()}});
  }

  static std::string fixed(double v, int digits) {  // "0.99", "2.5": shares with 2 digits, seconds with 1
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
  }
};

int run_watch(const WatchOptions& o) {
  workflow::check_scan_request(o.scan);
  if (o.read_once >= 0) {  // the process of one read (watch_read.hpp)
    Watch::read_once(o, o.read_once);
    return kExitOk;
  }
  signal(SIGPIPE, SIG_IGN);  // a read process that died while paused: its pipe's error, not the watch's end
  Watch w(o);                                // the database and the schedule checked first
  const workflow::EpochDirLock lock(o.dir);  // one writer per directory, held until the watch ends
  if (lock.stale_removed())
    say(o, std::to_string(lock.stale_removed()) + " temporary epoch file(s) of a watch that ended removed from " + o.dir,
        {{"event", "stale_removed"}, {"count", lock.stale_removed()}});
  w.count_on();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  say(o, "watching " + (o.scan.topology.empty() ? std::string("the fabric") : o.scan.topology) + " every " + Watch::fixed(o.interval, 1) + " s for " +
             w.set.name + " (" + std::to_string(w.set.hosts.size()) + " hosts); epochs in " + o.dir,
      {{"event", "start"}, {"schedule", w.set.name}, {"hosts", w.set.hosts.size()}, {"dir", o.dir}});
  for (int n = 0; !stop_signal && (o.scans == 0 || n < o.scans); ++n) {
    if (n) {  // the pause between reads, cut short by a signal
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.interval);
      while (!stop_signal && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (stop_signal) break;
    }
    w.step();
  }
  w.finish(stop_signal != 0);  // after --scans reads, the epoch being planned is still written
  w.settle_reads(stop_signal == 0);  // stopped by a signal: routes not stored are answered from the tables
  say(o, "stopped" + std::string(stop_signal ? (stop_signal == SIGINT ? " (SIGINT)" : " (SIGTERM)") : "") + " at epoch " + std::to_string(w.epoch),
      {{"event", "stopped"}, {"epoch", w.epoch}});
  return kExitOk;
}

}  // namespace

Runner setup_watch(CLI::App& app) {
  auto o = std::make_shared<WatchOptions>();
  auto* c = app.add_subcommand("watch", "Keep the scan current; re-plan a schedule's hosts on every change and publish epochs for peers.");
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
  add_db_option(c, o->db);
  c->add_option("--schedule", o->schedule, "the stored schedule whose hosts to follow")->required();
  c->add_option("--export", o->dir, "directory of the epochs (created)")->required();
  c->add_option("--interval", o->interval, "seconds between reads of the fabric")->capture_default_str()->check(decimal_in(0.05, 86400.0));
  c->add_option("--handover", o->handover, "seconds from writing an epoch to the time it holds from (peers must have read it by then)")
      ->capture_default_str()
      ->check(decimal_in(0.0, 3600.0));
  c->add_option("--keep", o->keep, "epochs kept on disk (at least 2)")->capture_default_str()->check(CLI::Range(2, 100000));
  c->add_option("--scans", o->scans, "stop after this many reads (0: until stopped)")->capture_default_str()->check(CLI::Range(0, 1 << 30));
  c->add_option("-C,--Ca", o->scan.ca, "CA name to scan from (live)");
  c->add_option("-P,--Port", o->scan.port, "CA port number to scan from (live)")->check(CLI::Range(0, 254));
  c->add_option("-t,--timeout", o->scan.timeout_ms, "MAD timeout in ms (live; default: libibmad's)")->check(CLI::Range(0, 60000));
  c->add_option("--retries", o->scan.retries, "MAD retries (live; default: libibmad's)")->check(CLI::Range(0, 100));
  c->add_option("--topology", o->scan.topology, "read this topology file each time instead of the live fabric (as scan --topology)");
  c->add_option("--lfts", o->scan.lfts, "and these forwarding tables (as scan --lfts)");
  c->add_option("--node-name-map", o->scan.node_name_map, "GUID -> name file, as scan takes it");
  c->add_flag("--json", o->json, "one JSON object per event and line");
  c->add_option("--read-once", o->read_once, "(internal) one read, compared with this scan")->group("")->check(CLI::Range(int64_t{0}, INT64_MAX));
  return [o] { return run_watch(*o); };
}

}  // namespace ibroute::cli
