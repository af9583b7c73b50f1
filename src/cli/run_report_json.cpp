#include "run_report_json.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace ibroute::cli {

using namespace ibroute::runner;
using nlohmann::json;

namespace {

constexpr size_t kTop = 10;       // busiest / suspect links listed
constexpr size_t kMaxListed = 200;  // failed transfers listed one by one

std::string host(const RunJsonContext& c, int32_t rank) { return c.schedule.hosts[static_cast<size_t>(rank)].name; }

std::string path_of(const RunJsonContext& c, fabric::PathFinder& pf, const TransferRecord& t) {
  const schedule::Host& h = c.schedule.hosts[static_cast<size_t>(t.src)];
  std::vector<int32_t> path;
  if (h.node < 0 || pf.path(h.node, h.port, t.dlid, path) != fabric::RouteStatus::ok) return "no route";
  std::string s;
  for (int32_t l : path) s += (s.empty() ? "" : " | ") + link_name(*c.fabric, l);
  return s;
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
  return {{"link", link_name(*c.fabric, l.link)}, {"bytes", l.bytes}, {"transfers", l.transfers}, {"skipped", l.skipped},
          {"failed", l.failed}, {"bad_share", all ? static_cast<double>(l.skipped + l.failed) / all : 0.0}};
}

}  // namespace

json run_report_json(const RunJsonContext& c) {
  const RunSummary& s = c.summary;
  json j;
  j["format"] = "ibroute-run";
  j["version"] = 1;
  j["schedule"] = c.schedule.name;
  j["ranks"] = c.schedule.hosts.size();
  j["phases"] = c.schedule.phases.size();
  j["rounds"] = c.rounds;
  j["message_size"] = c.message_size;
  j["slot_ns"] = c.slot_ns;
  j["rate"] = static_cast<double>(c.message_size) / (static_cast<double>(c.slot_ns) * 1e-9);
  j["skip_after"] = c.skip_after;
  j["device"] = c.outcome.device;
  j["link_layer"] = c.outcome.ethernet ? "Ethernet" : "InfiniBand";
  j["totals"] = {{"planned", s.planned}, {"ok", s.ok}, {"skipped", s.skipped}, {"timeout", s.timeout}, {"failed", s.failed},
                 {"lost", s.lost}, {"corrupt", s.corrupt}, {"bytes_ok", s.bytes_ok}, {"seconds", s.seconds},
                 {"aggregate_gbps", s.aggregate_gbps},
                 {"skipped_share", s.planned ? static_cast<double>(s.skipped) / static_cast<double>(s.planned) : 0.0}};
  j["lateness_ns"] = {{"median", s.late_median_ns}, {"p99", s.late_p99_ns}, {"max", s.late_max_ns}};
  json missing = json::array();
  for (int32_t r : s.missing_ranks) missing.push_back({{"rank", r}, {"host", host(c, r)}});
  j["missing_ranks"] = missing;
  json clocks = json::array();
  int64_t worst_unc = 0;
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
      e["after"] = {{"offset_ns", rc.after.offset_ns}, {"uncertainty_ns", rc.after.uncertainty_ns}, {"drift_ppm", rc.drift_ppm}};
    clocks.push_back(e);
  }
  j["clock"] = {{"reference_rank", c.outcome.schedule_rank.empty() ? 0 : c.outcome.schedule_rank[0]},
                {"max_uncertainty_ns", worst_unc},
                {"ranks", clocks}};
  json nodes = json::array();
  for (const NodeStat& n : s.nodes)
    nodes.push_back({{"rank", n.rank}, {"host", host(c, n.rank)}, {"bytes_sent", n.bytes_sent}, {"bytes_received", n.bytes_received},
                     {"ok", n.ok}, {"skipped", n.skipped}, {"failed", n.failed}, {"send_gbps", n.send_gbps}});
  j["nodes"] = nodes;
  if (c.fabric) {
    j["scan_id"] = c.fabric->scan_id;
    json busy = json::array(), bad = json::array(), all = json::array();
    for (const LinkStat& l : busiest(s)) busy.push_back(link_json(c, l));
    for (const LinkStat& l : suspects(s)) bad.push_back(link_json(c, l));
    for (const LinkStat& l : s.links) all.push_back(link_json(c, l));
    j["busiest_links"] = busy;
    j["suspect_links"] = bad;
    j["links"] = all;
  }
  json failed = json::array();
  std::optional<fabric::PathFinder> finder;
  if (c.fabric) finder.emplace(c.fabric->fabric, c.fabric->links);
  for (const TransferRecord& t : c.outcome.records) {
    if (t.status == Status::ok || failed.size() >= kMaxListed) continue;
    json e{{"src", host(c, t.src)}, {"dst", host(c, t.dst)}, {"dlid", t.dlid}, {"seq", t.seq}, {"status", to_string(t.status)}};
    if (t.status == Status::failed) e["error"] = wc_status_name(t.wc_status);
    if (finder) e["path"] = path_of(c, *finder, t);
    failed.push_back(e);
  }
  j["not_ok"] = failed;
  json transfers = json::array();
  for (const TransferRecord& t : c.outcome.records)
    transfers.push_back({t.src, t.dst, t.dlid, t.seq, to_string(t.status), t.planned_ns - c.outcome.t0_ns,
                         t.posted_ns ? t.posted_ns - c.outcome.t0_ns : -1, t.completed_ns ? t.completed_ns - c.outcome.t0_ns : -1,
                         t.arrived_ns ? t.arrived_ns - c.outcome.t0_ns : -1, t.verified});
  j["transfer_columns"] = {"src", "dst", "dlid", "seq", "status", "planned_ns", "posted_ns", "completed_ns", "arrived_ns", "verified"};
  j["transfers"] = transfers;
  return j;
}

void print_run_summary(const RunJsonContext& c, std::ostream& out) {
  const RunSummary& s = c.summary;
  char line[512];
  std::snprintf(line, sizeof line, "run of '%s': %zu ranks, %u round(s), %zu transfers of %llu B on %s (%s)\n", c.schedule.name.c_str(),
                c.schedule.hosts.size(), c.rounds, s.planned, static_cast<unsigned long long>(c.message_size), c.outcome.device.c_str(),
                c.outcome.ethernet ? "RoCE" : "InfiniBand");
  out << line;
  std::snprintf(line, sizeof line, "  ok %zu, skipped %zu (%.2f %%), timed out %zu, failed %zu, lost %zu, corrupt %zu\n", s.ok, s.skipped,
                s.planned ? 100.0 * static_cast<double>(s.skipped) / static_cast<double>(s.planned) : 0.0, s.timeout, s.failed, s.lost,
                s.corrupt);
  out << line;
  std::snprintf(line, sizeof line, "  %.3f s, %.3f Gb/s in total; start lateness median %.1f us, p99 %.1f us, max %.1f us\n", s.seconds,
                s.aggregate_gbps, static_cast<double>(s.late_median_ns) / 1e3, static_cast<double>(s.late_p99_ns) / 1e3,
                static_cast<double>(s.late_max_ns) / 1e3);
  out << line;
  for (int32_t r : s.missing_ranks) out << "  MISSING rank " << r << " (" << host(c, r) << "): it never reported\n";
  out << "  clock offsets to rank 0 (rank: offset +- uncertainty, min RTT, drift):\n";
  for (const RankClock& rc : c.outcome.clocks) {
    std::snprintf(line, sizeof line, "    %4d %-16s %12.3f us +- %.3f us, RTT %.1f us%s\n", rc.rank, host(c, rc.rank).c_str(),
                  static_cast<double>(rc.before.offset_ns) / 1e3, static_cast<double>(rc.before.uncertainty_ns) / 1e3,
                  static_cast<double>(rc.before.min_rtt_ns) / 1e3,
                  rc.measured_after ? (", drift " + std::to_string(rc.drift_ppm) + " ppm").c_str() : "");
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

}  // namespace ibroute::cli
