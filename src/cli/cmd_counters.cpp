// ibroute counters: the ports' own performance counters, read live, kept as a snapshot of the
// scan, and printed per link as the change since the scan's previous snapshot - worst first.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "counter_carry.hpp"
#include "counter_export.hpp"
#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/live_scan.hpp"
#include "ibroute/schedule/admission.hpp"
#include "options.hpp"
#include "whole_file.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;

namespace {

struct CountersOptions : StoreOptions {
  std::string label;
  std::string ca;
  int port = 0, timeout_ms = 0, retries = 0, mads = 32;
  size_t top = 20;
  std::string format = "text";  // text, json, prometheus, influx
  std::string output;           // -o: the monitoring formats to a file, replaced whole
  bool store = false;           // the monitoring formats: keep the snapshot too
  std::string carry;            // the monitoring formats: the last counters of every port, kept between readings
};

bool for_monitoring(const CountersOptions& o) { return o.format == "prometheus" || o.format == "influx"; }

// --format prometheus / influx: the reading as the monitoring system takes it, to stdout or to a
// file replaced whole (node_exporter's textfile collector must never see half of one).
void print_for_monitoring(const CountersOptions& o, const Fabric& f, const CounterSnapshot& now,
                          const workflow::ReadingMeta& m) {
  std::vector<std::string> left_out;
  const std::string text =
      o.format == "prometheus" ? workflow::prometheus_text(f, now, m) : workflow::influx_lines(f, now, m, left_out);
  if (!left_out.empty())
    std::fprintf(stderr, "counters: %zu value(s) beyond InfluxDB's 64-bit integers left out, e.g. %s\n",
                 left_out.size(), left_out[0].c_str());
  if (o.output.empty())
    std::fwrite(text.data(), 1, text.size(), stdout);
  else
    workflow::write_whole_file(o.output, text);
}

// 4-octet units as bytes, in SI units: "1.25 GB".
std::string bytes_text(uint64_t words) {
  const double b = static_cast<double>(words) * 4;
  const char* unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double v = b;
  int u = 0;
  while (v >= 1000 && u < 5) v /= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.2f %s" : "%.0f %s", v, unit[u]);
  return buf;
}

// "symbol_errors +7, link_downed +1" for the error counters that rose.
std::string errors_text(const PortDelta& d) {
  std::string out;
  for (size_t i = 0; i < kCounters; ++i)
    if (counter_info(i).error && d.delta[i])
      out += (out.empty() ? "" : ", ") + std::string(counter_info(i).ib) + " +" + std::to_string(d.delta[i]);
  return out.empty() ? "-" : out;
}

std::vector<std::string> flagged(uint32_t bits) {
  std::vector<std::string> out;
  for (size_t i = 0; i < kCounters; ++i)
    if (bits & (1u << i)) out.emplace_back(counter_info(i).name);
  return out;
}

// One reading and what it is compared with: the scan's previous snapshot.
struct Reading {
  const Fabric& f;
  const LinkIndex& links;
  int64_t scan = 0, id = 0;
  CounterSnapshot now;
  std::optional<store::CounterSnapshotInfo> prev;
  std::vector<PortDelta> deltas;               // worst first
  std::vector<const PortSample*> with_errors;  // error counters not zero at all
  std::string name(int32_t node, int port) const { return schedule::describe_link(f, links, links.id(node, port)); }
};

void print_reading_json(const CountersOptions& o, const Reading& r) {
  nlohmann::json ports = nlohmann::json::array();
  for (const PortDelta& d : r.deltas) {
    nlohmann::json delta, abs;
    for (size_t i = 0; i < kCounters; ++i)
      delta[std::string(counter_info(i).name)] = d.delta[i], abs[std::string(counter_info(i).name)] = d.now[i];
    ports.push_back({{"link", r.name(d.node, d.port)},
                     {"node_guid", guid_hex(r.f.nodes[d.node].guid)},
                     {"port", d.port},
                     {"xmit_bytes", d.delta[0] * 4},
                     {"rcv_bytes", d.delta[1] * 4},
                     {"errors", d.errors()},
                     {"delta", delta},
                     {"now", abs},
                     {"wrapped", flagged(d.wrapped)},
                     {"saturated", flagged(d.saturated)}});
  }
  auto list = [&](const std::vector<std::pair<int32_t, int>>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (auto [n, p] : v)
      a.push_back({{"link", r.name(n, p)}, {"node_guid", guid_hex(r.f.nodes[n].guid)}, {"port", p}});
    return a;
  };
  nlohmann::json errs = nlohmann::json::array();
  for (const PortSample* s : r.with_errors) {
    nlohmann::json c;
    for (size_t i = 0; i < kCounters; ++i)
      if (counter_info(i).error && s->v[i]) c[std::string(counter_info(i).name)] = s->v[i];
    errs.push_back({{"link", r.name(s->node, s->port)}, {"counters", c}});
  }
  print_json({{"scan_id", r.scan},
              {"snapshot_id", r.id},
              {"label", o.label},
              {"ports_read", r.now.ports.size()},
              {"previous_snapshot_id", r.prev ? nlohmann::json(r.prev->id) : nlohmann::json(nullptr)},
              {"previous_taken_at", r.prev ? nlohmann::json(r.prev->taken_at) : nlohmann::json(nullptr)},
              {"unanswered", list(r.now.unanswered)},
              {"no_extended", list(r.now.no_extended)},
              {"ports", ports},
              {"error_counts", errs}});
}

void print_reading(const CountersOptions& o, const Reading& r) {
  std::printf("counters of scan %lld: %zu ports read, snapshot %lld%s\n", static_cast<long long>(r.scan),
              r.now.ports.size(), static_cast<long long>(r.id), o.label.empty() ? "" : (" '" + o.label + "'").c_str());
  if (!r.now.no_extended.empty())
    std::printf("  %zu port(s) without PortCountersExtended (data counts 32 bits, saturating), e.g. %s\n",
                r.now.no_extended.size(), r.name(r.now.no_extended[0].first, r.now.no_extended[0].second).c_str());
  for (size_t i = 0; i < r.now.unanswered.size() && i < 10; ++i)
    std::printf("  no answer: %s\n", r.name(r.now.unanswered[i].first, r.now.unanswered[i].second).c_str());
  if (r.now.unanswered.size() > 10) std::printf("  ... %zu ports did not answer in all\n", r.now.unanswered.size());
  if (!r.prev) {
    std::printf("first snapshot of this scan: the next 'ibroute counters' shows what changed since now\n");
  } else {
    std::printf("since snapshot %lld (%s), worst first:\n", static_cast<long long>(r.prev->id),
                r.prev->taken_at.c_str());
    std::printf("  %-58s %10s %10s %12s  %s\n", "port (link it sends on)", "sent", "received", "XmitWait",
                "errors that rose");
    for (size_t i = 0; i < r.deltas.size() && i < o.top; ++i) {
      const PortDelta& d = r.deltas[i];
      std::string note;
      if (d.wrapped) note += "  (went back, wrapped or reset: " + flagged(d.wrapped)[0] + ")";
      if (d.saturated) note += "  (at its maximum, stopped counting: " + flagged(d.saturated)[0] + ")";
      std::printf("  %-58s %10s %10s %12llu  %s%s\n", r.name(d.node, d.port).c_str(), bytes_text(d.delta[0]).c_str(),
                  bytes_text(d.delta[1]).c_str(),
                  static_cast<unsigned long long>(d.delta[static_cast<size_t>(Counter::xmit_wait)]),
                  errors_text(d).c_str(), note.c_str());
    }
    if (r.deltas.size() > o.top)
      std::printf("  ... %zu ports in all (--top N, --json for every one)\n", r.deltas.size());
  }
  if (!r.with_errors.empty()) {
    std::printf("error counters not zero (absolute, %zu port(s)):\n", r.with_errors.size());
    for (size_t i = 0; i < r.with_errors.size() && i < o.top; ++i) {
      std::string c;
      for (size_t k = 0; k < kCounters; ++k)
        if (counter_info(k).error && r.with_errors[i]->v[k])
          c += (c.empty() ? "" : ", ") + std::string(counter_info(k).ib) + " " + std::to_string(r.with_errors[i]->v[k]);
      std::printf("  %-58s %s\n", r.name(r.with_errors[i]->node, r.with_errors[i]->port).c_str(), c.c_str());
    }
  }
}

int run_counters(CountersOptions o) {
  if (o.json && o.format != "text" && o.format != "json")
    throw InputError("--json and --format " + o.format + ": give one of them");
  if (o.json) o.format = "json";
  if (!o.output.empty() && !for_monitoring(o))
    throw InputError("-o is for --format prometheus or influx (text and JSON go to stdout)");
  if (!o.carry.empty() && !for_monitoring(o)) throw InputError("--carry is for --format prometheus or influx");
  if (!o.output.empty()) {  // before the read, not after it: a cron job's typo said at once
    const std::filesystem::path parent = std::filesystem::absolute(o.output).parent_path();
    std::error_code ec;
    if (!std::filesystem::is_directory(parent, ec))
      throw InputError("-o " + o.output + ": no directory " + parent.string());
  }
  const bool keep = !for_monitoring(o) || o.store;
  store::FabricStore store(o.db, keep ? store::Access::read_write : store::Access::read_only);
  const int64_t scan = pick_scan(store, o.scan);
  const Fabric f = store.load_fabric(scan, false);
  Progress progress;
  LiveScanOptions lo{o.ca, o.port, o.timeout_ms, o.retries, o.mads, std::ref(progress)};
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  CounterSnapshot now = read_counters(f, lo, for_monitoring(o));  // the monitoring formats say the ports' states too
  progress.finish();
  if (for_monitoring(o)) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<PortSample> next;
    if (!o.carry.empty()) {
      std::string note;
      next = workflow::carry_over(now, workflow::read_carry(o.carry, f, note));
      if (!note.empty()) std::fprintf(stderr, "counters: %s\n", note.c_str());
    }
    print_for_monitoring(o, f, now, {.unix_ns = unix_ns, .scan_id = scan, .seconds = secs});
    if (!o.carry.empty()) try {
        workflow::write_whole_file(o.carry, workflow::carry_text(f, next));
      } catch (const std::exception& e) {  // the reading is out; the next one carries less
        std::fprintf(stderr, "counters: --carry: %s\n", e.what());
      }
    if (o.store) store.save_counters(scan, o.label, now);
    return now.unanswered.empty() ? kExitOk : kExitIncomplete;
  }
  const LinkIndex links(f);
  const std::vector<store::CounterSnapshotInfo> earlier = store.counter_snapshots(scan);
  Reading r{f, links, scan, 0, std::move(now), std::nullopt, {}, {}};
  r.id = store.save_counters(scan, o.label, r.now);
  if (!earlier.empty()) r.prev = earlier.back();
  if (r.prev) r.deltas = counter_deltas(store.load_counters(r.prev->id), r.now);
  // Worst first: errors that rose, then time spent waiting for credits, then data sent.
  auto rank = [](const PortDelta& d) {
    return std::tuple(d.errors(), d.delta[static_cast<size_t>(Counter::xmit_wait)],
                      d.delta[static_cast<size_t>(Counter::xmit_data)]);
  };
  std::stable_sort(r.deltas.begin(), r.deltas.end(),
                   [&](const PortDelta& a, const PortDelta& b) { return rank(a) > rank(b); });
  for (const PortSample& s : r.now.ports) {  // whatever the previous snapshot said
    uint64_t e = 0;
    for (size_t i = 0; i < kCounters; ++i) e += counter_info(i).error ? s.v[i] : 0;
    if (e) r.with_errors.push_back(&s);
  }
  if (o.format == "json")
    print_reading_json(o, r);
  else
    print_reading(o, r);
  return r.now.unanswered.empty() ? kExitOk : kExitIncomplete;
}

}  // namespace

Runner setup_counters(CLI::App& app) {
  auto o = std::make_shared<CountersOptions>();
  auto* c = add_store_command(app, *o, "counters", kWithJson);
  c->add_option("--scan", o->scan, "scan whose ports are read (default: the newest)");
  c->add_option("--label", o->label, "a word kept with the snapshot (e.g. before-run)")->check(printable_name());
  c->add_option("--top", o->top, "ports listed (text)")->capture_default_str()->check(CLI::Range(1, 1000000));
  add_mad_options(c, o->ca, o->port, o->timeout_ms, o->retries);
  add_in_flight_option(c, o->mads, "PerfMgt queries");
  c->add_option("--format", o->format,
                "text (the default), json (as --json), prometheus (text exposition format, metrics named as "
                "treydock/infiniband_exporter's: docs/monitoring.md) or influx (InfluxDB line protocol)")
      ->check(CLI::IsMember({"text", "json", "prometheus", "influx"}));
  c->add_option(
      "-o,--output", o->output,
      "with --format prometheus or influx: write to this file, replaced whole (node_exporter's textfile collector)");
  c->add_option("--carry", o->carry,
                "with --format prometheus or influx: a file of the ports' last counters, read and replaced at each "
                "reading, so that "
                "a port that stops answering is still reported with them (ibroute exporter keeps one)");
  c->add_flag("--store", o->store,
              "with --format prometheus or influx: store the snapshot in the database too (by default the monitoring "
              "keeps the history)");
  return [o] { return run_counters(*o); };
}

}  // namespace ibroute::cli
