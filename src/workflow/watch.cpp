#include "watch.hpp"

#include <algorithm>
#include <ctime>
#include <exception>
#include <filesystem>
#include <istream>
#include <thread>

#include "export_files.hpp"
#include "fabric_context.hpp"
#include "ibroute/fabric/diff.hpp"
#include "ibroute/fabric/error.hpp"

namespace ibroute::workflow {

using namespace ibroute::fabric;
using nlohmann::json;

namespace {

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

std::string fixed(double v, int digits) {  // "0.99", "2.5": shares with 2 digits, seconds with 1
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// "1 link down (L1[3] - S2[1]), 1 host gone (node1-005), 352 routes changed": what diff says, in one line.
std::string change_text(const FabricDiff& d) {
  std::string out;
  auto part = [&](size_t n, const char* what, const std::string& example) {
    if (!n) return;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what +
           (example.empty() ? "" : " (" + example + (n > 1 ? ", ..." : "") + ")");
  };
  auto link = [](const LinkChange& c) {
    return c.a.desc + "[" + std::to_string(c.a.port) + "] - " + c.b.desc + "[" + std::to_string(c.b.port) + "]";
  };
  part(d.links_removed.size(), "link(s) gone", d.links_removed.empty() ? "" : link(d.links_removed[0]));
  part(d.links_added.size(), "link(s) new", d.links_added.empty() ? "" : link(d.links_added[0]));
  part(d.links_changed.size(), "link(s) changed",
       d.links_changed.empty()
           ? ""
           : link(d.links_changed[0]) + ": " + d.links_changed[0].before + " -> " + d.links_changed[0].after);
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

}  // namespace

// The plan of one scan's epoch, on a thread of its own: the reads go on meanwhile, so that a change
// that lands while an epoch is being planned (OpenSM's sweep after the dead link the watch saw
// first) is read at once and the stale plan abandoned, not finished, written and only then read.
struct PlanJob {
  std::thread thread;
  std::atomic<bool> cancel{false}, done{false};
  std::exception_ptr error;  // what the plan threw besides Superseded and InputError (rethrown by the watch)
};

Watch::Watch(const WatchConfig& config, WatchSay say)
    : o(config),
      say_(std::move(say)),
      store_(config.db, store::Access::read_write),
      set_(followed_set(store_, config.schedule)) {}

Watch::~Watch() {
  try {
    finish(true);
  } catch (...) {  // leaving on another error already: the plan's own is not the one to tell
  }
  try {
    settle_reads(false);
  } catch (...) {
  }
}

// Goes on counting where the directory's epochs end (a watch started again), once it holds the lock.
void Watch::count_on() {
  epoch_ = last_epoch_in(o.dir);
  if (epoch_ >= kMaxEpoch)
    throw InputError("--export " + o.dir + ": its last epoch is " + std::to_string(epoch_) +
                     ", the last peers read: publish into a new directory");
}

void Watch::run(int scans, const std::function<bool()>& stop) {
  const EpochDirLock lock(o.dir);  // one writer per directory, held until the watch ends
  if (lock.stale_removed())
    say_(std::to_string(lock.stale_removed()) + " temporary epoch file(s) of a watch that ended removed from " + o.dir,
         {{"event", "stale_removed"}, {"count", lock.stale_removed()}});
  count_on();
  say_("watching " + (o.scan.topology.empty() ? std::string("the fabric") : o.scan.topology) + " every " +
           fixed(o.interval, 1) + " s for " + set_.name + " (" + std::to_string(set_.hosts.size()) +
           " hosts); epochs in " + o.dir,
       {{"event", "start"}, {"schedule", set_.name}, {"hosts", set_.hosts.size()}, {"dir", o.dir}});
  bool stopped = false;
  try {
    for (int n = 0; !(stopped = stop()) && (scans == 0 || n < scans); ++n) {
      if (n) {  // the pause between reads, cut short by a stop
        const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.interval);
        while (!(stopped = stop()) && std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (stopped) break;
      }
      step();
    }
  } catch (...) {  // no plan publishes once the directory's lock is let go
    try {
      finish(true);
    } catch (...) {
    }
    throw;
  }
  finish(stopped);         // after `scans` reads, the epoch being planned is still written
  settle_reads(!stopped);  // stopped: routes not stored are answered from the tables
}

// Lets the paused reads store their routes (or quit: their scans' routes are then answered from
// the stored tables), one line each; waits for them.
void Watch::settle_reads(bool store_routes) {
  if (paused_.empty()) return;
  std::lock_guard turn(db_turn_);
  for (PausedRead& p : paused_) {
    const json r = settle_read(p, store_routes);
    if (!store_routes) continue;
    const std::string id = std::to_string(p.scan_id);
    if (r.value("event", "") != "routes") {
      say_("scan " + id + ": routes not stored (" + r.value("error", std::string("no answer")) +
               "); answered from its tables",
           {{"event", "routes_failed"}, {"scan_id", p.scan_id}, {"error", r.value("error", std::string())}});
      continue;
    }
    std::string text = "scan " + id + ": " + std::to_string(r.value("routes", 0)) + " routes stored";
    if (r.contains("routes_changed")) text += ", " + std::to_string(r.value("routes_changed", 0)) + " route(s) changed";
    say_(text, r);
  }
  paused_.clear();
}

// Ends the plan in flight: abandoned when `cancel`, else waited for. Rethrows what it failed with.
void Watch::finish(bool cancel) {
  if (!job_) return;
  if (cancel) job_->cancel = true;
  if (job_->thread.joinable()) job_->thread.join();
  const std::exception_ptr e = job_->error;
  job_.reset();
  if (e) std::rethrow_exception(e);
}

// Plans the newest scan's epoch on a thread; a plan still running for an older scan is abandoned.
void Watch::start_plan(int64_t t_read) {
  finish(true);
  job_ = std::make_unique<PlanJob>();
  job_->thread = std::thread([this, t_read, scan = last_id_, j = job_.get()] {
    try {
      publish(t_read, scan, j->cancel);
    } catch (const Superseded&) {
      say_("the plan on scan " + std::to_string(scan) + " abandoned: the fabric changed again",
           {{"event", "abandoned"}, {"scan_id", scan}});
    } catch (...) {
      j->error = std::current_exception();
    }
    j->done = true;
  });
}

// One read of the fabric, in a process of its own (watch_read.hpp); a change (or the first read)
// is stored there and planned here, on the plan's thread, as the next epoch. Reads that wait to
// store routes are let go first where no plan is in flight.
void Watch::step() {
  if (job_ && job_->done) finish(false);  // an epoch planned meanwhile (or its error)
  if (!job_) settle_reads(true);
  const int64_t t0 = unix_ns();
  json r;
  {
    std::lock_guard turn(db_turn_);
    ReadAnswer a = start_read(read_args());
    if (a.paused) {
      // A newer scan supersedes the ones waiting: they quit (their routes answered from their
      // tables), so that a fabric that changes on every read while plans run piles up no processes.
      for (PausedRead& p : paused_) {
        settle_read(p, false);
        say_("scan " + std::to_string(p.scan_id) + ": routes not stored (scan " + std::to_string(a.read.scan_id) +
                 " is newer); answered from its tables",
             {{"event", "routes_dropped"}, {"scan_id", p.scan_id}, {"newer", a.read.scan_id}});
      }
      paused_.assign(1, a.read);
    }
    r = std::move(a.first);
  }
  const std::string event = r.value("event", "");
  if (event == "input_error" && !read_ok_) throw InputError(r.value("error", std::string("the read failed")));
  if (event == "input_error") {  // it read before: a file gone for a moment, a disk full
    say_("read failed: " + r.value("error", std::string()) + "; again in " + fixed(o.interval, 1) + " s",
         {{"event", "read_failed"}, {"error", r.value("error", std::string())}});
    return;
  }
  read_ok_ = true;
  if (event == "same" && retry_scan_ && !job_ && std::chrono::steady_clock::now() >= retry_at_) {
    last_id_ = retry_scan_;
    say_("publishing scan " + std::to_string(last_id_) + "'s epoch again",
         {{"event", "retry"}, {"scan_id", last_id_}, {"failures", failures_.load()}});
    return start_plan(t0);
  }
  if (event == "scan_failed") {
    say_("scan failed: " + r.value("error", std::string()) + "; again in " + fixed(o.interval, 1) + " s", r);
    return;
  }
  if (event == "incomplete") {
    say_("incomplete read (" + r.value("problem", std::string()) + "): no epoch; again in " + fixed(o.interval, 1) +
             " s",
         r);
    return;
  }
  if (event == "same") return;
  if (event == "changed")
    say_("changed: " + r.value("what", std::string()),
         {{"event", "changed"}, {"what", r.value("what", std::string())}});
  last_id_ = r.at("scan_id").get<int64_t>();
  if (r.value("stored", false))
    say_("scan " + std::to_string(last_id_) + " stored", {{"event", "scan"}, {"scan_id", last_id_}});
  start_plan(t0);
}

// The read process's command line (watch_read.hpp): `read_command` and `--read-once`.
std::vector<std::string> Watch::read_args() const {
  std::vector<std::string> args = o.read_command;
  args.insert(args.end(),
              {"--db", o.db, "--schedule", o.schedule, "--export", o.dir, "--read-once", std::to_string(last_id_)});
  auto add = [&](const char* flag, const std::string& v) {
    if (!v.empty()) args.insert(args.end(), {flag, v});
  };
  add("--Ca", o.scan.ca), add("--topology", o.scan.topology), add("--lfts", o.scan.lfts),
      add("--node-name-map", o.scan.node_name_map);
  if (o.scan.port) add("--Port", std::to_string(o.scan.port));
  if (o.scan.timeout_ms) add("--timeout", std::to_string(o.scan.timeout_ms));
  if (o.scan.retries) add("--retries", std::to_string(o.scan.retries));
  return args;
}

void Watch::read_once(const WatchConfig& o, int64_t since, const std::function<void(const json&)>& answer,
                      std::istream& in) {
  int64_t pending = 0;
  try {
    ScanResult x = read_scan(o.scan);
    if (!x.f.complete)
      return answer(
          {{"event", "incomplete"},
           {"problem", x.f.problems.empty() ? std::string("some MADs went unanswered") : x.f.problems[0].detail}});
    store::FabricStore db(o.db, store::Access::read_write);
    json r{{"event", since ? "changed" : "first"}};
    if (!since) {
      const std::vector<store::ScanInfo> scans = db.scans();
      if (!scans.empty() && scans.back().complete && scans.back().has_lfts) since = scans.back().id;
    }
    // Compared by what routes come from: nothing changed, no route resolved or loaded (at 10 000
    // hosts that is 22 M routes every interval).
    const Fabric last = since ? db.load_fabric(since, true) : Fabric{};
    const json same = r["event"] == "first" ? json{{"event", "first"}, {"scan_id", since}, {"stored", false}}
                                            : json{{"event", "same"}};
    if (since && same_tables(last, x.f)) return answer(same);
    const FabricDiff quick = since ? diff_fabrics(last, RouteSet{}, x.f, RouteSet{}, 1) : FabricDiff{};
    if (since && quick.empty()) {  // tables read on other switches than before: only the routes tell
      resolve_scan_routes(x);
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
    std::getline(in, go);  // "store" or "quit" (end of file: the watch has gone; stored all the same)
    if (go == "quit") return;
    const size_t known = x.f.problems.size();
    resolve_scan_routes(x);
    db.save_routes(pending, x.routes, {x.f.problems.begin() + static_cast<std::ptrdiff_t>(known), x.f.problems.end()});
    json done{{"event", "routes"}, {"scan_id", pending}, {"routes", x.routes.size()}};
    if (since && last.has_lfts)
      done["routes_changed"] = diff_fabrics(last, resolve_routes(last), x.f, x.routes, 0).routes_changed;
    answer(done);
  } catch (const InputError& e) {
    answer({{"event", pending ? "routes_failed" : "input_error"}, {"error", e.what()}});
  } catch (const std::exception& e) {
    answer({{"event", pending ? "routes_failed" : "scan_failed"}, {"error", e.what()}});
  }
}

void Watch::publish(int64_t t_scan, int64_t scan_id, const std::atomic<bool>& cancel) {
  std::unique_lock turn(db_turn_);
  const FabricContext c(store_, scan_id);
  turn.unlock();
  EpochPlan e;
  try {
    e = plan_epoch(c.eval, set_, [&](std::string_view, size_t, size_t) {
      if (cancel) throw Superseded{};
    });
  } catch (const InputError& x) {
    say_(std::string("no epoch: ") + x.what(), {{"event", "no_epoch"}, {"why", x.what()}});
    return;
  }
  if (e.broken) {
    const std::string why =
        std::to_string(e.broken) + " transfers have no working route: waiting for the subnet manager to route again";
    say_("no epoch: " + why, {{"event", "no_epoch"}, {"why", why}, {"broken", e.broken}});
    return;
  }
  schedule::Schedule s = e.outcome.schedule;
  s.name = set_.name + ".e" + std::to_string(epoch_ + 1);
  turn.lock();
  if (cancel) throw Superseded{};  // not stored, not published: an epoch for a fabric already gone
  store_.save_schedule(scan_id, s, e.outcome.load.max_load, static_cast<int64_t>(e.outcome.load.congested),
                       e.outcome.plan_seconds, true);
  const store::ScheduleInfo info = store_.schedule_info(s.name);
  const int64_t from = unix_ns() + static_cast<int64_t>(o.handover * 1e9);
  try {
    publish_epoch(o.dir, epoch_doc(c.fabric, c.info, s, epoch_ + 1, from, info.created_at), o.keep);
  } catch (const std::exception& x) {
    // Stored only once published: the database lists no epoch that never was.
    store_.delete_schedule(s.name);
    return publish_failed(x.what(), scan_id);
  }
  retry_scan_ = 0, failures_ = 0;
  ++epoch_;
  // The database keeps the epochs the directory keeps (weeks of epochs must not pile up), and
  // any a stored run names.
  if (epoch_ > std::max<uint64_t>(o.keep, 2))
    store_.delete_schedule(set_.name + ".e" + std::to_string(epoch_ - std::max<uint64_t>(o.keep, 2)));
  said_epoch(e, s, scan_id, t_scan, from);
}

// Tried again after a wait (a full disk may be cleared); the watch runs on.
void Watch::publish_failed(const std::string& error, int64_t scan_id) {
  const int k = ++failures_;
  const double wait = o.interval * static_cast<double>(1 << std::min(k - 1, 4));
  retry_at_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(wait));
  retry_scan_ = scan_id;
  say_("no epoch: " + error + "; tried again in " + fixed(wait, 1) + " s",
       {{"event", "publish_failed"}, {"error", error}, {"failures", k}, {"retry_s", wait}});
}

void Watch::said_epoch(const EpochPlan& e, const schedule::Schedule& s, int64_t scan_id, int64_t t_scan, int64_t from) {
  const double after = static_cast<double>(unix_ns() - t_scan) / 1e9;
  std::string absent;
  for (size_t i = 0; i < e.absent.size() && i < 3; ++i) absent += (i ? ", " : "") + e.absent[i];
  if (e.absent.size() > 3) absent += ", ...";
  const schedule::Efficiency& eff = e.outcome.figures.efficiency;
  say_(
      "epoch " + std::to_string(epoch_) + " from " + utc(from) + ": " + std::to_string(e.exchange.hosts.size()) +
          " hosts" +
          (e.absent.empty() ? std::string() : " (" + std::to_string(e.absent.size()) + " absent: " + absent + ")") +
          ", efficiency " + efficiency_figure(eff) + " (fabric; " + fixed(eff.value_tables, 2) +
          " of the tables'), worst link " + std::to_string(e.outcome.load.max_load) + " (bound " +
          std::to_string(s.bound) + "), " + fixed(s.timing.rate * 8 / 1e9, 2) + " Gb/s per node" +
          (e.rate_lowered ? " (" + fixed(set_.request.rate * 8 / 1e9, 2) + " Gb/s asked: more than this fabric carries)"
                          : std::string()) +
          ", no broken route; " + fixed(after, 1) + " s after the read began, planned in " +
          fixed(e.outcome.plan_seconds, 1) + " s" + " (scan " + std::to_string(scan_id) + ", schedule " + s.name + ")",
      {{"event", "epoch"},
       {"epoch", epoch_},
       {"from_unix_ns", from},
       {"hosts", e.exchange.hosts.size()},
       {"absent", e.absent},
       {"efficiency", eff.value},
       {"efficiency_tables", eff.value_tables},
       {"max_load", e.outcome.load.max_load},
       {"bound", s.bound},
       {"rate_gbps", s.timing.rate * 8 / 1e9},
       {"rate_lowered", e.rate_lowered},
       {"seconds_after_read", after},
       {"plan_seconds", e.outcome.plan_seconds},
       {"scan_id", scan_id},
       {"schedule", s.name},
       {"dir", (std::filesystem::path(o.dir) / epoch_dir_name(epoch_)).string()}});
}

}  // namespace ibroute::workflow
