// `ibroute exporter`'s options: parsed by ibroute, which then becomes ibroute-exporter
// (exporter_options.hpp) with the same arguments.
#include "commands.hpp"
#include "common.hpp"
#include "exporter_options.hpp"
#include "options.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

std::function<int()> setup_exporter_options(CLI::App& app, std::function<int(const ExporterOptions&)> run) {
  auto o = std::make_shared<ExporterOptions>();
  o->db = kDefaultDb;
  auto* c = app.add_subcommand("exporter", "Serve every port's counters to Prometheus over HTTP (GET /metrics).");
  c->footer(
      "A scrape reads the counters of every cabled port of the scan (as `counters --format prometheus`:\n"
      "metrics named as treydock/infiniband_exporter's, both ends of each cable; docs/monitoring.md)\n"
      "when the last reading is older than --min-interval, and waits for it up to --scrape-timeout;\n"
      "otherwise it gets the last reading, ibroute_exporter_scrape_age_seconds saying how old. Nothing\n"
      "is stored. Answers GET /metrics only, on the address given (default 127.0.0.1:9683). Runs until\n"
      "SIGINT or SIGTERM.\n"
      "Exit: 0 stopped by SIGINT or SIGTERM, 2 bad input (the address in use, no database or scan).");
  add_db_option(c, o->db);
  add_scan_option(c, o->scan)->description("scan whose ports are read (default: the newest when scraped)");
  c->add_option("--listen", o->listen, "HOST:PORT to serve on")->capture_default_str();
  c->add_option("--min-interval", o->min_interval_s, "seconds a reading is served before a scrape starts another")
      ->capture_default_str()
      ->check(decimal_in(0, 3600));
  c->add_option("--scrape-timeout", o->scrape_timeout_s,
                "seconds a scrape waits for its reading before it gets the last one")
      ->capture_default_str()
      ->check(decimal_in(0.1, 600));
  c->add_option("-C,--Ca", o->ca, "CA name to read from");
  c->add_option("-P,--Port", o->port, "CA port number to read from")->check(CLI::Range(0, 254));
  c->add_option("-t,--timeout", o->timeout_ms, "MAD timeout in ms (default: libibmad's)")->check(CLI::Range(0, 60000));
  c->add_option("--retries", o->retries, "MAD retries (default: libibmad's)")->check(CLI::Range(0, 100));
  c->add_option("--mads-in-flight", o->mads, "PerfMgt queries in flight at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  return [o, run] { return run(*o); };
}

}  // namespace ibroute::cli
