// The expectation file `ibroute accept` judges by (docs/acceptance.md). Every value is checked where it is read:
// type, range, rows as long as their columns, ranks within the run; every failure is one
// InputError naming the file and the JSON pointer of the value, e.g.
// "expect.json: /lmc: 257 is not an LMC (0..7)". nlohmann's own exceptions never escape.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text_input.hpp"
#include "json_input.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/model.hpp"

namespace ibroute::workflow {

namespace json_input = ibroute::json_input;

// The expectation file: what "accepted" means (docs/acceptance.md). Every key optional; an
// unknown key is an error (a typo must not silently drop a check). After parsing, every key
// present has the type and range the checks read it with.
inline constexpr double kFaultConfidence = 0.5, kFaultMaxShare = 0.75;  // the faults check's defaults

struct Expectation {
  nlohmann::json doc;  // as written, for the report
  // Typed, each checked once by parse_expectation: what the checks read (empty: no such check).
  std::optional<int> levels;                 // "topology", in switch levels
  std::optional<size_t> hosts;
  std::optional<int> link_width, lmc;
  std::optional<std::string> link_speed;
  size_t max_broken_links = 0;
  std::optional<double> max_routing_imbalance;
  bool congestion_free = true;
  std::optional<double> min_efficiency;
  std::optional<double> min_rate_per_node, min_sustainable_rate;  // bytes/s
  std::optional<double> max_skipped_share, max_clock_uncertainty_us, max_congestion;
  std::optional<uint64_t> message_size, max_link_errors;
  double xmit_wait_tick_ns = 0;  // 0: not given (no PortXmitWait share)
  std::string cabling;           // a cabling plan's file, as written (relative: to the expectation file's folder)
  double fault_confidence = kFaultConfidence, fault_max_share = kFaultMaxShare;
  // A value as the file wrote it ("0.001", "5G"), for the report's "expected" column.
  std::string text(const char* key) const {
    const nlohmann::json& v = doc.at(key);
    return v.is_string() ? v.get<std::string>() : v.dump();
  }
  static constexpr const char* kKeys[] = {"topology",        "hosts",
                                          "link_width",      "link_speed",
                                          "lmc",             "max_broken_links",
                                          "max_routing_imbalance", "congestion_free",
                                          "min_rate_per_node",     "max_skipped_share",
                                          "max_clock_uncertainty_us", "message_size",
                                          "min_sustainable_rate", "min_efficiency", "max_link_errors",
                                          "max_congestion", "xmit_wait_tick_ns", "fault_confidence", "fault_max_share",
                                          "cabling"};
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
    Expectation x;
    x.doc = e.v;
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
        x.levels = static_cast<int>(e["topology"].integer(1, 16, "a number of switch levels (1..16)"));
      } else if (topology_levels(e["topology"].text()) < 1) {
        fail("/topology", "topology must be \"two-level\", \"three-level\", \"N-level\" or a number of switch levels");
      } else {
        x.levels = topology_levels(e["topology"].text());
      }
    }
    if (e.has("hosts")) x.hosts = static_cast<size_t>(e["hosts"].integer(1, int64_t{1} << 24, "a number of hosts (1 or more)"));
    if (e.has("link_width")) {
      const int64_t w = e["link_width"].integer(1, 12, "a link width (1, 2, 4, 8 or 12 lanes)");
      if (!fabric::is_link_width(w)) fail("/link_width", std::to_string(w) + " is not a link width (1, 2, 4, 8 or 12 lanes)");
      x.link_width = static_cast<int>(w);
    }
    if (e.has("link_speed")) {
      const std::string s = e["link_speed"].text();
      if (fabric::lane_gbps(s) == 0)
        fail("/link_speed", shown(e["link_speed"].v) + " is not a lane speed (SDR DDR QDR FDR10 FDR EDR HDR NDR XDR)");
      x.link_speed = s;
    }
    if (e.has("lmc")) x.lmc = static_cast<int>(e["lmc"].integer(0, 7, "an LMC (0..7)"));
    if (e.has("max_broken_links")) x.max_broken_links = static_cast<size_t>(e["max_broken_links"].integer(0, INT32_MAX, "a number of links (0 or more)"));
    if (e.has("max_routing_imbalance")) x.max_routing_imbalance = e["max_routing_imbalance"].number(1, 1e9, "a ratio max/min (1 or more)");
    if (e.has("congestion_free")) x.congestion_free = e["congestion_free"].boolean();
    if (e.has("min_efficiency")) x.min_efficiency = e["min_efficiency"].number(0, 1, "an efficiency (0..1)");
    if (e.has("max_link_errors")) x.max_link_errors = static_cast<uint64_t>(e["max_link_errors"].integer(0, INT64_MAX, "a number of errors (0 or more)"));
    if (e.has("cabling")) {
      x.cabling = e["cabling"].text();
      if (x.cabling.empty() || x.cabling.size() > 4096 || std::any_of(x.cabling.begin(), x.cabling.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
        fail("/cabling", "not a file name (a reference ibnetdiscover output or a CSV switch,port,peer,peer_port)");
    }
    if (e.has("max_congestion")) x.max_congestion = e["max_congestion"].number(0, 1, "a share of the run's time (0..1)");
    if (e.has("fault_confidence")) x.fault_confidence = e["fault_confidence"].number(0, 1, "a confidence (0..1)");
    if (e.has("fault_max_share")) x.fault_max_share = e["fault_max_share"].number(0, 1, "a share of the planned rate (0..1)");
    if (e.has("xmit_wait_tick_ns")) {
      const double tick = e["xmit_wait_tick_ns"].number(0, 1e9, "nanoseconds per PortXmitWait tick (above 0)");
      if (!(tick > 0)) fail("/xmit_wait_tick_ns", "0 is not a tick: give the switch's PortXmitWait tick in nanoseconds (above 0)");
      x.xmit_wait_tick_ns = tick;
    }
    for (auto [key, into] : {std::pair{"min_rate_per_node", &x.min_rate_per_node}, std::pair{"min_sustainable_rate", &x.min_sustainable_rate}}) {
      if (!e.has(key)) continue;
      const At r = e[key];
      try {
        *into = parse_quantity(r.text(), false, key);
      } catch (const InputError& err) {
        fail(r.path, err.what());
      }
    }
    if (e.has("max_skipped_share")) x.max_skipped_share = e["max_skipped_share"].number(0, 1, "a share (0..1)");
    if (e.has("max_clock_uncertainty_us")) x.max_clock_uncertainty_us = e["max_clock_uncertainty_us"].number(0, 1e12, "microseconds (0 or more)");
    if (e.has("message_size")) {
      const At m = e["message_size"];
      double bytes = 0;
      try {
        bytes = parse_quantity(m.text(), true, "message_size");
      } catch (const InputError& err) {
        fail(m.path, err.what());
      }
      if (!(bytes >= 1 && bytes <= static_cast<double>(kMaxMessageSize))) fail(m.path, shown(m.v) + " is not a message size (1 B .. 1 TiB)");
      x.message_size = static_cast<uint64_t>(bytes);
    }
    return x;
  });
}

inline Expectation read_expectation(const std::string& path) { return parse_expectation(read_file(path), path); }

}  // namespace ibroute::workflow
