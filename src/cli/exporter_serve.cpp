// ibroute-exporter (`ibroute exporter`): the ports' counters for Prometheus over HTTP (docs/monitoring.md). A scrape
// starts a reading when the last one is older than --min-interval and waits for it up to
// --scrape-timeout; otherwise (or when the reading is late) it gets the last reading, its age in
// ibroute_exporter_scrape_age_seconds. Each reading is `ibroute counters --format prometheus` in a
// process of its own (watch_read.hpp: libibumad keeps what a process registered; weeks of reads
// must not pile it up), so the exporter holds one exposition at a time: its memory stays flat.
#include <httplib.h>
#include <malloc.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include "common.hpp"
#include "exporter_options.hpp"
#include "watch_read.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

namespace {

using Clock = std::chrono::steady_clock;

// "HOST:PORT", "[v6]:PORT": the address to bind and the port (1..65535).
std::pair<std::string, int> listen_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError("--listen '" + text + "': give HOST:PORT, e.g. 127.0.0.1:9683");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string digits = text.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(digits) < 1 || std::stoi(digits) > 65535)
    throw InputError("--listen '" + text + "': the port is a number from 1 to 65535");
  return {host, std::stoi(digits)};
}

// A directory of the exporter's own for the ports' last counters between readings (counters
// --carry), removed when it ends.
std::string private_directory() {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/ibroute-exporter-XXXXXX";
  if (!mkdtemp(dir.data()))
    throw InputError("cannot make a directory of its own under " + dir.substr(0, dir.rfind('/')) + ": " +
                     std::strerror(errno));
  return dir;
}

class Readings {
 public:
  Readings(const ExporterOptions& o) : o_(o), dir_(private_directory()), worker_([this] { work(); }) {}
  ~Readings() {
    {
      std::lock_guard l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // The body of a scrape, and whether there is any reading to give (503 before the first).
  std::pair<bool, std::string> scrape();

 private:
  std::vector<std::string> command() const;
  void work();
  std::string own_gauges(Clock::time_point now) const;

  const ExporterOptions& o_;
  const std::string dir_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false, wanted_ = false, reading_ = false, have_ = false;
  std::string text_, error_;
  Clock::time_point started_{}, ended_ok_{};
  uint64_t reads_ = 0, failures_ = 0;
  bool last_ok_ = false;
  std::thread worker_;
};

std::vector<std::string> Readings::command() const {
  // ibroute itself, which started this helper (run_exec.cpp); beside it when started directly.
  const char* self = std::getenv("IBROUTE_EXECUTABLE");
  std::vector<std::string> a{
      self && *self ? self : own_directory() + "/ibroute", "counters", "--db", o_.db, "--format", "prometheus"};
  if (o_.scan) a.insert(a.end(), {"--scan", std::to_string(*o_.scan)});
  if (!o_.ca.empty()) a.insert(a.end(), {"-C", o_.ca});
  if (o_.port) a.insert(a.end(), {"-P", std::to_string(o_.port)});
  if (o_.timeout_ms) a.insert(a.end(), {"--timeout", std::to_string(o_.timeout_ms)});
  if (o_.retries) a.insert(a.end(), {"--retries", std::to_string(o_.retries)});
  a.insert(a.end(), {"--mads-in-flight", std::to_string(o_.mads), "--carry", dir_ + "/last-counters"});
  return a;
}

// The reading thread: one reading at a time, when a scrape asks for one.
void Readings::work() {
  std::unique_lock l(m_);
  while (true) {
    cv_.wait(l, [&] { return stop_ || wanted_; });
    if (stop_) return;
    wanted_ = false, reading_ = true;
    l.unlock();
    ChildOutput r;
    std::string error;
    try {
      r = run_to_end(command(), size_t{1} << 30);
      // Exit 3: some ports did not answer; the reading says which (port_answered 0).
      const bool ok = WIFEXITED(r.status) && (WEXITSTATUS(r.status) == 0 || WEXITSTATUS(r.status) == 3);
      if (!ok)
        error = WIFSIGNALED(r.status) ? "the reading ended by signal " + std::to_string(WTERMSIG(r.status))
                                      : "the reading exited " + std::to_string(WEXITSTATUS(r.status));
    } catch (const std::exception& e) {
      error = e.what();
    }
    l.lock();
    ++reads_, reading_ = false, last_ok_ = error.empty();
    if (error.empty()) {
      text_ = std::move(r.out), have_ = true, ended_ok_ = Clock::now();
    } else {
      ++failures_, error_ = error;
      std::fprintf(stderr, "exporter: %s; the last reading is served\n", error.c_str());
    }
    cv_.notify_all();
  }
}

std::string Readings::own_gauges(Clock::time_point now) const {
  const double age = have_ ? std::chrono::duration<double>(now - ended_ok_).count() : 0;
  char b[1024];
  std::snprintf(b, sizeof b,
                "# HELP ibroute_exporter_scrape_age_seconds How old the reading served is\n"
                "# TYPE ibroute_exporter_scrape_age_seconds gauge\nibroute_exporter_scrape_age_seconds %.3f\n"
                "# HELP ibroute_exporter_reads_total Readings started since the exporter began\n"
                "# TYPE ibroute_exporter_reads_total counter\nibroute_exporter_reads_total %llu\n"
                "# HELP ibroute_exporter_read_failures_total Readings that failed (the one before was served)\n"
                "# TYPE ibroute_exporter_read_failures_total counter\nibroute_exporter_read_failures_total %llu\n"
                "# HELP ibroute_exporter_last_read_ok 1 if the last reading worked\n"
                "# TYPE ibroute_exporter_last_read_ok gauge\nibroute_exporter_last_read_ok %d\n",
                age, static_cast<unsigned long long>(reads_), static_cast<unsigned long long>(failures_),
                last_ok_ ? 1 : 0);
  return b;
}

std::pair<bool, std::string> Readings::scrape() {
  std::unique_lock l(m_);
  const Clock::time_point now = Clock::now();
  const auto min_interval = std::chrono::duration<double>(o_.min_interval_s);
  if (!reading_ && !wanted_ && (reads_ == 0 || now - started_ >= min_interval)) {
    wanted_ = true, started_ = now;
    cv_.notify_all();
  }
  // This scrape's reading, or the last one when it is late.
  cv_.wait_until(l,
                 now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.scrape_timeout_s)),
                 [&] { return !wanted_ && !reading_; });
  if (!have_)
    return {false,
            "no reading yet" + (error_.empty() ? std::string(" (the first is under way)") : ": " + error_) + "\n"};
  return {true, text_ + own_gauges(Clock::now())};
}

}  // namespace

int serve_exporter(const ExporterOptions& o) {
  const auto [host, port] = listen_address(o.listen);
  // An exposition is megabytes (5 MB at 864 hosts), copied per scrape on the server's threads: a
  // fixed mmap threshold gives each copy back when freed, where glibc's moving one would keep it
  // in every thread's arena (140 MiB resident at 864 hosts, 16 MiB with this).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  {  // the database and its scan, checked before anything listens
    store::FabricStore store(o.db, store::Access::read_only);
    pick_scan(store, o.scan);
  }
  // SIGINT and SIGTERM end it cleanly: waited for by a thread of their own (every thread made
  // after this has them blocked), which stops the server.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  httplib::Server svr;
  svr.set_keep_alive_max_count(1);
  // SO_REUSEADDR only: the library's default SO_REUSEPORT would let a second exporter bind the same
  // port and share the scrapes with the first, without a word.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  errno = 0;
  if (!svr.bind_to_port(host, port))  // the reason where the system gave one, none invented
    throw InputError("--listen " + o.listen + ": cannot listen there" +
                     (errno ? std::string(" (") + std::strerror(errno) + ")" : std::string()));
  Readings readings(o);
  svr.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    auto [ok, body] = readings.scrape();
    res.status = ok ? 200 : 503;
    res.set_content(body, ok ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8");
  });
  int got = 0;
  std::thread waiter([&] {
    sigwait(&stop, &got);
    svr.stop();
  });
  std::fprintf(stderr, "exporter: serving the counters of %s on http://%s/metrics\n",
               o.scan ? ("scan " + std::to_string(*o.scan)).c_str() : "the newest scan", o.listen.c_str());
  svr.listen_after_bind();
  if (!got) pthread_kill(waiter.native_handle(), SIGTERM);  // the server ended on its own: the waiter too
  waiter.join();
  std::fprintf(stderr, "exporter: stopped\n");
  return kExitOk;
}

}  // namespace ibroute::cli
