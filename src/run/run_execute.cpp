// ibroute-run: executes a schedule on the fabric, one process per host under srun or mpirun.
// Every rank loads the schedule; rank 0 measures the clocks, gathers the results and reports.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common.hpp"
#include "counter_window.hpp"
#include "data_plane.hpp"
#include "diagnosis_report.hpp"
#include "export_files.hpp"
#include "fabric_context.hpp"
#include "ibroute/fabric/dot.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/runner/run_report.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/validate.hpp"
#include "run_follow.hpp"
#include "run_options.hpp"
#include "run_report_write.hpp"
#include "verbs.hpp"
#include "whole_file.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::schedule;
using namespace ibroute::runner;

namespace {

// What the run needs besides the MPI world: the schedule, the hosts' identities and, given a
// database, the fabric for per-link figures.
struct Inputs {
  ScheduleDoc doc;
  std::optional<int64_t> schedule_id;
  std::unique_ptr<store::FabricStore> store;
  std::unique_ptr<ScanContext> fabric;  // scan the routes come from
  std::vector<int32_t> placement;
  std::optional<OwnEpoch> first_own;  // a following rank other than 0: its part of the first epoch
};

// A line of a file as quoted in a message: control characters escaped, at most 60 characters,
// so that the message stays one line whatever the file holds.
std::string printable(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    if (o.size() >= 60) return o + "...";
    if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      o += b;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o;
}

// A following rank other than 0: its own slice of the first epoch, found by its host (the
// placement's, else its port's GUID), with the epoch's timing; the phases stay rank 0's to read.
void read_first_slice(const RunOptions& o, int rank, Inputs& in) {
  uint64_t guid = 0;
  if (!in.placement.empty())
    guid = in.doc.identities[static_cast<size_t>(in.placement[static_cast<size_t>(rank)])].port_guid;
  else
    guid = runner::verbs::open_port(o.device, o.port, o.gid_index).port_guid;
  Schedule meta;
  in.first_own = read_own_epoch(o.follow, in.doc.epoch, guid, &meta);
  if (!in.first_own->has_slice)
    throw InputError("port GUID " + fabric::guid_hex(guid) + " is not a host of epoch " + std::to_string(in.doc.epoch) +
                     " (a run on another fabric? else map ranks with --placement)");
  Schedule& s = in.doc.schedule;
  s.method = std::move(meta.method), s.bound = meta.bound, s.timing = meta.timing, s.slots = std::move(meta.slots);
}

void load_inputs(const RunOptions& o, int world, int rank, Inputs& in) {
  const bool first_rank = rank == 0;
  std::string file = o.schedule_file;
  if ((o.schedule.empty() ? 0 : 1) + (o.schedule_file.empty() ? 0 : 1) + (o.follow.empty() ? 0 : 1) != 1)
    throw InputError("give one of --schedule (with --db), --schedule-file or --follow DIR");
  // Rank 0 stores the run; the other ranks only read (a shared file system: one writer).
  if (!o.db.empty())
    in.store =
        std::make_unique<store::FabricStore>(o.db, first_rank ? store::Access::read_write : store::Access::read_only);
  if (!o.schedule.empty()) {
    if (!in.store) throw InputError("--schedule needs --db");
    store::ScheduleInfo info = in.store->schedule_info(o.schedule);
    in.schedule_id = info.id;
    in.doc.schedule = in.store->load_schedule(info.id);
    store::ScanInfo scan = in.store->scan(info.scan_id);
    in.fabric =
        std::make_unique<ScanContext>(*in.store, o.scan ? o.scan : std::optional<int64_t>(info.scan_id), first_rank);
    // The hosts as the schedule's own scan names them: that scan is loaded once (twice only when
    // --scan routes the run over another one).
    in.doc.identities = in.fabric->scan_id == info.scan_id
                            ? identify_hosts(in.fabric->fabric, in.doc.schedule.hosts)
                            : identify_hosts(in.store->load_fabric(info.scan_id, false), in.doc.schedule.hosts);
    in.doc.fabric = {info.scan_id, scan.started_at, static_cast<uint8_t>(scan.lmc)};
  } else if (!o.follow.empty()) {
    // The epoch current now, read through its own directory (DIR/current may move on): whole at
    // rank 0, the host table elsewhere (the rank's own slice once it knows its host, below).
    const uint64_t k = current_epoch_of(o.follow);
    file = (std::filesystem::path(o.follow) / workflow::epoch_dir_name(k) / "schedule.json").string();
    in.doc = first_rank ? read_first_epoch(o.follow, k) : read_epoch_table(o.follow, k);
  } else {
    try {
      in.doc = from_json(read_file(file));
    } catch (const InputError& e) {
      throw InputError(file + ": " + e.what());
    }
  }
  if (o.schedule.empty()) {
    if (in.store) {
      in.fabric = std::make_unique<ScanContext>(*in.store, o.scan, first_rank);
      std::vector<std::string> problems;
      in.doc.schedule.hosts = resolve_hosts(in.fabric->fabric, in.doc, problems);
      if (!problems.empty())
        throw InputError(file + " does not fit scan " + std::to_string(in.fabric->scan_id) + ": " + problems.front());
    }
  }
  const size_t n = in.doc.schedule.hosts.size();
  if (!o.placement.empty()) {
    std::vector<int32_t> seen(n, -1);
    const HostNames names(in.doc.identities);
    for (const ListedHost& h : host_lines(read_file(o.placement, kMaxHostList))) {
      const std::string& line = h.name;
      // Resolved by the name itself (a node description is up to 64 bytes: an FQDN and " mlx5_0"),
      // never by its quoted form, which is cut for messages.
      const std::string where = o.placement + " line " + std::to_string(h.line);
      if (line.size() > 256 ||
          std::any_of(line.begin(), line.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
        throw InputError(where + ": '" + printable(line) +
                         "' is no host name (control characters, or longer than 256 bytes)");
      const auto r = static_cast<int32_t>(names.rank(line, where));
      if (seen[static_cast<size_t>(r)] >= 0)
        throw InputError(o.placement + ": '" + printable(line) + "' given for ranks " +
                         std::to_string(seen[static_cast<size_t>(r)]) + " and " + std::to_string(in.placement.size()));
      seen[static_cast<size_t>(r)] = static_cast<int32_t>(in.placement.size());
      in.placement.push_back(r);
    }
    if (in.placement.size() != static_cast<size_t>(world))
      throw InputError(o.placement + " places " + std::to_string(in.placement.size()) + " ranks but " +
                       std::to_string(world) + " were started");
  }
  if (!o.follow.empty() && !first_rank) read_first_slice(o, rank, in);
}

// A comma-separated list of numbers within +-limit (tests' clock hooks).
std::vector<double> parse_numbers(const std::string& text, double limit, const char* option) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !(std::abs(x) <= limit))
      throw InputError(std::string(option) + ": '" + printable(item) + "' is not a number within +-" +
                       std::to_string(static_cast<int64_t>(limit)));
    v.push_back(x);
  }
  return v;
}

// "500us", "2ms", "0.5s", or plain nanoseconds.
int64_t parse_duration_ns(const std::string& text, const char* option) {
  static const std::pair<const char*, double> units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  for (const auto& [u, f] : units) {
    const size_t n = std::strlen(u);
    if (text.size() > n && text.compare(text.size() - n, n, u) == 0) {
      const std::string num = text.substr(0, text.size() - n);
      if (num.back() == 'u' || num.back() == 'm' || num.back() == 'n') continue;  // "ms" read as "s"
      std::vector<double> v = parse_numbers(num, 1e6, option);
      if (v.size() == 1 && v[0] >= 0) return static_cast<int64_t>(v[0] * f);
    }
  }
  std::vector<double> v = parse_numbers(text, 1e15, option);
  if (v.size() != 1 || v[0] < 0)
    throw InputError(std::string(option) + ": '" + printable(text) + "' is not a duration (e.g. 500us, 2ms, 1s)");
  return static_cast<int64_t>(v[0]);
}

// The run's settings from the options and the schedule's timing; throws InputError.
RunConfig make_config(const RunOptions& o, const Schedule& s, uint64_t round_slots) {
  RunConfig cfg;
  cfg.device = o.device, cfg.port = o.port, cfg.gid_index = o.gid_index, cfg.sl = static_cast<uint8_t>(o.sl);
  cfg.unreliable = o.transport == "uc";
  cfg.message_size = o.message_size.empty()
                         ? s.timing.message_size
                         : static_cast<uint64_t>(parse_quantity(o.message_size, true, "--message-size"));
  if (cfg.message_size == 0) cfg.message_size = 64 * 1024;
  cfg.message_size = (cfg.message_size + 7) / 8 * 8;
  const double rate = o.rate.empty() ? s.timing.rate : parse_quantity(o.rate, false, "--rate");
  if (!(rate > 0)) throw InputError("the schedule carries no rate: give --rate BYTES_PER_S");
  // The schedule's slot at its own rate and message size, scaled to the run's.
  if (s.timing.slot_s > 0 && s.timing.rate > 0 && s.timing.message_size > 0)
    cfg.slot_per_message = s.timing.slot_s * s.timing.rate / static_cast<double>(s.timing.message_size);
  if (!(cfg.slot_per_message > 1e-9 && cfg.slot_per_message <= 1e9))
    throw InputError("the schedule's timing is out of range: slot_s x rate / message_size");
  cfg.slot_ns = cfg.slot_at(rate);
  const double round_s = static_cast<double>(cfg.slot_ns) * 1e-9 * static_cast<double>(round_slots);
  cfg.rounds = o.rounds         ? o.rounds
               : o.duration > 0 ? std::max<uint32_t>(1, static_cast<uint32_t>(o.duration / round_s + 0.5))
                                : 1;
  // Planned times are nanoseconds in 64 bits: a run of more than ~100 years is a mistake in the input.
  if (round_s * static_cast<double>(cfg.rounds) > 3e9)
    throw InputError("the run would last " + std::to_string(round_s * cfg.rounds / 86400 / 365) +
                     " years (slots x slot time x rounds): check the schedule's timing, --rate and --rounds");
  cfg.skip_after = std::max<uint32_t>(1, o.skip_after);
  cfg.drain_ns = static_cast<int64_t>(o.drain_s * 1e9);
  cfg.finish_timeout_ns = static_cast<int64_t>(o.finish_timeout_s * 1e9);
  cfg.sync_samples = o.sync_samples;
  cfg.verify = !o.no_verify;
  if (!(o.resync_s >= 0 && o.resync_s <= 3600)) throw InputError("--resync: give 0 (never) .. 3600 seconds");
  if (!(o.progress_s >= 0 && o.progress_s <= 86400)) throw InputError("--progress: give 0 (none) .. 86400 seconds");
  if (o.resync_samples < 1 || o.resync_samples > 1000) throw InputError("--resync-samples: give 1 .. 1000");
  if (o.max_anomalies > 1'000'000) throw InputError("--max-anomalies: at most 1000000 per rank");
  cfg.resync_interval_ns = static_cast<int64_t>(o.resync_s * 1e9);
  cfg.resync_samples = o.resync_samples;
  cfg.progress_interval_ns = static_cast<int64_t>(o.progress_s * 1e9);
  cfg.anomaly_cap = o.max_anomalies;
  if (!o.late_threshold.empty()) cfg.late_threshold_ns = parse_duration_ns(o.late_threshold, "--late-threshold");
  cfg.trace_dir = o.trace_dir;
  if (o.find_rate) {
    if (!o.trace_dir.empty())
      throw InputError("--trace and --find-rate: trace a run at the rate found, not the search");
    if (!(o.max_skipped >= 0 && o.max_skipped <= 1)) throw InputError("--max-skipped: give a share 0..1");
    if (o.find_rate_steps < 1 || o.find_rate_steps > 64) throw InputError("--find-rate-steps: give 1 .. 64");
    if (!(o.step_s >= 0.01 && o.step_s <= 3600)) throw InputError("--step-duration: give 0.01 .. 3600 seconds");
    cfg.find_rate = true;
    cfg.max_skipped_share = o.max_skipped;
    cfg.find_rate_steps = o.find_rate_steps;
    cfg.find_rate_step_ns = static_cast<int64_t>(o.step_s * 1e9);
    const double round_s = static_cast<double>(cfg.slot_ns) * 1e-9 * static_cast<double>(round_slots);
    cfg.rounds = std::max<uint32_t>(2, static_cast<uint32_t>(o.step_s / round_s));
  }
  cfg.schedule_name = s.name;
  if (!o.follow.empty() && o.find_rate)
    throw InputError("--follow and --find-rate: search the rate on a fixed schedule");
  cfg.follow.dead_after_ns = static_cast<int64_t>(o.dead_after_s * 1e9);
  for (double us : parse_numbers(o.test_skew_us, 1e12, "--test-clock-skew-us"))
    cfg.test_clock_skew_ns.push_back(static_cast<int64_t>(us * 1000));
  cfg.test_clock_ppm = parse_numbers(o.test_ppm, 1e5, "--test-clock-ppm");
  cfg.test_stall_rank = o.test_stall_rank, cfg.test_die_rank = o.test_die_rank, cfg.test_die_at = o.test_die_at;
  cfg.test_bad_rkey_rank = o.test_bad_rkey_rank;

  return cfg;
}

// The first counter snapshot of the run (rank 0), or nothing and `why`. auto: only where the run's
// own port is InfiniBand (RoCE has no subnet to ask) and without failing the run; on: failures are errors.
std::optional<fabric::CounterSnapshot> counters_before_run(const RunOptions& o, const RunConfig& cfg, Inputs& in,
                                                           std::string& why) {
  if (!in.fabric) {
    why = "no scan to read the ports of (--db)";
    return std::nullopt;
  }
  if (o.counters == "auto") {
    try {
      if (runner::verbs::open_port(cfg.device, cfg.port, cfg.gid_index).address.ethernet) {
        why = "rank 0's port is RoCE: no InfiniBand subnet whose port counters MADs could read";
        return std::nullopt;
      }
    } catch (const std::exception& e) {
      why = std::string("rank 0 has no usable RDMA port (") + e.what() + ")";
      return std::nullopt;
    }
  }
  std::optional<fabric::CounterSnapshot> s = live_counters(in.store.get(), *in.fabric, "run-before", why);
  if (!s && o.counters == "on") throw InputError("--counters on: " + why);
  return s;
}

// The ports' counters after the run beside the first reading: measured against what the run
// sent over each link by the scan's routes, as the report's links_measured.
std::optional<CounterWindow> measure_run(const RunOptions& o, Inputs& in, const RunSummary& sum, const RunOutcome& out,
                                         const std::optional<fabric::CounterSnapshot>& counters_before,
                                         std::string& counters_why, nlohmann::json& report) {
  // Measured against what the run sent over each link by the scan's routes.
  std::optional<CounterWindow> window;
  std::optional<fabric::LinkMeasures> measures;
  if (counters_before)
    // The first reading worked on this port: read again (a failure now is reported, not an error —
    // the run's figures stand).
    if (std::optional<fabric::CounterSnapshot> after =
            live_counters(in.store.get(), *in.fabric, "run-after", counters_why)) {
      window = CounterWindow{"around the run (rank 0)", counter_deltas(*counters_before, *after)};
      std::vector<uint64_t> sent(in.fabric->links.size(), 0);
      for (const LinkStat& l : sum.links) sent[static_cast<size_t>(l.link)] = l.bytes;
      measures = fabric::measure_links(window->deltas, in.fabric->links, sent, sum.seconds, o.xmit_wait_tick_ns);
    }
  if (in.fabric)
    report["links_measured"] = links_measured_json(in.fabric->fabric, in.fabric->links, window ? &*window : nullptr,
                                                   measures ? &*measures : nullptr, counters_why, out.rounds_run,
                                                   sum.seconds, o.xmit_wait_tick_ns);
  return measures ? window : std::nullopt;  // a window whose links could not be measured: none
}

// The repair list of the run (diagnosis_report.hpp): its pairs over their paths, the scan, the
// ports whose error counters rose — from the run's own figures, not its report read back.
nlohmann::json diagnose(const RunJsonContext& jc, const RunOutcome& out, const std::optional<CounterWindow>& window) {
  const workflow::FabricContext& c = *jc.fabric;
  const size_t n = jc.schedule.hosts.size();
  DiagnosisInput in;
  in.plan = &jc.schedule;
  in.pair_gbps = pair_gbps_of(out, n);                 // at any size: the report lists it only up to 2048 ranks
  for (float& g : in.pair_gbps) g = std::max(g, 0.f);  // none arrived: 0, as the report's matrix says it
  if (window) in.errors = error_ports(c.fabric, c.links, *window);
  in.node_send_gbps.assign(n, -1);
  for (const NodeStat& ns : jc.summary.nodes)
    if (ns.rank >= 0 && static_cast<size_t>(ns.rank) < n)
      in.node_send_gbps[static_cast<size_t>(ns.rank)] = ns.send_gbps;
  in.bad = bad_links(jc);
  return diagnosis_json(c, std::move(in));
}

// Rank 0 after the run: the report (stored, written, drawn, printed) and the exit code.
int report_run(const RunOptions& o, Inputs& in, const RunConfig& cfg, const RunOutcome& out,
               const std::optional<fabric::CounterSnapshot>& counters_before, std::string& counters_why) {
  const Schedule& s = in.doc.schedule;
  const fabric::Fabric* f = in.fabric ? &in.fabric->fabric : nullptr;
  const fabric::LinkIndex* links = in.fabric ? &in.fabric->links : nullptr;
  RunSummary sum = summarise(s, *out.merged, out.missing, f, links);
  RunJsonContext jc{s,
                    cfg.message_size,
                    out.slot_ns,
                    cfg.find_rate ? out.rounds_run : cfg.rounds,
                    cfg.skip_after,
                    cfg.sl,
                    out,
                    sum,
                    in.fabric.get(),
                    cfg.resync_interval_ns,
                    cfg.max_skipped_share,
                    cfg.unreliable,
                    cfg.slot_per_message,
                    wc_status_name};
  nlohmann::json report = run_report_json(jc);
  const std::optional<CounterWindow> window = measure_run(o, in, sum, out, counters_before, counters_why, report);
  if (in.fabric) report["diagnosis"] = diagnose(jc, out, window);
  if (in.store && !o.no_store) {
    store::RunRow row;
    row.schedule_id = in.schedule_id;
    if (in.fabric) row.scan_id = in.fabric->scan_id;
    row.ranks = static_cast<int64_t>(s.hosts.size()), row.rounds = out.rounds_run;
    row.planned = static_cast<int64_t>(sum.planned), row.ok = static_cast<int64_t>(sum.ok),
    row.skipped = static_cast<int64_t>(sum.skipped);
    row.failed = static_cast<int64_t>(sum.failed + sum.timeout + sum.lost),
    row.missing = static_cast<int64_t>(sum.missing_ranks.size());
    row.report_json = report.dump();
    report["run_id"] = in.store->save_run(row);
  }
  if (!o.output.empty()) {
    write_whole_file(o.output, report.dump(1) + "\n");
  }
  if (!o.svg.empty()) {
    if (!in.fabric) throw InputError("--svg needs --db: the picture shows the scan's links");
    fabric::DotOptions d;
    d.title = "run of " + s.name + ": transfers per link";
    for (const LinkStat& l : sum.links)
      d.load[{in.fabric->links.node(l.link), in.fabric->links.port(l.link)}] = {static_cast<long>(l.transfers), 0};
    write_whole_file(o.svg, fabric::render_svg(fabric::to_dot(in.fabric->fabric, d)));
  }
  if (o.json)
    print_json(report);
  else {
    print_run_summary(jc, std::cout);
    if (report.contains("diagnosis")) std::cout << diagnosis_text(report["diagnosis"]);
  }
  if (out.stop_signal) return 128 + out.stop_signal;
  if (cfg.find_rate) return out.best_step < out.steps.size() ? kExitOk : kExitFailure;
  const bool clean = sum.ok == sum.planned && sum.corrupt == 0 && sum.missing_ranks.empty();
  return clean ? kExitOk : kExitFailure;
}

}  // namespace

int execute_run(const RunOptions& o) {
  Bootstrap mpi(nullptr, nullptr);
  Inputs in;
  RunConfig cfg;
  std::string error;
  // The ports' counters around the run, read by rank 0 (docs/run-report.md, links_measured); with
  // --counters on, a first reading that fails stops every rank before the run, like bad input.
  std::optional<fabric::CounterSnapshot> counters_before;
  std::string counters_why = o.counters == "off" ? "not asked for (--counters off)" : "";
  try {
    load_inputs(o, mpi.size(), mpi.rank(), in);
    cfg = make_config(o, in.doc.schedule,
                      in.first_own ? in.first_own->round.starts.back() : slot_starts(in.doc.schedule).back());
    if (mpi.rank() == 0 && o.counters != "off") counters_before = counters_before_run(o, cfg, in, counters_why);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Everyone stops if anyone cannot read its inputs (a file missing on one node).
  std::vector<std::string> errors = mpi.agree(error);
  // An error every rank knows: each prints it, then they meet once more, so that a launcher that
  // ends the job at the first failed rank cannot cut another rank off before its message.
  auto fail_everywhere = [&](const std::string& msg) {
    std::cerr << "ibroute: " + msg + "\n" << std::flush;
    mpi.agree("");
    return kExitBadInput;
  };
  if (!error.empty()) return fail_everywhere(error);
  for (size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty()) return fail_everywhere("rank " + std::to_string(r) + ": " + errors[r]);

  const Schedule& s = in.doc.schedule;
  RankMapping map;
  for (const HostIdentity& h : in.doc.identities)
    map.port_guids.push_back(h.port_guid), map.base_lids.push_back(h.base_lid);
  map.placement = in.placement;
  if (!o.follow.empty()) follow_epochs(o.follow, in.doc, cfg.follow), cfg.follow.first_own = std::move(in.first_own);

  if (mpi.rank() == 0)
    std::cerr << "run: " << s.hosts.size() << " ranks, " << s.phases.size() << " phases x " << cfg.rounds << " rounds, "
              << cfg.message_size << " B per transfer every " << static_cast<double>(cfg.slot_ns) / 1000 << " us\n";
  RunOutcome out;
  try {
    out = run_schedule(mpi, s, map, cfg);
    if (out.root && !out.merged) throw RunError("the run left no results");
  } catch (const RunError& e) {
    if (e.everywhere) return fail_everywhere(e.what());
    throw InputError(e.what());
  }
  if (!out.root) return kExitOk;

  return report_run(o, in, cfg, out, counters_before, counters_why);
}

}  // namespace ibroute::cli
