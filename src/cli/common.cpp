#include "common.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/machines.hpp"
#include "ibroute/fabric/node_names.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;

ScanContext::ScanContext(store::FabricStore& store, std::optional<int64_t> scan, bool warn)
    : workflow::FabricContext(store, scan) {
  // Used, but never silently: some switches did not answer, so nodes, tables or routes may be missing.
  if (const std::string w = incomplete_warning(); warn && !w.empty()) std::cerr << "ibroute: warning: " + w + "\n";
}

PortSel find_port(const Fabric& f, const std::string& spec, const std::string& what) {
  const NamedPort p = NodeNames(f).resolve(spec, what);
  return {p.node, p.port};
}

Progress::Progress() : tty_(isatty(STDERR_FILENO) != 0) {}

// total 0: a stage without a count (its name alone).
void Progress::operator()(std::string_view stage, size_t done, size_t total) {
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (stage != stage_) stage_ = stage, start_ = now, last_ = {};
  if (done < total && last_ != std::chrono::steady_clock::time_point{} && now - last_ < std::chrono::milliseconds(100))
    return;
  last_ = now;
  std::string text = "[" + stage_ + "]";
  if (total)
    text += " " + std::to_string(done) + "/" + std::to_string(total) + "  " + std::to_string(done * 100 / total) + " %";
  const double secs = std::chrono::duration<double>(now - start_).count();
  if (done > 0 && done < total && secs >= 1) {
    const double left = secs * static_cast<double>(total - done) / static_cast<double>(done);
    text += left < 90 ? "  ~" + std::to_string(static_cast<int>(left + 0.5)) + " s left"
                      : "  ~" + std::to_string(static_cast<int>(left / 60 + 0.5)) + " min left";
  }
  std::fprintf(stderr, "\r%-60s", text.c_str());
  std::fflush(stderr);
  dirty_ = true;
}

void Progress::finish() {
  if (dirty_) std::fprintf(stderr, "\r%60s\r", "");
  dirty_ = false;
}

void print_json(const nlohmann::json& j) {
  if (!j.is_object()) {
    std::cout << j.dump(2) << '\n';
    return;
  }
  nlohmann::json out = j;
  out["ibroute_version"] = IBROUTE_VERSION;  // which ibroute wrote it, for scripts that keep outputs
  std::cout << out.dump(2) << '\n';
}

std::string efficiency_text(const schedule::Efficiency& e, const workflow::RoutingAdvice* advice) {
  char buf[1024];
  if (e.broken) {
    std::snprintf(buf, sizeof buf,
                  "  efficiency       none: %zu transfers have no working route, so the exchange does not complete\n",
                  e.broken);
    return buf;
  }
  std::snprintf(buf, sizeof buf,
                "  efficiency       %s = least possible time %.0f / planned %.0f message-times at full speed (against "
                "the fabric)\n"
                "  limited by       %s\n",
                workflow::efficiency_figure(e).c_str(), e.least, e.planned, e.limited_by.c_str());
  std::string out = buf;
  if (e.routing_limits()) {
    std::snprintf(
        buf, sizeof buf,
        "  over the tables  %.2f = %.0f / %.0f: the routing is the limit (%s)\n                   %s\n", e.value_tables,
        e.least_tables, e.planned, e.tables_limited_by.c_str(),
        advice ? workflow::routing_advice_text(*advice).c_str() : "whether ibroute routing lifts it is not checked");
    out += buf;
  }
  return out;
}

namespace {
char** g_argv = nullptr;
}  // namespace

void remember_argv(char** argv) { g_argv = argv; }
char** remembered_argv() { return g_argv; }

std::string own_directory() {
  std::string p = own_executable();
  return p.substr(0, p.rfind('/'));
}

nlohmann::json machines_json(const fabric::Fabric& f) {
  const fabric::Machines m = fabric::group_machines(f);
  nlohmann::json by = nlohmann::json::object();
  const std::vector<int> counts = m.machines_by_hcas();
  size_t hcas = 0;
  for (size_t k = 1; k <= counts.size(); ++k)
    if (counts[k - 1]) by[std::to_string(k)] = counts[k - 1], hcas += k * static_cast<size_t>(counts[k - 1]);
  nlohmann::json unnamed = nlohmann::json::array();
  for (size_t i = 0; i < m.unnamed.size() && i < 8; ++i) unnamed.push_back(f.nodes[m.unnamed[i]].reported_desc());
  return {{"count", m.machines.size()},
          {"hcas", hcas},
          {"machines_by_hcas", by},
          {"rails", m.max_rails()},
          {"hcas_without_machine", m.unnamed.size()},
          {"examples_without_machine", unnamed},
          {"text", describe_machines(f, m)}};
}

}  // namespace ibroute::cli
