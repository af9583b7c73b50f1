// accept's terminal summary, rendered from the report (what --json prints whole).
#include <cstdio>

#include "accept_html.hpp"
#include "diagnosis_report.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using nlohmann::json;

namespace {
std::string text_or(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }
}  // namespace

std::string accept_text(const json& r) {
  std::string out;
  char line[512];
  const json& checks = r["checks"];
  const size_t unmeasured = checks.size() - static_cast<size_t>(r["passed"].get<int>() + r["failed"].get<int>());
  std::snprintf(line, sizeof line, "%s: %d of %zu checks pass, %d fail, %zu not measured (report: %s)\n",
                r["accepted"].get<bool>() ? "ACCEPTED" : "NOT ACCEPTED", r["passed"].get<int>(), checks.size(),
                r["failed"].get<int>(), unmeasured, r.value("report", std::string()).c_str());
  out += line;
  const json& plan = r["plan"];
  const json& load = r["load"]["plan"];
  std::string other;
  for (const json& a : plan["orders_tried"])
    if (a["order"] != plan["order"])
      other =
          " (" + a["order"].get<std::string>() + " order: worst link " + std::to_string(a["max_load"].get<int>()) + ")";
  std::snprintf(
      line, sizeof line,
      "  plan: %zu hosts in %s order%s, worst link %d, least possible %d (bound %d), efficiency %.2f (limited by %s)\n",
      plan["hosts"].get<size_t>(), plan["order"].get<std::string>().c_str(), other.c_str(), load["max_load"].get<int>(),
      load["lower_bound"]["worst"].get<int>(), r["fabric"]["transfer_bound"].get<int>(),
      plan["efficiency"]["value"].get<double>(), plan["efficiency"]["limited_by"].get<std::string>().c_str());
  out += line;
  if (const json& lm = r["links_measured"]; lm.value("measured", false)) {
    std::snprintf(line, sizeof line,
                  "  links: the ports' counters saw %.3g of %.3g planned bytes (ratio %.3f), %zu of %zu planned links "
                  "off by >1.25x%s\n",
                  lm["measured_bytes"].get<double>(), lm["planned_bytes"].get<double>(),
                  lm["ratio"].is_null() ? 0.0 : lm["ratio"].get<double>(), lm["off_links"].get<size_t>(),
                  lm["planned_links"].get<size_t>(),
                  lm["rows"].empty() ? "" : (", worst " + lm["rows"][0]["link"].get<std::string>()).c_str());
    out += line;
  }
  auto padded = [](std::string t, size_t width) {
    return t.size() < width ? t + std::string(width - t.size(), ' ') : t;
  };
  for (const json& ch : checks)
    out += "  " + padded(ch["result"].get<std::string>(), 12) + " " + padded(ch["check"].get<std::string>(), 18) + " " +
           text_or(ch["measured"]) + "   (expected " + text_or(ch["expected"]) + ")\n";
  for (const json& ch : checks)  // what made a check fail, e.g. the worst links
    if (ch["result"] == "fail" && ch.contains("detail"))
      out += ch["check"].get<std::string>() + ": " + ch["detail"].get<std::string>() + "\n";
  if (r.contains("diagnosis")) out += workflow::diagnosis_text(r["diagnosis"]);
  return out;
}

}  // namespace ibroute::cli
