#include "run_report_write.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

namespace ibroute::workflow {

using namespace ibroute::runner;
using nlohmann::json;

namespace {

constexpr size_t kTop = 10;         // busiest / suspect links listed
constexpr size_t kMaxListed = 200;  // failed transfers listed one by one

std::string host(const RunJsonContext& c, int32_t rank) { return c.schedule.hosts[static_cast<size_t>(rank)].name; }

std::string path_of(const RunJsonContext& c, fabric::PathFinder& pf, int32_t src, uint16_t dlid) {
  const schedule::Host& h = c.schedule.hosts[static_cast<size_t>(src)];
  std::vector<int32_t> path;
  if (h.node < 0 || pf.path(h.node, h.port, dlid, path) != fabric::RouteStatus::ok) return "no route";
  std::string s;
  for (int32_t l : path) s += (s.empty() ? "" : " | ") + link_name(*c.fabric, l);
  return s;
}

json quantiles(const LogHistogram& h) {
  return {{"median", h.quantile(0.5)}, {"p99", h.quantile(0.99)}, {"max", h.max()}};
}

// Links ordered by what went wrong on them: failed first, then skipped, then by share.
std::vector<LinkStat> suspects(const RunSummary& s) {
  std::vector<LinkStat> v;
  for (const LinkStat& l : s.links)
    if (l.failed || l.skipped) v.push_back(l);
  std::sort(v.begin(), v.end(), [](const LinkStat& a, const LinkStat& b) {
    auto bad = [](const LinkStat& l) { return l.failed + l.skipped; };
    if (a.failed != b.failed) return a.failed > b.failed;
    if (bad(a) != bad(b)) return bad(a) > bad(b);
    return a.transfers < b.transfers;
  });
  if (v.size() > kTop) v.resize(kTop);
  return v;
}

std::vector<LinkStat> busiest(const RunSummary& s) {
  std::vector<LinkStat> v = s.links;
  std::sort(v.begin(), v.end(), [](const LinkStat& a, const LinkStat& b) { return a.bytes > b.bytes; });
  if (v.size() > kTop) v.resize(kTop);
  return v;
}

json link_json(const RunJsonContext& c, const LinkStat& l) {
  uint32_t all = l.transfers + l.skipped + l.failed;
  return {{"link", link_name(*c.fabric, l.link)},
          {"bytes", l.bytes},
          {"transfers", l.transfers},
          {"skipped", l.skipped},
          {"failed", l.failed},
          {"bad_share", all ? static_cast<double>(l.skipped + l.failed) / all : 0.0}};
}

}  // namespace

std::vector<BadLink> bad_links(const RunJsonContext& c) {
  std::vector<BadLink> out;
  if (!c.fabric) return out;
  for (const LinkStat& l : suspects(c.summary))
    out.push_back({link_name(*c.fabric, l.link), l.transfers, l.skipped, l.failed});
  return out;
}

namespace {

void write_header(const RunJsonContext& c, json& j) {
  const RunSummary& s = c.summary;
  j["format"] = "ibroute-run";
  j["version"] = 2;
  j["schedule"] = c.schedule.name;
  j["ranks"] = c.schedule.hosts.size();
  j["phases"] = c.schedule.phases.size();
  j["rounds"] = c.rounds;
  j["rounds_run"] = c.outcome.rounds_run;
  j["stopped_by"] = c.outcome.stop_signal ? json(sigabbrev_np(c.outcome.stop_signal)
                                                     ? std::string("SIG") + sigabbrev_np(c.outcome.stop_signal)
                                                     : "signal")
                                          : json(nullptr);
  j["message_size"] = c.message_size;
  j["slot_ns"] = c.slot_ns;
  j["rate"] = c.slot_per_message * static_cast<double>(c.message_size) /
              (static_cast<double>(c.slot_ns) * 1e-9);  // planned, per node
  j["skip_after"] = c.skip_after;
  j["service_level"] = c.service_level;
  j["service_level_applies"] = !c.outcome.ethernet;  // RoCE has no service levels
  // uc: a sender's completion means only "sent"; ok counts what the receivers took, lost the rest.
  j["transport"] = c.unreliable ? "uc" : "rc";
  j["device"] = c.outcome.device;
  j["link_layer"] = c.outcome.ethernet ? "Ethernet" : "InfiniBand";
  j["totals"] = {{"planned", s.planned},
                 {"ok", s.ok},
                 {"skipped", s.skipped},
                 {"timeout", s.timeout},
                 {"failed", s.failed},
                 {"lost", s.lost},
                 {"corrupt", s.corrupt},
                 {"bytes_ok", s.bytes_ok},
                 {"seconds", s.seconds},
                 {"aggregate_gbps", s.aggregate_gbps},
                 {"skipped_share", s.planned ? static_cast<double>(s.skipped) / static_cast<double>(s.planned) : 0.0}};
}

void write_timing(const RunJsonContext& c, json& j) {
  const RunMerge& m = *c.outcome.merged;
  j["lateness_ns"] = quantiles(m.late);
  j["completion_ns"] = quantiles(m.completion);
  json series = json::array();
  const double interval_s = static_cast<double>(m.throughput.interval_ns()) * 1e-9;
  for (uint64_t b : m.throughput.bytes()) series.push_back(static_cast<double>(b) * 8 / interval_s * 1e-9);
  j["throughput"] = {{"interval_s", interval_s}, {"gbps", series}};
  if (!c.outcome.steps.empty()) {
    // The rate search: every step, and the answer (the report's other figures are its best step's).
    json steps = json::array();
    for (const RateStep& st : c.outcome.steps)
      steps.push_back({{"rate", st.rate},
                       {"rounds", st.rounds},
                       {"planned", st.planned},
                       {"ok", st.ok},
                       {"skipped", st.skipped},
                       {"failed", st.failed},
                       {"skipped_share", st.skipped_share},
                       {"gbps_per_node", st.gbps_per_node},
                       {"held", st.held}});
    const bool found = c.outcome.best_step < c.outcome.steps.size();
    j["find_rate"] = {{"max_skipped_share", c.max_skipped_share},
                      {"steps", steps},
                      {"answer", found ? c.outcome.steps[c.outcome.best_step].rate : 0.0},
                      {"found", found}};
  }
  if (!m.epochs.empty()) {
    // A following run (--follow): each stretch under one epoch, its rounds and figures.
    size_t reported = 0;
    for (const NodeTotals& t : m.nodes) reported += t.reported;
    json ep = json::array();
    for (size_t k = 0; k < m.epochs.size(); ++k) {
      const EpochCounts& e = m.epochs[k];
      const uint64_t end =
          k + 1 < m.epochs.size() ? m.epochs[k + 1].from_round : std::max<uint64_t>(c.outcome.rounds_run, e.from_round);
      const uint64_t rounds = end - e.from_round;
      const double secs = static_cast<double>(rounds) * static_cast<double>(e.round_ns) * 1e-9;
      const double hosts = static_cast<double>(m.nodes.size() - e.dropped);
      json dropped = json::array();
      for (const auto& [at, r] : c.outcome.dropped)
        if (at == k) dropped.push_back(host(c, r));
      ep.push_back(
          {{"epoch", e.epoch},
           {"from_round", e.from_round},
           {"rounds", rounds},
           {"seconds", secs},
           {"hosts", m.nodes.size() - e.dropped},
           {"dropped", dropped},
           {"planned", e.planned},
           {"ok", e.ok},
           {"skipped", e.skipped},
           {"failed", e.failed},
           {"gbps_per_node", secs > 0 && hosts > 0 ? static_cast<double>(e.bytes) * 8 / secs * 1e-9 / hosts : 0.0},
           {"ranks_at_this_round", m.epoch_ranks_agreeing[k]},
           {"ranks_reporting", reported}});
    }
    j["epochs"] = ep;
  }
  json rss = json::array();
  for (const auto& [secs, kib] : c.outcome.rss_kib) rss.push_back({secs, kib});
  j["rank0_memory"] = {{"columns", {"seconds", "resident_kib"}}, {"rows", rss}};
}

void write_clocks(const RunJsonContext& c, json& j) {
  const RunMerge& m = *c.outcome.merged;
  json missing = json::array();
  for (int32_t r : c.summary.missing_ranks) missing.push_back({{"rank", r}, {"host", host(c, r)}});
  j["missing_ranks"] = missing;
  json clocks = json::array();
  int64_t worst_unc = 0, worst_residual = 0;
  for (const RankClock& rc : c.outcome.clocks) {
    worst_unc = std::max(worst_unc, rc.before.uncertainty_ns);
    json e{{"rank", rc.rank},
           {"host", host(c, rc.rank)},
           {"offset_ns", rc.before.offset_ns},
           {"uncertainty_ns", rc.before.uncertainty_ns},
           {"min_rtt_ns", rc.before.min_rtt_ns},
           {"median_rtt_ns", rc.before.median_rtt_ns},
           {"samples", rc.before.samples},
           {"kept", rc.before.kept}};
    if (rc.measured_after)
      e["after"] = {
          {"offset_ns", rc.after.offset_ns}, {"uncertainty_ns", rc.after.uncertainty_ns}, {"drift_ppm", rc.drift_ppm}};
    const NodeTotals& t = m.nodes[static_cast<size_t>(rc.rank)];
    if (t.reported) {
      worst_residual = std::max(worst_residual, t.clock.residual_max_ns);
      e["during"] = {{"offset_ns", t.clock.offset_ns},
                     {"drift_ppm", t.clock.drift_ppm},
                     {"resyncs", t.clock.resyncs},
                     {"resync_failures", t.clock.resync_failures},
                     {"residual_max_ns", t.clock.residual_max_ns},
                     {"residual_rms_ns", t.clock.residual_rms_ns}};
    }
    clocks.push_back(e);
  }
  j["clock"] = {{"reference_rank", c.outcome.schedule_rank.empty() ? 0 : c.outcome.schedule_rank[0]},
                {"max_uncertainty_ns", worst_unc},
                {"resync_interval_s", static_cast<double>(c.resync_interval_ns) * 1e-9},
                {"max_residual_ns", worst_residual},
                {"ranks", clocks}};
  if (m.truth.measured)
    j["test_true_lateness_ns"] = {{"min", m.truth.min_ns},
                                  {"max", m.truth.max_ns},
                                  {"abs_median", m.truth.abs_ns.quantile(0.5)},
                                  {"abs_p99", m.truth.abs_ns.quantile(0.99)},
                                  {"abs_max", m.truth.abs_ns.max()}};
}

void write_nodes_and_links(const RunJsonContext& c, json& j) {
  const RunSummary& s = c.summary;
  json nodes = json::array();
  for (const NodeStat& ns : s.nodes)
    nodes.push_back({{"rank", ns.rank},
                     {"host", host(c, ns.rank)},
                     {"bytes_sent", ns.bytes_sent},
                     {"bytes_received", ns.bytes_received},
                     {"ok", ns.ok},
                     {"skipped", ns.skipped},
                     {"failed", ns.failed},
                     {"send_gbps", ns.send_gbps},
                     {"late_p99_ns", ns.late_p99_ns},
                     {"completion_p99_ns", ns.completion_p99_ns},
                     {"completion_in_p99_ns", ns.completion_in_p99_ns}});
  // The port each rank ran on: what binds the report to its fabric (accept --run-report checks it).
  if (c.fabric)
    for (json& node : nodes) {
      const schedule::Host& h = c.schedule.hosts[node["rank"].get<size_t>()];
      if (h.node >= 0)
        node["port_guid"] = fabric::guid_hex(c.fabric->fabric.nodes[static_cast<size_t>(h.node)].ports[h.port].guid);
    }
  j["nodes"] = nodes;
  if (!c.fabric) return;
  j["scan_id"] = c.fabric->scan_id;
  json busy = json::array(), bad = json::array(), all = json::array();
  for (const LinkStat& l : busiest(s)) busy.push_back(link_json(c, l));
  for (const LinkStat& l : suspects(s)) bad.push_back(link_json(c, l));
  for (const LinkStat& l : s.links) all.push_back(link_json(c, l));
  j["busiest_links"] = busy;
  j["suspect_links"] = bad;
  j["links"] = all;
}

// Single transfers: the anomalies the ranks kept (not ok, corrupt, late).
void write_anomalies(const RunJsonContext& c, json& j) {
  const RunMerge& m = *c.outcome.merged;
  std::optional<fabric::PathFinder> finder;
  if (c.fabric) finder.emplace(c.fabric->fabric, c.fabric->links);
  json failed = json::array(), late = json::array();
  uint64_t late_kept = 0;
  for (const TransferRecord& t : m.anomalies) {
    const bool bad = t.status != Status::ok || t.verified == 2;
    if (!bad) ++late_kept;
    json& list = bad ? failed : late;
    if (list.size() >= kMaxListed) continue;
    json e{{"src", host(c, t.src)},
           {"dst", host(c, t.dst)},
           {"dlid", t.dlid},
           {"seq", t.seq},
           {"status", t.verified == 2 ? std::string("corrupt") : std::string(to_string(t.status))}};
    if (t.status == Status::failed)
      e["error"] = c.status_name ? std::string(c.status_name(t.wc_status)) : "status " + std::to_string(t.wc_status);
    if (t.posted_ns) e["late_ns"] = t.posted_ns - t.planned_ns;
    if (finder) e["path"] = path_of(c, *finder, t.src, t.dlid);
    list.push_back(e);
  }
  j["not_ok"] = failed;
  j["late"] = late;
  j["anomalies"] = {{"kept", m.anomalies.size()}, {"dropped", m.anomalies_dropped}, {"late_kept", late_kept}};
}

// Paths (source, destination, DLID): all in small runs, else those with a problem; and the pairs'
// rates as a matrix up to kPairMatrixUpTo ranks.
void write_paths(const RunJsonContext& c, json& j) {
  const RunMerge& m = *c.outcome.merged;
  const size_t n = c.schedule.hosts.size();
  const bool all_paths = m.paths.size() <= kAllPathsUpTo;
  json rows = json::array();
  size_t omitted = 0;
  for (size_t k = 0; k < m.paths.size(); ++k) {
    const PathCounters& p = m.paths[k];
    const Channel& ch = c.outcome.channels[k];
    const bool problem = p.not_ok() || p.corrupt || (p.arrived != p.ok && c.outcome.missing.empty());
    if (!all_paths && !problem) continue;
    if (rows.size() >= kAllPathsUpTo) {
      ++omitted;
      continue;
    }
    rows.push_back({ch.src, ch.dst, ch.dlid, p.planned, p.ok, p.skipped, p.timeout, p.failed, p.lost, p.arrived,
                    p.corrupt, p.bytes, p.busy_ns});
  }
  j["paths"] = {{"columns",
                 {"src", "dst", "dlid", "planned", "ok", "skipped", "timeout", "failed", "lost", "arrived", "corrupt",
                  "bytes", "busy_ns"}},
                {"listed", all_paths ? "all" : "problems"},
                {"omitted", omitted},
                {"rows", rows}};
  if (n <= kPairMatrixUpTo) {
    const std::vector<float> gbps = pair_gbps_of(c.outcome, n);
    json matrix = json::array();
    for (size_t i = 0; i < n; ++i) {
      json row = json::array();
      for (size_t k = 0; k < n; ++k) row.push_back(gbps[i * n + k] > 0 ? std::llround(gbps[i * n + k] * 1e3) : 0);
      matrix.push_back(std::move(row));
    }
    j["pair_mbps"] = std::move(matrix);
  }
}

}  // namespace

std::vector<float> pair_gbps_of(const RunOutcome& outcome, size_t n) {
  const RunMerge& m = *outcome.merged;
  // Channels are sorted by (source, destination, DLID): a pair's paths follow one another, so
  // its sums are made as they go, with no second n x n array.
  std::vector<float> rate(n * n, -1.f);
  for (size_t k = 0; k < m.paths.size();) {
    const Channel& ch = outcome.channels[k];
    double bytes = 0, busy = 0;
    for (; k < m.paths.size() && outcome.channels[k].src == ch.src && outcome.channels[k].dst == ch.dst; ++k)
      bytes += static_cast<double>(m.paths[k].bytes), busy += static_cast<double>(m.paths[k].busy_ns);
    if (busy > 0)
      rate[static_cast<size_t>(ch.src) * n + static_cast<size_t>(ch.dst)] = static_cast<float>(bytes * 8 / busy);
  }
  return rate;
}

json run_report_json(const RunJsonContext& c) {
  json j;
  write_header(c, j);
  write_timing(c, j);
  write_clocks(c, j);
  write_nodes_and_links(c, j);
  write_anomalies(c, j);
  write_paths(c, j);
  return j;
}

void print_run_summary(const RunJsonContext& c, std::ostream& out) {
  const RunSummary& s = c.summary;
  char line[512];
  std::snprintf(line, sizeof line, "run of '%s': %zu ranks, %u round(s), %zu transfers of %llu B on %s (%s, %s)\n",
                c.schedule.name.c_str(), c.schedule.hosts.size(), c.rounds, s.planned,
                static_cast<unsigned long long>(c.message_size), c.outcome.device.c_str(),
                c.outcome.ethernet ? "RoCE" : "InfiniBand", c.unreliable ? "UC: unacknowledged writes" : "RC");
  out << line;
  std::snprintf(line, sizeof line,
                "  ok %zu, skipped %zu (%.2f %%), timed out %zu, failed %zu, lost %zu, corrupt %zu\n", s.ok, s.skipped,
                s.planned ? 100.0 * static_cast<double>(s.skipped) / static_cast<double>(s.planned) : 0.0, s.timeout,
                s.failed, s.lost, s.corrupt);
  out << line;
  std::snprintf(line, sizeof line,
                "  %.3f s, %.3f Gb/s in total; start lateness median %.1f us, p99 %.1f us, max %.1f us\n", s.seconds,
                s.aggregate_gbps, static_cast<double>(s.late_median_ns) / 1e3, static_cast<double>(s.late_p99_ns) / 1e3,
                static_cast<double>(s.late_max_ns) / 1e3);
  out << line;
  std::snprintf(line, sizeof line, "  completion median %.1f us, p99 %.1f us, max %.1f us\n",
                static_cast<double>(s.completion_median_ns) / 1e3, static_cast<double>(s.completion_p99_ns) / 1e3,
                static_cast<double>(s.completion_max_ns) / 1e3);
  out << line;
  if (!c.outcome.steps.empty()) {
    out << "  rate search (skipped share at most " << c.max_skipped_share << "):\n";
    for (const RateStep& st : c.outcome.steps) {
      std::snprintf(line, sizeof line, "    %12.4g B/s per node: skipped %.4f %%, %.3f Gb/s per node  %s\n", st.rate,
                    100 * st.skipped_share, st.gbps_per_node, st.held ? "holds" : "too fast");
      out << line;
    }
    if (c.outcome.best_step < c.outcome.steps.size())
      out << "  the highest rate that held: " << c.outcome.steps[c.outcome.best_step].rate
          << " B/s per node (the other figures of this report are that step's)\n";
    else
      out << "  no rate held\n";
  }
  if (c.outcome.stop_signal)
    out << "  ended early by " << strsignal(c.outcome.stop_signal) << " after " << c.outcome.rounds_run << " of "
        << c.rounds << " rounds\n";
  for (int32_t r : s.missing_ranks) out << "  MISSING rank " << r << " (" << host(c, r) << "): it never reported\n";
  out << "  clock offsets to rank 0 (rank: offset +- uncertainty, min RTT, drift; during the run: re-measurements, "
         "worst error)\n";
  size_t shown = 0;
  for (const RankClock& rc : c.outcome.clocks) {
    if (++shown > 32) {
      out << "    ... " << c.outcome.clocks.size() - 32 << " more in the JSON report\n";
      break;
    }
    const NodeTotals& t = c.outcome.merged->nodes[static_cast<size_t>(rc.rank)];
    std::snprintf(line, sizeof line,
                  "    %4d %-16s %12.3f us +- %.3f us, RTT %.1f us%s; %u resyncs, worst error %.1f us\n", rc.rank,
                  host(c, rc.rank).c_str(), static_cast<double>(rc.before.offset_ns) / 1e3,
                  static_cast<double>(rc.before.uncertainty_ns) / 1e3, static_cast<double>(rc.before.min_rtt_ns) / 1e3,
                  rc.measured_after ? (", drift " + std::to_string(rc.drift_ppm) + " ppm").c_str() : "",
                  t.clock.resyncs, static_cast<double>(t.clock.residual_max_ns) / 1e3);
    out << line;
  }
  if (!c.fabric) return;
  out << "  busiest links:\n";
  for (const LinkStat& l : busiest(s))
    out << "    " << link_name(*c.fabric, l.link) << ": " << l.transfers << " transfers, " << l.bytes << " B\n";
  std::vector<LinkStat> bad = suspects(s);
  if (!bad.empty()) out << "  links under the skipped and failed transfers:\n";
  for (const LinkStat& l : bad)
    out << "    " << link_name(*c.fabric, l.link) << ": " << l.failed << " failed, " << l.skipped << " skipped of "
        << l.transfers + l.failed + l.skipped << "\n";
}

}  // namespace ibroute::workflow
