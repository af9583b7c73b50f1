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
  auto* c = add_command(app, "exporter");
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
  add_mad_options(c, o->ca, o->port, o->timeout_ms, o->retries);
  add_in_flight_option(c, o->mads, "PerfMgt queries");
  return [o, run] { return run(*o); };
}

}  // namespace ibroute::cli
