// ibroute watch: keeps the scan current, and for every change of the fabric re-plans one stored
// schedule's host set and publishes it as the next epoch for peers (docs/epochs.md).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <iostream>
#include <thread>

#include "commands.hpp"
#include "common.hpp"
#include "epoch_plan.hpp"
#include "export_files.hpp"
#include "options.hpp"
#include "scan_pipeline.hpp"
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

// One event: a line for people, or one JSON object per line for scripts.
void say(const WatchOptions& o, const std::string& text, json j) {
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
  return out.empty() ? "no change" : out;
}

struct Watch {
  const WatchOptions& o;
  store::FabricStore store;
  workflow::FollowedSet set;
  int64_t last_id = 0;  // the scan of the newest read (0: none yet)
  uint64_t epoch = 0;

  explicit Watch(const WatchOptions& opt) : o(opt), store(opt.db, false), set(workflow::followed_set(store, opt.schedule)) {
    epoch = workflow::current_epoch(o.dir).value_or(0);  // a watch started again goes on counting
  }

  // One read of the fabric, in a child process (read_in_child); a change (or the first read) is
  // stored there and planned here as the next epoch.
  void step() {
    const int64_t t0 = unix_ns();
    const json r = read_in_child();
    const std::string event = r.value("event", "");
    if (event == "input_error") throw InputError(r.value("error", std::string("the read failed")));
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
    publish(t0);
  }

  // libibumad keeps a process's agents registered (umad2sim refuses a second registration in one
  // process, and a forked child shares its parent's connection), and weeks of reads must not pile
  // up what a read leaves behind: each read is a fresh process (this executable, `watch
  // --read-once`), which compares it with the last stored scan, stores a change itself and
  // answers with one JSON object on its standard output.
  json read_in_child() {
    std::vector<std::string> args{own_executable(), "watch", "--db", o.db, "--schedule", o.schedule, "--export", o.dir,
                                  "--read-once", std::to_string(last_id)};
    auto add = [&](const char* flag, const std::string& v) {
      if (!v.empty()) args.insert(args.end(), {flag, v});
    };
    add("--Ca", o.scan.ca), add("--topology", o.scan.topology), add("--lfts", o.scan.lfts), add("--node-name-map", o.scan.node_name_map);
    if (o.scan.port) add("--Port", std::to_string(o.scan.port));
    if (o.scan.timeout_ms) add("--timeout", std::to_string(o.scan.timeout_ms));
    if (o.scan.retries) add("--retries", std::to_string(o.scan.retries));
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid = 0;
    const int err = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (err) {
      close(fds[0]);
      throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(err));
    }
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
      if (n > 0) text.append(buf, static_cast<size_t>(n));
      else if (errno != EINTR) break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const json r = json::parse(text, nullptr, false);
    if (r.is_discarded() || !r.is_object())
      return {{"event", "scan_failed"},
              {"error", "the read ended without an answer (" +
                            std::string(WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) : "exit " + std::to_string(WEXITSTATUS(status))) + ")"}};
    return r;
  }

  // In the child: the read, judged against scan `since` (0: the newest stored scan, if complete).
  static json read_and_store(const WatchOptions& o, int64_t since) {
    try {
      workflow::ScanResult x = workflow::read_scan(o.scan);
      if (!x.f.complete) return {{"event", "incomplete"}, {"problem", x.f.problems.empty() ? std::string("some MADs went unanswered") : x.f.problems[0].detail}};
      store::FabricStore db(o.db, false);
      json r{{"event", since ? "changed" : "first"}};
      if (!since) {
        const std::vector<store::ScanInfo> scans = db.scans();
        if (!scans.empty() && scans.back().complete && scans.back().has_lfts) since = scans.back().id;
      }
      // Compared by what routes come from: nothing changed, no route resolved or loaded (at 10 000
      // hosts that is 22 M routes every interval). A change resolves both sides' routes in memory.
      const Fabric last = since ? db.load_fabric(since, true) : Fabric{};
      const json same = r["event"] == "first" ? json{{"event", "first"}, {"scan_id", since}, {"stored", false}} : json{{"event", "same"}};
      if (since && same_tables(last, x.f)) return same;
      workflow::resolve_scan_routes(x);
      if (since) {
        const FabricDiff d = diff_fabrics(last, last.has_lfts ? resolve_routes(last) : RouteSet{}, x.f, x.routes, 1);
        if (d.empty()) return same;
        r["what"] = change_text(d);
      }
      r["scan_id"] = db.save_scan(x.info, x.f, x.routes), r["stored"] = true;
      return r;
    } catch (const InputError& e) {
      return {{"event", "input_error"}, {"error", e.what()}};
    } catch (const std::exception& e) {
      return {{"event", "scan_failed"}, {"error", e.what()}};
    }
  }

  void publish(int64_t t_scan) {
    const workflow::FabricContext c(store, last_id);
    workflow::EpochPlan e;
    try {
      e = workflow::plan_epoch(c.eval, set);
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
    store.save_schedule(last_id, s, e.outcome.load.max_load, static_cast<int64_t>(e.outcome.load.congested), e.outcome.plan_seconds, true);
    const store::ScheduleInfo info = store.schedule_info(s.name);
    const int64_t from = unix_ns() + static_cast<int64_t>(o.handover * 1e9);
    workflow::publish_epoch(o.dir, workflow::epoch_doc(c.fabric, c.info, s, epoch + 1, from, info.created_at), o.keep);
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
            " (scan " + std::to_string(last_id) + ", schedule " + s.name + ")",
        {{"event", "epoch"}, {"epoch", epoch}, {"from_unix_ns", from}, {"hosts", e.exchange.hosts.size()}, {"absent", e.absent},
         {"efficiency", eff.value}, {"efficiency_tables", eff.value_tables}, {"max_load", e.outcome.load.max_load}, {"bound", s.bound},
         {"rate_gbps", s.timing.rate * 8 / 1e9}, {"rate_lowered", e.rate_lowered},
         {"seconds_after_read", after}, {"plan_seconds", e.outcome.plan_seconds}, {"scan_id", last_id}, {"schedule", s.name},
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
  if (o.read_once >= 0) {  // the child of one read (read_in_child)
    std::cout << Watch::read_and_store(o, o.read_once).dump() << std::endl;
    return kExitOk;
  }
  Watch w(o);
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
      "Exit: 0 stopped by a signal or after --scans reads, 2 bad input (database, schedule, options).");
  add_db_option(c, o->db);
  c->add_option("--schedule", o->schedule, "the stored schedule whose hosts to follow")->required();
  c->add_option("--export", o->dir, "directory of the epochs (created)")->required();
  c->add_option("--interval", o->interval, "seconds between reads of the fabric")->capture_default_str()->check(CLI::Range(0.05, 86400.0));
  c->add_option("--handover", o->handover, "seconds from writing an epoch to the time it holds from (peers must have read it by then)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
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
