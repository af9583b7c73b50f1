// The report of a run as accept reads it back (`ibroute run -o FILE`, or the one rank 0 stores):
// the reading side of run_report_write.hpp's schema, beside it. Every value is checked where it
// is read (type, range, rows as long as their columns, ranks within the run); every failure is one
// InputError naming the file and the JSON pointer of the value. nlohmann's exceptions never escape.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expectation.hpp"
#include "json_input.hpp"
#include "run_facts.hpp"

namespace ibroute::workflow {

// The part of a run report (`ibroute run -o FILE`, run_report_write.cpp) that accept uses.
struct RunReportInput {
  std::string schedule;
  std::optional<int64_t> scan_id;  // the scan the run's schedule was planned on; absent in older reports
  size_t ranks = 0;
  uint64_t rounds = 0;               // asked for; 0: the report does not say
  std::vector<uint64_t> port_guids;  // per rank, the port it ran on (nodes[].port_guid); empty in older reports
  std::vector<std::string> hosts;    // per rank, its host name as the report gives it ("" where it does not)
  struct PathRow {
    int32_t src = -1, dst = -1;
    uint16_t dlid = 0;
    std::string where;               // the JSON pointer of its DLID, for a one-line refusal
    std::string src_name, dst_name;  // not_ok's rows name hosts, not ranks
  };
  std::vector<PathRow>
      dlids;  // every (src, dst, DLID) the report lists (paths.rows, not_ok), checked against the schedule
  uint64_t message_size = 0;
  double node_rate = 0;            // bytes/s of the slowest node; 0 without nodes
  std::vector<double> node_rates;  // bytes/s each rank sent
  double skipped_share = 0;
  double max_uncertainty_ns = 0;
  std::optional<size_t> missing_ranks;                // absent in the report: not checked
  nlohmann::json clock = nlohmann::json::array();     // rows: host, offset_ns, uncertainty_ns, min_rtt_ns, drift_ppm
  nlohmann::json suspects = nlohmann::json::array();  // rows: link, failed, skipped, transfers, bad_share
  nlohmann::json not_ok = nlohmann::json::array();    // rows: src, dst, dlid, status, error, path
  std::vector<float> pair_gbps;                       // ranks x ranks, only when ranks == the hosts given
  std::optional<double> sustainable_rate;             // bytes/s per node: a rate search's answer (run --find-rate)
  uint64_t rounds_run = 0;                            // 0: the report does not say
  double seconds = 0;                                 // first post to last completion
  // The ports' counters around the run, as the run read them ("links_measured", checked and
  // rebuilt from the checked values); absent or {"measured": false, "why"} when it could not.
  nlohmann::json links_measured;
  std::vector<ErrorPort> error_links;                   // worst first
  std::vector<std::pair<std::string, double>> waiting;  // link, share of the run's time; worst first
  bool measured() const { return links_measured.is_object() && links_measured.value("measured", false); }
  // The run's own diagnosis of its pairs ("diagnosis.evidence.run"), read where the report has no
  // pair matrix (above 2048 ranks); links by name, resolved against the scan by the reader's user.
  struct RunSuspectRead {
    std::string link, path;  // path: the JSON pointer of its "link", for a one-line refusal
    int32_t rank = -1;
    bool receive = false;
    double factor = 1, slow_share = 0, others = 1, confidence = 0;
    uint64_t transfers = 0;
  };
  struct RunDiagnosisRead {
    size_t pairs = 0;
    double median_share = 1;
    std::vector<RunSuspectRead> suspects;
  };
  std::optional<RunDiagnosisRead> run_diagnosis;
};

inline constexpr int64_t kMaxRanks = int64_t{1} << 20;

namespace run_report_detail {

using json_input::At;
using json_input::fail;
using json_input::shown;

// The counts must agree with each other: a report whose numbers contradict themselves (a run of
// nothing, more skipped than planned, more rounds run than asked) describes no run.
inline void read_totals(const At& r, RunReportInput& in) {
  in.schedule = r["schedule"].text();
  if (r.has("scan_id")) in.scan_id = r["scan_id"].integer(1, INT64_MAX, "a scan id (1 or more)");
  in.ranks = static_cast<size_t>(r["ranks"].integer(1, kMaxRanks, "a number of ranks (1 or more)"));
  in.message_size = static_cast<uint64_t>(
      r["message_size"].integer(1, static_cast<int64_t>(kMaxMessageSize), "a message size (1 B .. 1 TiB)"));
  const At t = r["totals"];
  in.skipped_share = t["skipped_share"].number(0, 1, "a share (0..1)");
  if (t.has("seconds")) in.seconds = t["seconds"].number(0, 1e9, "seconds (0 or more)");
  if (t.has("planned")) {
    const int64_t planned =
        t["planned"].integer(1, INT64_MAX, "a number of planned transfers (1 or more: a run of nothing is no run)");
    int64_t ended = 0;
    for (const char* k : {"ok", "skipped", "timeout", "failed", "lost"}) {
      if (!t.has(k)) continue;
      const int64_t v =
          t[k].integer(0, planned, "a count of transfers (0 .. the planned " + std::to_string(planned) + ")");
      if (v > planned - ended)
        fail(t[k].path, "the transfers ok, skipped, timed out, failed and lost add up to more than the " +
                            std::to_string(planned) + " planned");
      ended += v;
    }
    if (t.has("skipped")) {
      const double share =
          static_cast<double>(t["skipped"].integer(0, planned, "a count")) / static_cast<double>(planned);
      if (std::abs(share - in.skipped_share) > 1e-3)
        fail(t["skipped_share"].path,
             "is " + shown(t["skipped_share"].v) + ", but skipped / planned is " + std::to_string(share));
    }
  }
  if (r.has("rounds"))
    in.rounds = static_cast<uint64_t>(r["rounds"].integer(0, int64_t{1} << 40, "a number of rounds (0 or more)"));
  if (r.has("rounds_run")) {
    in.rounds_run =
        static_cast<uint64_t>(r["rounds_run"].integer(0, int64_t{1} << 40, "a number of rounds (0 or more)"));
    // A rate search (find_rate) runs its steps' rounds one after another.
    if (in.rounds && in.rounds_run > in.rounds && !r.has("find_rate") && !r.has("epochs"))
      fail(r["rounds_run"].path,
           std::to_string(in.rounds_run) + " rounds run, but the run asked for " + std::to_string(in.rounds));
  }
}

inline std::string rank_what(const RunReportInput& in) {
  return "a rank of this run (0.." + std::to_string(in.ranks - 1) + ")";
}

inline void read_nodes(const At& r, RunReportInput& in) {
  const At nodes = r["nodes"].list();
  if (nodes.size() != in.ranks)
    fail(nodes.path, "lists " + std::to_string(nodes.size()) + " ranks, the run had " + std::to_string(in.ranks));
  in.node_rate = nodes.size() ? INFINITY : 0;
  in.node_rates.assign(in.ranks, 0);
  in.hosts.assign(in.ranks, std::string());
  std::vector<char> seen(in.ranks, 0);
  size_t with_guid = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const At n = nodes[i];
    const auto rank = static_cast<size_t>(n["rank"].integer(0, static_cast<int64_t>(in.ranks) - 1, rank_what(in)));
    if (seen[rank]++)
      fail(n["rank"].path, "rank " + std::to_string(rank) + " is listed twice (every rank of the run once)");
    in.node_rates[rank] = n["send_gbps"].number(0, 1e9, "a rate in Gb/s (0 or more)") * 1e9 / 8;
    in.node_rate = std::min(in.node_rate, in.node_rates[rank]);
    if (n.has("host")) in.hosts[rank] = n["host"].text();
    if (n.has("port_guid")) {
      if (in.port_guids.empty()) in.port_guids.assign(in.ranks, 0);
      if (!(in.port_guids[rank] = n["port_guid"].guid())) fail(n["port_guid"].path, "0 is not a port GUID");
      ++with_guid;
    }
  }
  if (with_guid && with_guid != nodes.size())
    fail(nodes.path, "names the port GUID of " + std::to_string(with_guid) + " of its " + std::to_string(nodes.size()) +
                         " ranks: of all or none");
}

inline void read_clock(const At& r, RunReportInput& in) {
  const At clock = r["clock"];
  in.max_uncertainty_ns = clock["max_uncertainty_ns"].number(0, 1e18, "nanoseconds (0 or more)");
  const At ranks = clock["ranks"].list();
  if (ranks.size() > in.ranks)
    fail(ranks.path, "lists " + std::to_string(ranks.size()) + " ranks, the run had " + std::to_string(in.ranks));
  for (size_t i = 0; i < ranks.size(); ++i) {
    const At c = ranks[i];
    c["rank"].integer(0, static_cast<int64_t>(in.ranks) - 1, rank_what(in));
    nlohmann::json drift;
    if (c.has("after")) drift = c["after"]["drift_ppm"].number(-1e12, 1e12, "parts per million");
    in.clock.push_back({{"host", c["host"].text()},
                        {"offset_ns", c["offset_ns"].number(-1e18, 1e18, "nanoseconds")},
                        {"uncertainty_ns", c["uncertainty_ns"].number(0, 1e18, "nanoseconds (0 or more)")},
                        {"min_rtt_ns", c["min_rtt_ns"].number(0, 1e18, "nanoseconds (0 or more)")},
                        {"drift_ppm", drift}});
  }
}

inline void read_problems(const At& r, RunReportInput& in) {
  if (r.has("missing_ranks")) {
    const At missing = r["missing_ranks"].list();
    if (missing.size() > in.ranks)
      fail(missing.path, "lists " + std::to_string(missing.size()) + " ranks, the run had " + std::to_string(in.ranks));
    for (size_t i = 0; i < missing.size(); ++i) {
      missing[i]["rank"].integer(0, static_cast<int64_t>(in.ranks) - 1, rank_what(in));
      missing[i]["host"].text();
    }
    in.missing_ranks = missing.size();
  }
  if (r.has("suspect_links")) {
    const At links = r["suspect_links"].list();
    for (size_t i = 0; i < links.size(); ++i) {
      const At l = links[i];
      in.suspects.push_back({{"link", l["link"].text()},
                             {"failed", l["failed"].integer(0, INT64_MAX, "a count (0 or more)")},
                             {"skipped", l["skipped"].integer(0, INT64_MAX, "a count (0 or more)")},
                             {"transfers", l["transfers"].integer(0, INT64_MAX, "a count (0 or more)")},
                             {"bad_share", l["bad_share"].number(0, 1, "a share (0..1)")}});
    }
  }
  const At not_ok = r["not_ok"].list();
  for (size_t i = 0; i < not_ok.size(); ++i) {
    const At t = not_ok[i];
    nlohmann::json row{{"src", t["src"].text()},
                       {"dst", t["dst"].text()},
                       {"dlid", t["dlid"].integer(0, 0xBFFF, "a unicast LID (1..49151; 0 on RoCE)")},
                       {"seq", t["seq"].integer(0, INT64_MAX, "a sequence number (0 or more)")},
                       {"status", t["status"].text()}};
    in.dlids.push_back(
        {-1, -1, static_cast<uint16_t>(row["dlid"].get<int64_t>()), t["dlid"].path, row["src"], row["dst"]});
    if (t.has("error")) row["error"] = t["error"].text();
    if (t.has("path")) row["path"] = t["path"].text();
    in.not_ok.push_back(std::move(row));
  }
}

// The per-path table (paths.rows): each row's ranks within the run, its DLID a unicast LID.
inline void read_paths(const At& r, RunReportInput& in) {
  if (!r.has("paths")) return;
  const At p = r["paths"];
  const At cols = p["columns"].list();
  auto column = [&](const char* name) -> std::optional<size_t> {
    for (size_t i = 0; i < cols.size(); ++i)
      if (cols.v[i].is_string() && cols.v[i] == name) return i;
    return std::nullopt;
  };
  const auto cs = column("src"), cd = column("dst"), cl = column("dlid");
  if (!cs || !cd || !cl) fail(cols.path, "no column \"src\", \"dst\" or \"dlid\"");
  const At rows = p["rows"].list();
  const int64_t last = static_cast<int64_t>(in.ranks) - 1;
  for (size_t i = 0; i < rows.size(); ++i) {
    const At row = rows[i].list();
    if (row.size() != cols.size())
      fail(row.path, "a row of " + std::to_string(row.size()) + " values, the table has " +
                         std::to_string(cols.size()) + " columns");
    in.dlids.push_back({static_cast<int32_t>(row[*cs].integer(0, last, rank_what(in))),
                        static_cast<int32_t>(row[*cd].integer(0, last, rank_what(in))),
                        static_cast<uint16_t>(row[*cl].integer(0, 0xBFFF, "a unicast LID (1..49151; 0 on RoCE)")),
                        row[*cl].path});
  }
}

// Version 2: the pairs' rates as a matrix of Mb/s (absent above 2048 ranks).
inline void read_pairs(const At& r, RunReportInput& in, bool matrix) {
  if (!r.has("pair_mbps")) return;
  const size_t n = in.ranks;
  const At rows = r["pair_mbps"].list();
  if (rows.size() != n)
    fail(rows.path, "has " + std::to_string(rows.size()) + " rows, the run had " + std::to_string(n) + " ranks");
  if (matrix) in.pair_gbps.assign(n * n, 0.f);
  for (size_t i = 0; i < n; ++i) {
    const At row = rows[i].list();
    if (row.size() != n)
      fail(row.path, "has " + std::to_string(row.size()) + " values, the run had " + std::to_string(n) + " ranks");
    for (size_t k = 0; k < n; ++k) {
      const double mbps = row[k].number(0, 1e9, "a rate in Mb/s (0 or more)");
      if (matrix) in.pair_gbps[i * n + k] = static_cast<float>(mbps / 1e3);
    }
  }
}

// The run's own diagnosis of its pairs, when the report lists no pair matrix to diagnose again.
inline void read_run_diagnosis(const At& r, RunReportInput& in) {
  if (r.has("pair_mbps") || !r.has("diagnosis") || !r["diagnosis"].has("evidence") ||
      !r["diagnosis"]["evidence"].has("run"))
    return;
  const At run = r["diagnosis"]["evidence"]["run"];
  if (!run.v.is_object() || !run.has("suspects")) return;  // a sentence: the run had no pairs to read
  RunReportInput::RunDiagnosisRead d;
  d.pairs = static_cast<size_t>(run["pairs"].integer(0, INT64_MAX, "a count of pairs (0 or more)"));
  d.median_share = run["median_share_of_plan"].number(0, 1, "a share (0..1)");
  const At list = run["suspects"].list();
  for (size_t i = 0; i < list.size(); ++i) {
    const At x = list[i];
    RunReportInput::RunSuspectRead s;
    s.link = x["link"].text(), s.path = x["link"].path;
    s.rank =
        static_cast<int32_t>(x["rank"].integer(-1, static_cast<int64_t>(in.ranks) - 1, "a rank of this run, or -1"));
    s.receive = x["receive"].boolean();
    s.factor = x["factor"].number(0, 1, "a share (0..1)");
    s.transfers = static_cast<uint64_t>(x["transfers"].integer(0, INT64_MAX, "a count (0 or more)"));
    s.slow_share = x["slow_share"].number(0, 1, "a share (0..1)");
    s.others = x["others"].number(0, 1, "a share (0..1)");
    s.confidence = x["confidence"].number(0, 1, "a confidence (0..1)");
    d.suspects.push_back(std::move(s));
  }
  in.run_diagnosis = std::move(d);
}

// Version 1: the transfers as a table, one row per transfer, its columns named once.
inline void read_transfers(const At& r, RunReportInput& in, bool matrix) {
  const size_t n = in.ranks;
  const int64_t last = static_cast<int64_t>(n) - 1;
  const At cols = r["transfer_columns"].list();
  auto column = [&](const char* name) {
    for (size_t i = 0; i < cols.size(); ++i)
      if (cols.v[i].is_string() && cols.v[i] == name) return i;
    fail(cols.path, std::string("no column \"") + name + "\"");
  };
  const size_t cs = column("src"), cd = column("dst"), cst = column("status"), cp = column("posted_ns"),
               cc = column("completed_ns");
  std::vector<double> bytes(matrix ? n * n : 0, 0), span(matrix ? n * n : 0, 0);
  const At rows = r["transfers"].list();
  for (size_t i = 0; i < rows.size(); ++i) {
    const At t = rows[i].list();
    if (t.size() != cols.size())
      fail(t.path, "a row of " + std::to_string(t.size()) + " values, the table has " + std::to_string(cols.size()) +
                       " columns");
    const auto src = static_cast<size_t>(t[cs].integer(0, last, rank_what(in)));
    const auto dst = static_cast<size_t>(t[cd].integer(0, last, rank_what(in)));
    const bool ok = t[cst].text() == "ok";
    constexpr int64_t kNs = int64_t{1} << 62;  // times relative to the run's start; -1: never
    const int64_t posted = t[cp].integer(-kNs, kNs, "nanoseconds since the start (-1: never)");
    const int64_t completed = t[cc].integer(-kNs, kNs, "nanoseconds since the start (-1: never)");
    if (!ok || !matrix) continue;
    bytes[src * n + dst] += static_cast<double>(in.message_size);
    span[src * n + dst] += static_cast<double>(completed) - static_cast<double>(posted);
  }
  if (!matrix) return;
  in.pair_gbps.assign(n * n, 0.f);
  for (size_t k = 0; k < n * n; ++k) in.pair_gbps[k] = span[k] > 0 ? static_cast<float>(bytes[k] * 8 / span[k]) : 0.f;
}

inline nlohmann::json optional_number(const At& a, double lo, double hi, const char* what) {
  return a.v.is_null() ? nlohmann::json(nullptr) : nlohmann::json(a.number(lo, hi, what));
}

// counter_window.hpp's "links_measured", each value checked; the lists accept judges by kept apart.
inline void read_links_measured(const At& r, RunReportInput& in) {
  if (!r.has("links_measured")) return;
  const At m = r["links_measured"].object();
  if (!m["measured"].boolean()) {
    in.links_measured = {{"measured", false}, {"why", m.has("why") ? m["why"].text() : std::string()}};
    return;
  }
  constexpr double kBytes = 1.8e19;
  nlohmann::json out{{"measured", true}, {"between", m["between"].text()}, {"rows", nlohmann::json::array()}};
  for (const char* k : {"planned_bytes", "measured_bytes"}) out[k] = m[k].number(0, kBytes, "bytes (0 or more)");
  for (const char* k : {"planned_links", "unread_links", "off_links"})
    out[k] = m[k].integer(0, INT64_MAX, "a number of links");
  out["ratio"] = optional_number(m["ratio"], 0, 1e12, "a ratio (0 or more)");
  const At rows = m["rows"].list();
  for (size_t i = 0; i < rows.size(); ++i) {
    const At x = rows[i];
    out["rows"].push_back({{"link", x["link"].text()},
                           {"planned_bytes", x["planned_bytes"].number(0, kBytes, "bytes (0 or more)")},
                           {"measured_bytes", x["measured_bytes"].number(0, kBytes, "bytes (0 or more)")},
                           {"ratio", optional_number(x["ratio"], 0, 1e12, "a ratio (0 or more)")},
                           {"xmit_wait", x["xmit_wait"].number(0, kBytes, "ticks (0 or more)")},
                           {"wait_share", optional_number(x["wait_share"], 0, 1e6, "a share of the time (0 or more)")},
                           {"errors", x["errors"].integer(0, INT64_MAX, "a count (0 or more)")}});
  }
  if (m.has("errors")) {
    const At errors = m["errors"].list();
    for (size_t i = 0; i < errors.size(); ++i) {
      const At e = errors[i];
      in.error_links.push_back(
          {e["link"].text(), e["what"].text(),
           static_cast<uint64_t>(e["errors"].integer(0, INT64_MAX, "a count (0 or more)")),
           e.has("guid") ? e["guid"].text() : std::string(),
           e.has("port") ? static_cast<int>(e["port"].integer(0, 254, "a port number (0..254)")) : -1});
    }
  }
  if (m.has("waiting")) {
    const At waiting = m["waiting"].list();
    for (size_t i = 0; i < waiting.size(); ++i)
      in.waiting.emplace_back(waiting[i]["link"].text(),
                              waiting[i]["wait_share"].number(0, 1e6, "a share of the time (0 or more)"));
  }
  in.links_measured = std::move(out);
}

}  // namespace run_report_detail

// `hosts`: the plan's host count; the per-pair matrix is filled only when the run had as many ranks
// (nullopt: always — the caller then holds the ranks to its schedule, run_binding.hpp).
inline RunReportInput parse_run_report(std::string_view text, const std::string& source, std::optional<size_t> hosts) {
  using namespace json_input;
  namespace d = run_report_detail;
  return read_document(text, source, "an ibroute run report", [hosts](const At& r) {
    RunReportInput in;
    if (!r.has("format") || r.v["format"] != "ibroute-run")
      fail("/format", "not an ibroute run report (\"format\" is not \"ibroute-run\")");
    const At ver = r["version"];
    if (!ver.v.is_number_integer() || (ver.v != 1 && ver.v != 2))
      fail(ver.path, "run report version " + shown(ver.v) + "; this ibroute reads versions 1 and 2");
    d::read_totals(r, in);
    d::read_nodes(r, in);
    d::read_clock(r, in);
    d::read_problems(r, in);
    d::read_paths(r, in);
    d::read_links_measured(r, in);
    if (ver.v == 1) {
      d::read_transfers(r, in, !hosts || in.ranks == *hosts);
      return in;
    }
    if (r.has("find_rate"))
      in.sustainable_rate = r["find_rate"]["answer"].number(0, 1e15, "a rate in bytes/s (0 or more)");
    d::read_pairs(r, in, !hosts || in.ranks == *hosts);
    d::read_run_diagnosis(r, in);
    return in;
  });
}

}  // namespace ibroute::workflow
