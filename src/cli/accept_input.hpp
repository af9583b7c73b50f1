// What `ibroute accept` reads besides the database: the expectation file and the report of a run
// (`--run-report FILE`, or the one `--launch` leaves). Every value is checked where it is read:
// type, range, rows as long as their columns, ranks within the run; every failure is one
// InputError naming the file and the JSON pointer of the value, e.g.
// "expect.json: /lmc: 257 is not an LMC (0..7)". nlohmann's own exceptions never escape.
// Header-only, so that the fuzz targets (tests/fuzz) test exactly this code.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "json_input.hpp"
#include "ibroute/fabric/error.hpp"

namespace ibroute::cli {

namespace json_input = ibroute::json_input;

// The expectation file: what "accepted" means (docs/acceptance.md). Every key optional; an
// unknown key is an error (a typo must not silently drop a check). After parsing, every key
// present has the type and range the checks read it with.
struct Expectation {
  nlohmann::json doc;
  static constexpr const char* kKeys[] = {"topology",        "hosts",
                                          "link_width",      "link_speed",
                                          "lmc",             "max_broken_links",
                                          "max_routing_imbalance", "congestion_free",
                                          "min_rate_per_node",     "max_skipped_share",
                                          "max_clock_uncertainty_us", "message_size",
                                          "min_sustainable_rate", "min_efficiency", "max_link_errors",
                                          "max_congestion", "xmit_wait_tick_ns"};
};

inline constexpr uint64_t kMaxMessageSize = uint64_t{1} << 40;  // 1 TiB per transfer

// "two-level" -> 2, "three-level" -> 3, "4-level" -> 4, "single-level" -> 1; 0 when not a level count.
inline int topology_levels(const std::string& t) {
  if (t == "single-level" || t == "one-level") return 1;
  if (t == "two-level") return 2;
  if (t == "three-level") return 3;
  if (t.size() >= 7 && t.ends_with("-level") && t.size() <= 8) {
    int n = 0;
    for (char c : t.substr(0, t.size() - 6)) {
      if (c < '0' || c > '9') return 0;
      n = n * 10 + (c - '0');
    }
    return n >= 1 && n <= 16 ? n : 0;
  }
  return 0;
}

inline Expectation parse_expectation(std::string_view text, const std::string& source) {
  using namespace json_input;
  return read_document(text, source, "an expectation file", [](const At& e) {
    for (auto it = e.v.begin(); it != e.v.end(); ++it) {
      bool known = false;
      for (const char* k : Expectation::kKeys) known = known || it.key() == k;
      if (known) continue;
      std::string k = shown(json(it.key()));  // escaped, short: the message stays one line
      k = k.substr(1, k.size() - (k.ends_with('"') ? 2 : 1));
      fail("/" + k, "unknown key '" + k + "' (see docs/acceptance.md)");
    }
    if (e.has("topology")) {
      if (e["topology"].v.is_number()) {
        e["topology"].integer(1, 16, "a number of switch levels (1..16)");
      } else if (topology_levels(e["topology"].text()) < 1) {
        fail("/topology", "topology must be \"two-level\", \"three-level\", \"N-level\" or a number of switch levels");
      }
    }
    if (e.has("hosts")) e["hosts"].integer(1, int64_t{1} << 24, "a number of hosts (1 or more)");
    if (e.has("link_width")) {
      const int64_t w = e["link_width"].integer(1, 12, "a link width (1, 2, 4, 8 or 12 lanes)");
      if (!fabric::is_link_width(w)) fail("/link_width", std::to_string(w) + " is not a link width (1, 2, 4, 8 or 12 lanes)");
    }
    if (e.has("link_speed")) {
      const std::string s = e["link_speed"].text();
      if (fabric::lane_gbps(s) == 0)
        fail("/link_speed", shown(e["link_speed"].v) + " is not a lane speed (SDR DDR QDR FDR10 FDR EDR HDR NDR XDR)");
    }
    if (e.has("lmc")) e["lmc"].integer(0, 7, "an LMC (0..7)");
    if (e.has("max_broken_links")) e["max_broken_links"].integer(0, INT32_MAX, "a number of links (0 or more)");
    if (e.has("max_routing_imbalance")) e["max_routing_imbalance"].number(1, 1e9, "a ratio max/min (1 or more)");
    if (e.has("congestion_free")) e["congestion_free"].boolean();
    if (e.has("min_efficiency")) e["min_efficiency"].number(0, 1, "an efficiency (0..1)");
    if (e.has("max_link_errors")) e["max_link_errors"].integer(0, INT64_MAX, "a number of errors (0 or more)");
    if (e.has("max_congestion")) e["max_congestion"].number(0, 1, "a share of the run's time (0..1)");
    if (e.has("xmit_wait_tick_ns")) {
      const double tick = e["xmit_wait_tick_ns"].number(0, 1e9, "nanoseconds per PortXmitWait tick (above 0)");
      if (!(tick > 0)) fail("/xmit_wait_tick_ns", "0 is not a tick: give the switch's PortXmitWait tick in nanoseconds (above 0)");
    }
    for (const char* key : {"min_rate_per_node", "min_sustainable_rate"}) {
      if (!e.has(key)) continue;
      const At r = e[key];
      try {
        parse_quantity(r.text(), false, key);
      } catch (const InputError& x) {
        fail(r.path, x.what());
      }
    }
    if (e.has("max_skipped_share")) e["max_skipped_share"].number(0, 1, "a share (0..1)");
    if (e.has("max_clock_uncertainty_us")) e["max_clock_uncertainty_us"].number(0, 1e12, "microseconds (0 or more)");
    if (e.has("message_size")) {
      const At m = e["message_size"];
      double bytes = 0;
      try {
        bytes = parse_quantity(m.text(), true, "message_size");
      } catch (const InputError& x) {
        fail(m.path, x.what());
      }
      if (!(bytes >= 1 && bytes <= static_cast<double>(kMaxMessageSize))) fail(m.path, shown(m.v) + " is not a message size (1 B .. 1 TiB)");
    }
    return Expectation{e.v};
  });
}

// The part of a run report (`ibroute run -o FILE`, src/cli/run_report_json.cpp) that accept uses.
struct RunReportInput {
  std::string schedule;
  size_t ranks = 0;
  uint64_t message_size = 0;
  double node_rate = 0;  // bytes/s of the slowest node; 0 without nodes
  std::vector<double> node_rates;  // bytes/s each rank sent
  double skipped_share = 0;
  double max_uncertainty_ns = 0;
  std::optional<size_t> missing_ranks;  // absent in the report: not checked
  nlohmann::json clock = nlohmann::json::array();     // rows: host, offset_ns, uncertainty_ns, min_rtt_ns, drift_ppm
  nlohmann::json suspects = nlohmann::json::array();  // rows: link, failed, skipped, transfers, bad_share
  nlohmann::json not_ok = nlohmann::json::array();    // rows: src, dst, dlid, status, error, path
  std::vector<float> pair_gbps;                       // ranks x ranks, only when ranks == the hosts given
  std::optional<double> sustainable_rate;             // bytes/s per node: a rate search's answer (run --find-rate)
  uint64_t rounds_run = 0;                            // 0: the report does not say
  double seconds = 0;                                 // first post to last completion
};

inline constexpr int64_t kMaxRanks = int64_t{1} << 20;

// `hosts`: the plan's host count; the per-pair matrix is filled only when the run had as many ranks.
inline RunReportInput parse_run_report(std::string_view text, const std::string& source, size_t hosts) {
  using namespace json_input;
  return read_document(text, source, "an ibroute run report", [hosts](const At& r) {
    RunReportInput in;
    if (!r.has("format") || r.v["format"] != "ibroute-run") fail("/format", "not an ibroute run report (\"format\" is not \"ibroute-run\")");
    const At ver = r["version"];
    if (!ver.v.is_number_integer() || (ver.v != 1 && ver.v != 2))
      fail(ver.path, "run report version " + shown(ver.v) + "; this ibroute reads versions 1 and 2");
    const bool v1 = ver.v == 1;
    in.schedule = r["schedule"].text();
    in.ranks = static_cast<size_t>(r["ranks"].integer(1, kMaxRanks, "a number of ranks (1 or more)"));
    const int64_t last = static_cast<int64_t>(in.ranks) - 1;
    const std::string rank_what = "a rank of this run (0.." + std::to_string(last) + ")";
    in.message_size = static_cast<uint64_t>(r["message_size"].integer(1, static_cast<int64_t>(kMaxMessageSize), "a message size (1 B .. 1 TiB)"));
    in.skipped_share = r["totals"]["skipped_share"].number(0, 1, "a share (0..1)");
    if (r["totals"].has("seconds")) in.seconds = r["totals"]["seconds"].number(0, 1e9, "seconds (0 or more)");
    if (r.has("rounds_run")) in.rounds_run = static_cast<uint64_t>(r["rounds_run"].integer(0, int64_t{1} << 40, "a number of rounds (0 or more)"));

    const At nodes = r["nodes"].list();
    if (nodes.size() != in.ranks)
      fail(nodes.path, "lists " + std::to_string(nodes.size()) + " ranks, the run had " + std::to_string(in.ranks));
    in.node_rate = nodes.size() ? INFINITY : 0;
    in.node_rates.assign(in.ranks, 0);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const At n = nodes[i];
      const auto rank = static_cast<size_t>(n["rank"].integer(0, last, rank_what));
      in.node_rates[rank] = n["send_gbps"].number(0, 1e9, "a rate in Gb/s (0 or more)") * 1e9 / 8;
      in.node_rate = std::min(in.node_rate, in.node_rates[rank]);
    }

    const At clock = r["clock"];
    in.max_uncertainty_ns = clock["max_uncertainty_ns"].number(0, 1e18, "nanoseconds (0 or more)");
    const At ranks = clock["ranks"].list();
    if (ranks.size() > in.ranks) fail(ranks.path, "lists " + std::to_string(ranks.size()) + " ranks, the run had " + std::to_string(in.ranks));
    for (size_t i = 0; i < ranks.size(); ++i) {
      const At c = ranks[i];
      c["rank"].integer(0, last, rank_what);
      json drift;
      if (c.has("after")) drift = c["after"]["drift_ppm"].number(-1e12, 1e12, "parts per million");
      in.clock.push_back({{"host", c["host"].text()},
                          {"offset_ns", c["offset_ns"].number(-1e18, 1e18, "nanoseconds")},
                          {"uncertainty_ns", c["uncertainty_ns"].number(0, 1e18, "nanoseconds (0 or more)")},
                          {"min_rtt_ns", c["min_rtt_ns"].number(0, 1e18, "nanoseconds (0 or more)")},
                          {"drift_ppm", drift}});
    }

    if (r.has("missing_ranks")) {
      const At missing = r["missing_ranks"].list();
      if (missing.size() > in.ranks) fail(missing.path, "lists " + std::to_string(missing.size()) + " ranks, the run had " + std::to_string(in.ranks));
      for (size_t i = 0; i < missing.size(); ++i) {
        missing[i]["rank"].integer(0, last, rank_what);
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
      json row{{"src", t["src"].text()},
               {"dst", t["dst"].text()},
               {"dlid", t["dlid"].integer(0, 0xBFFF, "a unicast LID (1..49151; 0 on RoCE)")},
               {"seq", t["seq"].integer(0, INT64_MAX, "a sequence number (0 or more)")},
               {"status", t["status"].text()}};
      if (t.has("error")) row["error"] = t["error"].text();
      if (t.has("path")) row["path"] = t["path"].text();
      in.not_ok.push_back(std::move(row));
    }

    if (!v1 && r.has("find_rate")) in.sustainable_rate = r["find_rate"]["answer"].number(0, 1e15, "a rate in bytes/s (0 or more)");
    const bool matrix = in.ranks == hosts;
    const size_t n = in.ranks;
    if (!v1) {
      // Version 2: the pairs' rates as a matrix of Mb/s (absent above 2048 ranks).
      if (!r.has("pair_mbps")) return in;
      const At rows = r["pair_mbps"].list();
      if (rows.size() != n) fail(rows.path, "has " + std::to_string(rows.size()) + " rows, the run had " + std::to_string(n) + " ranks");
      if (matrix) in.pair_gbps.assign(n * n, 0.f);
      for (size_t i = 0; i < n; ++i) {
        const At row = rows[i].list();
        if (row.size() != n) fail(row.path, "has " + std::to_string(row.size()) + " values, the run had " + std::to_string(n) + " ranks");
        for (size_t k = 0; k < n; ++k) {
          const double mbps = row[k].number(0, 1e9, "a rate in Mb/s (0 or more)");
          if (matrix) in.pair_gbps[i * n + k] = static_cast<float>(mbps / 1e3);
        }
      }
      return in;
    }
    // Version 1: the transfers as a table, one row per transfer, its columns named once.
    const At cols = r["transfer_columns"].list();
    auto column = [&](const char* name) {
      for (size_t i = 0; i < cols.size(); ++i)
        if (cols.v[i].is_string() && cols.v[i] == name) return i;
      fail(cols.path, std::string("no column \"") + name + "\"");
    };
    const size_t cs = column("src"), cd = column("dst"), cst = column("status"), cp = column("posted_ns"), cc = column("completed_ns");
    std::vector<double> bytes, span;
    if (matrix) bytes.assign(n * n, 0), span.assign(n * n, 0);
    const At rows = r["transfers"].list();
    for (size_t i = 0; i < rows.size(); ++i) {
      const At t = rows[i].list();
      if (t.size() != cols.size())
        fail(t.path, "a row of " + std::to_string(t.size()) + " values, the table has " + std::to_string(cols.size()) + " columns");
      const auto src = static_cast<size_t>(t[cs].integer(0, last, rank_what));
      const auto dst = static_cast<size_t>(t[cd].integer(0, last, rank_what));
      const bool ok = t[cst].text() == "ok";
      constexpr int64_t kNs = int64_t{1} << 62;  // times relative to the run's start; -1: never
      const int64_t posted = t[cp].integer(-kNs, kNs, "nanoseconds since the start (-1: never)");
      const int64_t completed = t[cc].integer(-kNs, kNs, "nanoseconds since the start (-1: never)");
      if (!ok || !matrix) continue;
      bytes[src * n + dst] += static_cast<double>(in.message_size);
      span[src * n + dst] += static_cast<double>(completed) - static_cast<double>(posted);
    }
    if (matrix) {
      in.pair_gbps.assign(n * n, 0.f);
      for (size_t k = 0; k < n * n; ++k) in.pair_gbps[k] = span[k] > 0 ? static_cast<float>(bytes[k] * 8 / span[k]) : 0.f;
    }
    return in;
  });
}

inline Expectation read_expectation(const std::string& path) { return parse_expectation(read_file(path), path); }

}  // namespace ibroute::cli
