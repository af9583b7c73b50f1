#include "accept_html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "ibroute/fabric/model.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using nlohmann::json;
using workflow::Heatmap;

namespace {

std::string esc(const std::string& s) { return ibroute::fabric::markup_escape(s); }

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v.get<double>());
    return b;
  }
  if (v.is_null()) return "—";
  return v.dump();
}

// Share of the expected rate to colour: red (nothing) through yellow (half) to green (all of it or
// more) — a run that delivers what was planned is all green, a slow pair stands out in red.
struct Rgb {
  double r, g, b;
};
constexpr Rgb kNone{215, 48, 39}, kHalf{254, 224, 139}, kFull{26, 152, 80};

std::string hex(const Rgb& c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(c.r + 0.5), static_cast<int>(c.g + 0.5),
                static_cast<int>(c.b + 0.5));
  return buf;
}

std::string colour(double share) {
  share = std::clamp(std::isfinite(share) ? share : 0.0, 0.0, 1.0);
  const Rgb& a = share < 0.5 ? kNone : kHalf;
  const Rgb& b = share < 0.5 ? kHalf : kFull;
  const double t = share < 0.5 ? share * 2 : share * 2 - 1;
  return hex({a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t});
}

// A share as the terminal prints it: "54.8 %", not 0.5482.
std::string percent_text(const json& share) {
  if (!share.is_number()) return "—";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", share.get<double>() * 100);
  return b;
}

std::string gbps_text(double g) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", g);
  return b;
}

// The scale under the map: the gradient from nothing to all of each pair's plan, and grey.
std::string legend_svg() {
  std::ostringstream o;
  o << "<svg id=\"heatmap-legend\" xmlns=\"http://www.w3.org/2000/svg\" width=\"620\" height=\"46\">"
    << "<defs><linearGradient id=\"share\"><stop offset=\"0\" stop-color=\"" << hex(kNone)
    << "\"/><stop offset=\"0.5\" stop-color=\"" << hex(kHalf) << "\"/><stop offset=\"1\" stop-color=\"" << hex(kFull)
    << "\"/></linearGradient></defs>"
    << "<rect x=\"40\" y=\"4\" width=\"300\" height=\"16\" fill=\"url(#share)\"/>"
    << "<text x=\"40\" y=\"36\" font-size=\"11\">0</text>"
    << "<text x=\"190\" y=\"36\" font-size=\"11\" text-anchor=\"middle\">50 %</text>"
    << "<text x=\"340\" y=\"36\" font-size=\"11\" text-anchor=\"end\">100 % of its plan</text>"
    << "<rect x=\"370\" y=\"4\" width=\"16\" height=\"16\" fill=\"#eeeeee\" stroke=\"#ccc\"/>"
    << "<text x=\"392\" y=\"16\" font-size=\"11\">no transfer planned</text></svg>";
  return o.str();
}

std::string heatmap_svg(const Heatmap& h) {
  const int px = std::max(2, static_cast<int>(512 / std::max<size_t>(1, h.cells)));
  const int side = px * static_cast<int>(h.cells);
  std::ostringstream o;
  o << "<svg id=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << side + 60 << "\" height=\"" << side + 30
    << "\" shape-rendering=\"crispEdges\"><g transform=\"translate(40,5)\">";
  for (size_t y = 0; y < h.cells; ++y)
    for (size_t x = 0; x < h.cells; ++x) {
      const float v = h.share[y * h.cells + x];
      o << "<rect x=\"" << x * px << "\" y=\"" << y * px << "\" width=\"" << px << "\" height=\"" << px << "\" fill=\""
        << (v < 0 ? std::string("#eeeeee") : colour(v)) << "\"/>";
      // Its figure in the cell's corner where there is room (a printed picture has no hover).
      if (px >= 24 && v >= 0 && x != y)
        o << "<text x=\"" << x * px + 2 << "\" y=\"" << y * px + 9 << "\" font-size=\"8\">"
          << static_cast<int>(v * 100 + 0.5) << "%</text>";
    }
  o << "<text x=\"0\" y=\"" << side + 18 << "\" font-size=\"11\">destination rank →  (0 … " << h.ranks - 1
    << ")</text><text x=\"-30\" y=\"12\" font-size=\"11\" transform=\"rotate(90,-30,12)\">source rank "
       "→</text></g></svg>";
  return o.str();
}

// Side-by-side bars: transfers per link direction and phase, round-robin against the plan. The
// counts span orders of magnitude (thousands of idle or single loads, a handful at the worst), so
// the y-axis is logarithmic, labelled, and every bar carries its count: none is invisible.
std::string histogram_svg(const json& rr, const json& plan) {
  std::vector<int> keys;
  for (const json* h : {&rr, &plan})
    for (auto it = h->begin(); it != h->end(); ++it) keys.push_back(std::stoi(it.key()));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  double top = 1;
  for (const json* h : {&rr, &plan})
    for (auto it = h->begin(); it != h->end(); ++it) top = std::max(top, it.value().get<double>());
  const double decades = std::max(1.0, std::ceil(std::log10(top + 1)));
  const int bw = 22, gap = 14, height = 160, left = 60, head = 16;
  auto bar_height = [&](double v) {
    return v <= 0 ? 0 : std::max(2, static_cast<int>(height * std::log10(v + 1) / decades));
  };
  const int width = static_cast<int>(keys.size()) * (2 * bw + gap) + left + 20;
  std::ostringstream o;
  o << "<svg class=\"histogram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
    << height + head + 24 << "\" font-size=\"11\"><g transform=\"translate(0," << head << ")\">";
  // The y-axis: 1, 10, 100 ... (link, phase) pairs.
  o << "<line x1=\"" << left - 6 << "\" y1=\"0\" x2=\"" << left - 6 << "\" y2=\"" << height << "\" stroke=\"#666\"/>";
  for (int d = 0; d <= static_cast<int>(decades); ++d) {
    const int y = height - static_cast<int>(height * std::log10(std::pow(10.0, d) + 1) / decades);
    o << "<line x1=\"" << left - 10 << "\" y1=\"" << y << "\" x2=\"" << left - 6 << "\" y2=\"" << y
      << "\" stroke=\"#666\"/><text x=\"" << left - 12 << "\" y=\"" << y + 4
      << "\" text-anchor=\"end\" font-size=\"10\">" << static_cast<long long>(std::pow(10.0, d)) << "</text>";
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    const std::string key = std::to_string(keys[k]);
    int x = left + static_cast<int>(k) * (2 * bw + gap);
    for (int side = 0; side < 2; ++side) {
      const json& h = side ? plan : rr;
      double v = h.contains(key) ? h[key].get<double>() : 0;
      int bar = bar_height(v);
      o << "<rect x=\"" << x + side * bw << "\" y=\"" << height - bar << "\" width=\"" << bw - 2 << "\" height=\""
        << bar << "\" fill=\"" << (side ? "#2a7" : "#c44") << "\"><title>" << (side ? "plan" : "round-robin") << ": "
        << v << " (link, phase) pairs at " << key << "</title></rect>";
      if (v > 0)
        o << "<text x=\"" << x + side * bw + bw / 2 - 1 << "\" y=\"" << height - bar - 3
          << "\" text-anchor=\"middle\" font-size=\"8\">" << static_cast<long long>(v) << "</text>";
    }
    o << "<text x=\"" << x + bw - 1 << "\" y=\"" << height + 14 << "\" text-anchor=\"middle\">" << key << "</text>";
  }
  o << "</g></svg>";
  return o.str();
}

// Measured (the ports' PortXmitData) against planned bytes per link, one dot per link, both axes
// logarithmic (links differ by orders of magnitude), the diagonal where the two agree. Every value
// is printed in the axis labels and the dot's title; off links (beyond 1.25x either way) in red.
std::string measured_svg(const json& rows) {
  double top = 1;
  for (const json& x : rows) top = std::max({top, x["planned_bytes"].get<double>(), x["measured_bytes"].get<double>()});
  const double decades = std::max(1.0, std::ceil(std::log10(top)));
  const int size = 360, left = 70, bottom = 40, pad = 12;
  // 0 bytes sits on the axis (log of 1).
  auto pos = [&](double v) { return static_cast<double>(size) * std::log10(std::max(1.0, v)) / decades; };
  std::ostringstream o;
  o << "<svg id=\"measured-vs-planned\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + size + pad
    << "\" height=\"" << size + bottom + pad << "\" font-size=\"11\">";
  o << "<rect x=\"" << left << "\" y=\"" << pad << "\" width=\"" << size << "\" height=\"" << size
    << "\" fill=\"none\" stroke=\"#888\"/>";
  for (int d = 0; d <= static_cast<int>(decades); d += std::max(1, static_cast<int>(decades) / 6)) {
    const double at = size * d / decades;
    const std::string label = d == 0 ? "0" : "1e" + std::to_string(d);
    o << "<text x=\"" << left + at - 8 << "\" y=\"" << size + pad + 14 << "\">" << label << "</text>";
    o << "<text x=\"" << 4 << "\" y=\"" << size + pad - at + 4 << "\">" << label << "</text>";
  }
  o << "<line x1=\"" << left << "\" y1=\"" << size + pad << "\" x2=\"" << left + size << "\" y2=\"" << pad
    << "\" stroke=\"#aaa\" stroke-dasharray=\"4 3\"/>";
  for (const json& x : rows) {
    const double pl = x["planned_bytes"].get<double>(), me = x["measured_bytes"].get<double>();
    const bool off =
        x["ratio"].is_null() ? me > (1 << 20) : (x["ratio"].get<double>() > 1.25 || x["ratio"].get<double>() < 0.8);
    o << "<circle cx=\"" << left + pos(pl) << "\" cy=\"" << size + pad - pos(me) << "\" r=\"3\" fill=\""
      << (off ? "#c22" : "#2a7") << "\" fill-opacity=\"0.7\"><title>" << esc(x["link"].get<std::string>())
      << ": planned " << static_cast<uint64_t>(pl) << " B, measured " << static_cast<uint64_t>(me)
      << " B</title></circle>";
  }
  o << "<text x=\"" << left << "\" y=\"" << size + pad + 30
    << "\">planned bytes (plan x rounds over the scanned routes) to the right; up: "
       "measured (PortXmitData x 4)</text></svg>";
  return o.str();
}

std::string table(const json& rows, const std::vector<std::string>& cols, const std::string& id = "") {
  std::ostringstream o;
  o << "<table" << (id.empty() ? "" : " id=\"" + id + "\"") << "><tr>";
  for (const std::string& c : cols) o << "<th>" << esc(c) << "</th>";
  o << "</tr>";
  for (const json& r : rows) {
    o << "<tr>";
    for (const std::string& c : cols) o << "<td>" << esc(r.contains(c) ? text_of(r[c]) : "—") << "</td>";
    o << "</tr>";
  }
  o << "</table>";
  return o.str();
}

}  // namespace

namespace {

void html_verdict(std::ostringstream& o, const json& r) {
  const bool ok = r["accepted"].get<bool>();
  o << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ibroute acceptance: "
    << (ok ? "ACCEPTED" : "NOT ACCEPTED") << "</title><style>"
    << "body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}"
    << "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}th{background:#f3f3f3}"
    << ".pass{background:#dfd}.fail{background:#fdd}.skip{background:#eee}#verdict-line{font-size:1.6em;font-weight:"
       "bold}"
    << ".fig{overflow:auto;max-height:900px;border:1px solid #ddd;padding:4px}</style></head><body>";
  o << "<h1>Acceptance test of " << esc(text_of(r["fabric"]["name"])) << "</h1>";
  const int passed = r["passed"].get<int>(), failed = r["failed"].get<int>();
  const int unmeasured = static_cast<int>(r["checks"].size()) - passed - failed;
  // The headline is the verdict, in its words and colour, and says what it rests on.
  o << "<p id=\"verdict-line\" class=\"" << (ok ? "pass" : "fail")
    << "\" style=\"color:" << (ok ? "#14532d" : "#8b0000") << "\">" << (ok ? "ACCEPTED" : "NOT ACCEPTED") << " — "
    << passed << " of " << r["checks"].size() << " checks pass"
    << (failed ? ", " + std::to_string(failed) + " fail" : "")
    << (unmeasured ? ", " + std::to_string(unmeasured) + " not measured" : "")
    << (r["mode"] == "simulate" ? " (simulated: no hardware ran)" : "") << "</p>";
  o << "<p>scan " << r["fabric"]["scan_id"].get<int64_t>() << " (" << esc(text_of(r["fabric"]["scanned_at"])) << "), "
    << r["fabric"]["hosts"].get<size_t>() << " hosts, expectation <code>" << esc(text_of(r["expect_file"]))
    << "</code>, mode <b>" << esc(text_of(r["mode"])) << "</b>"
    << (r["mode"] == "simulate" ? " (the plan played on the scanned fabric by max-min fair sharing; "
                                  "no hardware was used)"
                                : "")
    << "</p>";
  o << "<h2>Verdict</h2><table "
       "id=\"verdict\"><tr><th>check</th><th>result</th><th>measured</th><th>expected</th><th>detail</th></tr>";
  for (const json& c : r["checks"]) {
    std::string res = c["result"].get<std::string>();
    o << "<tr class=\""
      << (res == "pass"   ? "pass"
          : res == "fail" ? "fail"
                          : "skip")
      << "\"><td>" << esc(c["check"].get<std::string>()) << "</td><td>" << esc(res) << "</td><td>"
      << esc(text_of(c["measured"])) << "</td><td>" << esc(text_of(c["expected"])) << "</td><td>"
      << esc(text_of(c.value("detail", json()))) << "</td></tr>";
  }
  o << "</table>";
}

// The plan's figures as plan, validate and the JSON name them: one per-node rate, the efficiency
// against the fabric and, where the routing is the limit, against the tables.
void html_plan_figures(std::ostringstream& o, const json& r) {
  const json& e = r["plan"]["efficiency"];
  const double rate = e["rate_per_node_gbps"].get<double>();
  o << "<p id=\"plan-rate\" data-gbps=\"" << rate << "\">Plan: " << gbps_text(rate) << " Gb/s per node"
    << (e["rate_is_estimate"].get<bool>() ? " (estimated)" : "") << ", ";
  if (e["broken"].get<size_t>())
    o << "no efficiency: " << e["broken"].get<size_t>() << " transfers have no working route";
  else
    o << "efficiency " << gbps_text(e["value"].get<double>()) << " against the fabric ("
      << esc(text_of(e["limited_by"])) << ")";
  if (e["routing_limits"].get<bool>()) {
    o << "; " << gbps_text(e["tables"]["value"].get<double>()) << " against the routing tables, which are the limit ("
      << esc(text_of(e["tables"]["limited_by"])) << "; ";
    const json& advice = e.value("routing_advice", json());
    if (advice.is_object() && advice["command"].is_string())
      o << "<code>" << esc(advice["command"].get<std::string>())
        << "</code> computes other tables, which pass its check here)";
    else if (advice.is_object() && advice["blocked_by"].is_string())
      o << "<code>ibroute routing</code> cannot lift it: " << esc(advice["blocked_by"].get<std::string>()) << ")";
    else
      o << "whether <code>ibroute routing</code> lifts it is not checked)";
  }
  o << ".</p>";
}

void html_heatmap(std::ostringstream& o, const Heatmap& heat) {
  o << "<h2>Per-pair bandwidth against the plan</h2>";
  if (heat.cells == 0) {
    o << "<p id=\"heatmap\">Not measured: the run report has no per-pair matrix (a run of more than 2048 ranks leaves "
         "it out; "
         "the per-link and per-node figures are complete).</p>";
    return;
  }
  o << "<p>Row: source rank, column: destination rank"
    << (heat.cells < heat.ranks ? "; " + std::to_string(heat.ranks) + " ranks binned into " +
                                      std::to_string(heat.cells) + " per side (mean)"
                                : "")
    << "; colour: the share of its own planned rate each pair reached in " << esc(heat.measured_by)
    << " (the plan's rate for a pair: its path's links shared by the transfers of its phase) — green all of it, yellow "
       "half, red "
       "nothing; grey: no transfer planned. The rate each node must reach is judged in the verdict above.</p><div "
       "class=\"fig\">"
    << heatmap_svg(heat) << legend_svg() << "</div>";
  if (!heat.slowest.empty()) {
    json rows = json::array();
    auto who = [&](size_t r) {
      return std::to_string(r) + (r < heat.names.size() ? " " + heat.names[r] : std::string());
    };
    for (const Heatmap::Pair& p : heat.slowest)
      rows.push_back({{"source", who(p.src)},
                      {"destination", who(p.dst)},
                      {"Gb/s", gbps_text(p.gbps)},
                      {"planned Gb/s", gbps_text(p.planned_gbps)},
                      {"share of plan", percent_text(p.gbps / p.planned_gbps)}});
    o << "<p>The pairs furthest below their plan (rank and host):</p>"
      << table(rows, {"source", "destination", "Gb/s", "planned Gb/s", "share of plan"}, "slowest-pairs");
  }
}

void html_plan(std::ostringstream& o, const json& r) {
  // The caption in the page, not the picture: a picture's text is cut at its edge.
  o << "<h2>Transfers per link: round-robin against the plan</h2><div class=\"fig\">"
    << histogram_svg(r["load"]["round_robin"]["histogram"], r["load"]["plan"]["histogram"])
    << "<p class=\"caption\">x: transfers on a link direction at once; y: (link, phase) pairs with that load "
       "(logarithmic). "
       "Red: round-robin (name order, base LIDs), green: the plan.</p></div>";
  const json& plan = r["load"]["plan"];
  o << table(json::array({json{{"pattern", "round-robin (name order, base LIDs)"},
                               {"worst link", r["load"]["round_robin"]["max_load"]},
                               {"congested share", percent_text(r["load"]["round_robin"]["congested_share"])}},
                          json{{"pattern", "plan (" + r["plan"]["order"].get<std::string>() + " order)"},
                               {"worst link", plan["max_load"]},
                               {"least possible", plan["lower_bound"]["worst"]},
                               {"congested share", percent_text(plan["congested_share"])}}}),
             {"pattern", "worst link", "least possible", "congested share"}, "loads");
  o << "<p id=\"plan-order\">Plan: ranks in " << esc(r["plan"]["order"].get<std::string>()) << " order";
  for (const json& t : r["plan"]["orders_tried"])
    if (t["order"] != r["plan"]["order"])
      o << " (" << esc(t["order"].get<std::string>()) << " order tried: worst link " << t["max_load"].get<int>() << ", "
        << t["phases_over"].get<size_t>() << " phases over the bound)";
  o << ". No choice of DLIDs gets the worst link of these phases below " << plan["lower_bound"]["worst"].get<int>();
  if (!plan["lower_bound"]["where"].get<std::string>().empty())
    o << " (phase " << plan["lower_bound"]["phase"].get<int>() << ": "
      << esc(plan["lower_bound"]["where"].get<std::string>()) << ")";
  o << ".</p>";
  if (!plan["worst_links"].empty()) {
    o << "<h3>Links over the bound in the plan, worst first (" << plan["links_over"].get<size_t>() << " in all)</h3>";
    o << table(plan["worst_links"], {"link", "load", "capacity", "transfers"}, "worst-links");
  }
}

void html_measured(std::ostringstream& o, const json& r) {
  o << "<h2>Measured against planned, per link (the ports' own counters)</h2>";
  const json& lm = r["links_measured"];
  if (!lm.value("measured", false)) {
    o << "<p id=\"links-measured\">Not measured: " << esc(text_of(lm.value("why", json("no counter snapshots"))))
      << ".</p>";
  } else {
    char head[512];
    std::snprintf(
        head, sizeof head,
        "%s: the counters saw %.4g of %.4g planned bytes (ratio %.3f) on %zu planned links (%zu not read); "
        "%zu link(s) off by more than 1.25x either way (red), or carrying traffic the plan does not send there.",
        lm["between"].get<std::string>().c_str(), lm["measured_bytes"].get<double>(), lm["planned_bytes"].get<double>(),
        lm["ratio"].is_null() ? 0.0 : lm["ratio"].get<double>(), lm["planned_links"].get<size_t>(),
        lm["unread_links"].get<size_t>(), lm["off_links"].get<size_t>());
    o << "<p id=\"links-measured\">" << esc(head) << "</p><div class=\"fig\">" << measured_svg(lm["rows"]) << "</div>";
    json top = json::array();
    for (size_t i = 0; i < lm["rows"].size() && i < 20; ++i) top.push_back(lm["rows"][i]);
    o << table(top, {"link", "planned_bytes", "measured_bytes", "ratio", "xmit_wait", "wait_share", "errors"},
               "links-measured-table");
  }
}

// The repair list: the suspects, most likely first, with their evidence and what to do.
void html_suspects(std::ostringstream& o, const json& r) {
  o << "<h2>Suspects, most likely first</h2>";
  if (!r.contains("diagnosis") || r["diagnosis"]["suspects"].empty()) {
    o << "<p id=\"diagnosis\">None: no link or host stands out in the run, the scan or the counters.</p>";
    return;
  }
  json rows = json::array();
  for (const json& s : r["diagnosis"]["suspects"]) {
    std::string evidence;
    for (const json& e : s["evidence"]) evidence += (evidence.empty() ? "" : "; ") + e.get<std::string>();
    rows.push_back({{"confidence", gbps_text(s["confidence"].get<double>())},
                    {"kind", s["kind"]},
                    {"where", s["where"]},
                    {"evidence", evidence},
                    {"action", s["action"]}});
    if (rows.size() >= 20) break;
  }
  o << table(rows, {"confidence", "kind", "where", "evidence", "action"}, "diagnosis");
}

// What a run measures and a simulation does not: said per section, for the mode that ran.
void html_run(std::ostringstream& o, const json& r) {
  const bool simulated = r["mode"] == "simulate";
  o << "<h2>Clock synchronisation</h2>";
  if (simulated)
    o << "<p id=\"clock\">Not measured: simulated, no run on hardware.</p>";
  else if (r["clock"].empty())
    o << "<p id=\"clock\">Not measured: the run's report lists no clock offsets per host.</p>";
  else
    o << table(r["clock"], {"host", "offset_ns", "uncertainty_ns", "min_rtt_ns", "drift_ppm"}, "clock");
  o << "<h2>Skipped and failed transfers, by link</h2>";
  if (simulated)
    o << "<p id=\"suspects\">Not measured: simulated, no transfer can hang or fail.</p>";
  else if (r["suspect_links"].empty())
    o << "<p id=\"suspects\">None: every transfer of the run completed.</p>";
  else
    o << table(r["suspect_links"], {"link", "failed", "skipped", "transfers", "bad_share"}, "suspects");
  if (!r["not_ok"].empty()) o << table(r["not_ok"], {"src", "dst", "dlid", "status", "error", "path"});
  o << "<p style=\"color:#888\">ibroute accept, " << esc(text_of(r["created_at"])) << "</p></body></html>\n";
}

}  // namespace

std::string accept_html(const json& r, const std::string& fabric_svg, const Heatmap& heat) {
  std::ostringstream o;
  html_verdict(o, r);
  html_plan_figures(o, r);
  html_suspects(o, r);
  o << "<h2>Fabric, coloured by link load of the plan's worst phase</h2><div class=\"fig\" id=\"fabric\">" << fabric_svg
    << "</div>";
  html_heatmap(o, heat);
  html_plan(o, r);
  html_measured(o, r);
  html_run(o, r);
  return o.str();
}

}  // namespace ibroute::cli
