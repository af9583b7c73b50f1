#include "scan_pipeline.hpp"

#include <chrono>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/live_scan.hpp"
#include "ibroute/fabric/text_import.hpp"
#include "text_input.hpp"

namespace ibroute::workflow {

using namespace ibroute::fabric;

namespace {

// A topology file as admins keep it: libibnetdisc's binary cache (ibnetdiscover --cache) goes to
// libibnetdisc; text is told apart by its content.
// ibdiagnet's db_csv also holds the ports' counters (PM_INFO): a snapshot stored with the scan.
Fabric read_topology(const std::string& path, std::optional<CounterSnapshot>& counters) {
  std::string text = read_file(path);
  if (text.find('\0') < 4096) return load_ibnd_cache(path);
  if (looks_like_ibdiagnet_csv(text)) return parse_ibdiagnet_csv(text, path, &counters);
  return parse_topology(text, path);
}

// Problems the fabric as a whole shows, whatever read it.
void add_fabric_problems(Fabric& f) {
  bool any_lid = false;
  for (const Node& n : f.nodes)
    for (const Port& p : n.ports) any_lid |= p.base_lid != 0;
  if (!any_lid)
    f.problems.push_back({"no_lids", 0, -1,
                          "no port has a LID: no subnet manager has configured this fabric, so nothing can be routed"});
}

void add_lid_conflicts(Fabric& f) {
  LidMap lids(f);
  for (const auto& c : lids.conflicts())
    f.problems.push_back({"lid_conflict", f.nodes[c.b.node].guid, c.b.port,
                          "LID " + std::to_string(c.lid) + " is claimed by " + f.nodes[c.a.node].desc + " and " +
                              f.nodes[c.b.node].desc});
}

// Broken routes located: the switch and port where they end, how many, one example each — so that
// "177 dead end" comes with the cable to look at.
void add_broken_routes(Fabric& f, const RouteSet& routes) {
  constexpr size_t kMostEnds = 100;
  const LidMap lids(f);
  const std::vector<BrokenEnd> ends = broken_ends(routes);
  for (size_t i = 0; i < ends.size() && i < kMostEnds; ++i) {
    const BrokenEnd& e = ends[i];
    const Node& n = f.nodes[e.node];
    const bool entry = e.port != kNoRoute && e.port <= n.num_ports();
    const char* why = e.status == RouteStatus::dead_end ? ": its port is down or not cabled"
                      : e.status == RouteStatus::drop   ? ": the table has no entry"
                      : e.status == RouteStatus::loop   ? ": the path comes back to a switch it crossed"
                                                        : ": it reaches a CA that does not own the LID";
    const LidOwner* owner = lids.owner(e.example_dlid);
    f.problems.push_back({"broken_routes", n.guid, entry ? e.port : -1,
                          std::to_string(e.routes) + " route(s) " + std::string(to_string(e.status)) + " at " + n.desc +
                              (entry ? "[" + std::to_string(e.port) + "]" : std::string()) + why + "; e.g. from " +
                              f.nodes[e.example_ingress].desc + " to LID " + std::to_string(e.example_dlid) +
                              (owner ? " (" + f.nodes[owner->node].desc + ")" : std::string())});
  }
  if (ends.size() > kMostEnds)
    f.problems.push_back(
        {"broken_routes", 0, -1, std::to_string(ends.size() - kMostEnds) + " more places where routes end"});
}

// The fabric from the files (--topology, --lfts) or live (libibnetdisc, libibmad).
Fabric read_fabric(const ScanRequest& o, store::ScanInfo& info, std::optional<CounterSnapshot>& counters,
                   const ProgressFn& progress) {
  if (o.topology.empty()) {
    info.source = "live";
    info.origin =
        (o.ca.empty() ? std::string("default CA") : "CA " + o.ca) + (o.port ? " port " + std::to_string(o.port) : "");
    return scan_live(LiveScanOptions{o.ca, o.port, o.timeout_ms, o.retries, o.mads, progress});
  }
  info.source = "offline";
  info.origin = o.topology + (o.lfts.empty() ? std::string(" (no forwarding tables)") : " + " + o.lfts);
  Fabric f = read_topology(o.topology, counters);
  if (o.lfts.empty())
    f.has_lfts = false;  // a topology alone: structure, links and pictures; routes unknown
  else
    apply_lft_dump(f, read_file(o.lfts), o.lfts);
  return f;
}

double since(std::chrono::steady_clock::time_point& t) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

}  // namespace

void check_scan_request(const ScanRequest& o) {
  const bool offline = !o.topology.empty() || !o.lfts.empty();
  if (offline && o.topology.empty()) throw InputError("--lfts needs --topology (the fabric the tables belong to)");
  if (offline && (!o.ca.empty() || o.port))
    throw InputError("-C/-P select the port of a live scan; they do not go with --topology/--lfts");
}

ScanResult scan_fabric(const ScanRequest& o, const ProgressFn& progress) {
  ScanResult x = read_scan(o, progress);
  resolve_scan_routes(x);
  return x;
}

ScanResult read_scan(const ScanRequest& o, const ProgressFn& progress) {
  check_scan_request(o);
  NodeNameMap names;
  if (!o.node_name_map.empty()) names = parse_node_name_map(read_file(o.node_name_map), o.node_name_map);
  const auto t0 = std::chrono::steady_clock::now();
  auto t = t0;
  ScanResult x;
  x.f = read_fabric(o, x.info, x.counters, progress);
  x.t_read = since(t);
  if (!o.node_name_map.empty()) x.info.origin += ", names from " + o.node_name_map;
  assign_display_names(x.f, names);
  add_lid_conflicts(x.f);
  add_fabric_problems(x.f);
  x.info.complete = x.f.complete;
  x.info.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return x;
}

void resolve_scan_routes(ScanResult& x) {
  auto t = std::chrono::steady_clock::now();
  x.routes = x.f.has_lfts ? resolve_routes(x.f) : RouteSet{};
  if (x.f.has_lfts) add_broken_routes(x.f, x.routes);
  x.t_routes = since(t);
  x.info.duration_s += x.t_routes;
}

}  // namespace ibroute::workflow
