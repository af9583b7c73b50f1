#include "fabric_context.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "routing_advice.hpp"
#include "text_input.hpp"

namespace ibroute::workflow {

int64_t pick_scan(store::FabricStore& store, std::optional<int64_t> requested) {
  if (requested) {
    store.scan(*requested);  // throws InputError when absent
    return *requested;
  }
  return store.latest_scan();
}

FabricContext::FabricContext(store::FabricStore& store, std::optional<int64_t> scan)
    : scan_id(pick_scan(store, scan)),
      info(store.scan(scan_id)),
      fabric(store.load_fabric(scan_id, true)),
      links(fabric),
      structure(fabric::analyze_structure(fabric)),
      eval(fabric, links, structure) {}

std::string FabricContext::incomplete_warning() const {
  if (info.complete) return "";
  return "scan " + std::to_string(scan_id) + " is incomplete (" + std::to_string(fabric.problems.size()) +
         " problem(s): ibroute scans --problems " + std::to_string(scan_id) +
         "); what follows may miss nodes or routes";
}

void FabricContext::require_routes(const std::string& what) const {
  if (!fabric.has_lfts)
    throw InputError("scan " + std::to_string(scan_id) +
                     " has no forwarding tables (a topology imported without --lfts): " + what +
                     " needs routes; import the tables (scan --topology F --lfts T) or scan live");
}

std::vector<schedule::Host> select_hosts(const fabric::Fabric& f, const std::string& spec, size_t at_least) {
  std::vector<schedule::Host> all = schedule::all_hosts(f);
  if (spec.empty()) return all;
  std::vector<std::string> names;
  if (spec[0] == '@') {
    for (schedule::ListedHost& h : schedule::host_lines(read_file(spec.substr(1), kMaxHostList)))
      names.push_back(std::move(h.name));
  } else {
    names = schedule::host_commas(spec);
  }
  return schedule::pick_hosts(f, all, names, at_least);
}

Groups select_groups(const fabric::Fabric& f, const std::string& senders, const std::string& receivers, bool topology) {
  if (senders.empty() || receivers.empty()) throw InputError("--senders and --receivers go together");
  Groups g = schedule::join_groups(select_hosts(f, senders, 1), select_hosts(f, receivers, 1));
  return topology ? schedule::topology_ordered(f, g) : g;
}

std::string link_name(const FabricContext& c, int32_t link) { return schedule::describe_link(c.fabric, c.links, link); }

// One formatter for every rate a command prints (schedule::rate_text): a rate asked and the rate
// planned read alike ("5 Gb/s (0.625 GB/s)" both, not 0.62 beside 0.63).
std::string format_rate(double bytes_per_s) { return schedule::rate_text(bytes_per_s); }

nlohmann::json phase_max_histogram(const std::vector<int>& phase_max) {
  nlohmann::json h = nlohmann::json::object();
  for (int m : phase_max) h[std::to_string(m)] = h.value(std::to_string(m), 0) + 1;
  return h;
}

nlohmann::json slot_histogram(const std::vector<uint32_t>& slots) {
  nlohmann::json h = nlohmann::json::object();
  for (uint32_t m : slots) h[std::to_string(m)] = h.value(std::to_string(m), 0) + 1;
  return h;
}

std::string unread_tables(const fabric::Fabric& f) {
  std::vector<const fabric::Node*> unread;  // no table, or one read only up to a LID
  for (const fabric::Node& n : f.nodes)
    if (n.is_switch() && (!n.lft_read || n.lft_rows_to != fabric::Node::kAllRows)) unread.push_back(&n);
  if (unread.empty()) return "no switch whose forwarding table was not read";
  const fabric::Node& first = *unread.front();
  std::string why =
      unread.size() > 1 ? ", whose forwarding tables were not read whole" : ", whose forwarding table was not read";
  if (unread.size() == 1 && first.lft_read) {
    char lid[8];
    std::snprintf(lid, sizeof lid, "0x%04x", first.lft_rows_to);
    why = ", whose forwarding table was read only below LID " + std::string(lid);
  }
  return first.desc +
         (unread.size() > 1 ? " (and " + std::to_string(unread.size() - 1) + " more switches)" : std::string()) + why;
}

std::string efficiency_figure(const schedule::Efficiency& e) {
  if (e.broken) return "none";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", e.value);
  return buf;
}

nlohmann::json efficiency_json(const schedule::Efficiency& e, const RoutingAdvice* advice) {
  nlohmann::json j{
      {"value", e.value},
      {"least_time", e.least},
      {"planned_time", e.planned},
      {"limited_by", e.limited_by},
      {"rate_per_node_gbps", e.rate_gbps},
      {"rate_is_estimate", !e.timed},
      {"broken", e.broken},
      {"complete", e.broken == 0},
      {"tables", {{"value", e.value_tables}, {"least_time", e.least_tables}, {"limited_by", e.tables_limited_by}}},
      {"routing_limits", e.routing_limits()}};
  j["routing_advice"] = advice ? routing_advice_json(*advice) : nlohmann::json(nullptr);
  return j;
}

}  // namespace ibroute::workflow
