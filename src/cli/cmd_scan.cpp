// ibroute scan: a live scan (libibnetdisc + libibmad) or an offline import (ibnetdiscover +
// dump_fts files), routes resolved for every (ingress switch, DLID), all stored as one scan.
#include <iostream>
#include <map>

#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/live_scan.hpp"
#include "ibroute/fabric/machines.hpp"
#include "ibroute/fabric/routes.hpp"
#include "ibroute/fabric/text_import.hpp"
#include "options.hpp"
#include "scan_pipeline.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;

namespace {

// The scan's request with what the command adds.
struct ScanOptions : workflow::ScanRequest, StoreOptions {};

// A scan as read and stored, with the time each step took.
struct Scanned {
  store::ScanInfo info;
  Fabric f;
  RouteSet routes;
  int64_t id = 0;
  int64_t counters_id = 0;  // the counters snapshot the file held (db_csv's PM_INFO), 0 for none
  CounterSnapshot counters;
  double t_read = 0, t_routes = 0, t_store = 0, total = 0;
};

void print_scan_json(const ScanOptions& o, const Scanned& x, const RouteCounts& rc, std::map<NodeKind, int>& kinds) {
  nlohmann::json j{{"scan_id", x.id},
                   {"database", o.db},
                   {"source", x.info.source},
                   {"origin", x.info.origin},
                   {"complete", x.info.complete},
                   {"switches", x.info.switches},
                   {"cas", x.info.cas},
                   {"links", x.info.links},
                   {"lmc", x.info.lmc},
                   {"lids", x.info.lids},
                   {"hosts", kinds[NodeKind::host]},
                   {"machines", machines_json(x.f)},
                   {"aggregation_nodes", kinds[NodeKind::aggregation]},
                   {"routers", kinds[NodeKind::router]},
                   {"forwarding_tables", x.f.has_lfts},
                   {"counters", x.counters_id ? nlohmann::json{{"snapshot_id", x.counters_id},
                                                               {"ports", x.counters.ports.size()},
                                                               {"unanswered", x.counters.unanswered.size()}}
                                              : nlohmann::json(nullptr)},
                   {"routes",
                    {{"total", rc.total},
                     {"ok", rc.ok},
                     {"drop", rc.drop},
                     {"loop", rc.loop},
                     {"dead_end", rc.dead_end},
                     {"misdelivered", rc.misdelivered},
                     {"unknown", rc.unknown}}},
                   {"problems", nlohmann::json::array()},
                   {"seconds", {{"read", x.t_read}, {"routes", x.t_routes}, {"store", x.t_store}, {"total", x.total}}}};
  for (const Problem& p : x.f.problems)
    j["problems"].push_back(
        {{"kind", p.kind}, {"node_guid", guid_hex(p.node_guid)}, {"port", p.port}, {"detail", p.detail}});
  print_json(j);
}

void print_scan(const ScanOptions& o, const Scanned& x, const RouteCounts& rc, std::map<NodeKind, int>& kinds) {
  const store::ScanInfo& info = x.info;
  std::cout << "scan " << x.id << " (" << info.source << ", " << (info.complete ? "complete" : "INCOMPLETE")
            << ") stored in " << o.db << "\n"
            << "  fabric    " << info.switches << " switches, " << info.cas << " CAs, " << info.links << " links, LMC "
            << info.lmc << "\n";
  if (const std::string m = describe_machines(x.f, group_machines(x.f)); !m.empty())
    std::cout << "  machines  " << m << "\n";
  if (kinds[NodeKind::aggregation] || kinds[NodeKind::router])
    std::cout << "  not hosts " << kinds[NodeKind::aggregation] << " aggregation node(s), " << kinds[NodeKind::router]
              << " router(s)\n";
  std::cout << "  LIDs      " << info.lids << "\n";
  if (x.counters_id)
    std::cout << "  counters  " << x.counters.ports.size() << " ports (snapshot " << x.counters_id << ", from the file"
              << (x.counters.unanswered.empty() ? ")"
                                                : "; " + std::to_string(x.counters.unanswered.size()) + " not read)")
              << "\n";
  if (!x.f.has_lfts)
    std::cout << "  routes    unknown: no forwarding tables imported (--lfts)";
  else
    std::cout << "  routes    " << rc.total << " (" << x.routes.ingress.size() << " ingress switches x "
              << x.routes.dlids.size() << " DLIDs): " << rc.ok << " ok";
  for (auto [n, what] : {std::pair{rc.drop, "drop"},
                         {rc.loop, "loop"},
                         {rc.dead_end, "dead end"},
                         {rc.misdelivered, "misdelivered"},
                         {rc.unknown, "unknown (LFT unread)"}})
    if (n) std::cout << ", " << n << ' ' << what;
  std::cout << "\n  problems  " << (x.f.problems.empty() ? "none" : std::to_string(x.f.problems.size())) << "\n";
  for (size_t i = 0; i < x.f.problems.size() && i < 20; ++i) std::cout << "    " << x.f.problems[i].detail << "\n";
  if (x.f.problems.size() > 20) std::cout << "    ... (ibroute scans --problems " << x.id << " lists all)\n";
  std::cout << "  time      " << std::fixed;
  std::cout.precision(2);
  std::cout << x.total << " s (read " << x.t_read << " s, routes " << x.t_routes << " s, store " << x.t_store
            << " s)\n";
}

int run_scan(const ScanOptions& o) {
  const workflow::ScanRequest& req = o;
  workflow::check_scan_request(req);
  store::FabricStore store(o.db, store::Access::create);  // fail on a bad database before scanning
  Stopwatch clock;
  Progress progress;
  Scanned x;
  workflow::ScanResult r = workflow::scan_fabric(req, std::ref(progress));
  progress.finish();
  x.info = std::move(r.info), x.f = std::move(r.f), x.routes = std::move(r.routes);
  x.t_read = r.t_read, x.t_routes = r.t_routes;
  x.id = store.save_scan(x.info, x.f, x.routes);
  if (r.counters)
    x.counters_id = store.save_counters(x.id, "imported: " + req.topology, *r.counters), x.counters = *r.counters;
  x.t_store = clock.seconds() - x.info.duration_s;
  x.info = store.scan(x.id);
  x.total = clock.seconds();
  const RouteCounts rc = count_routes(x.routes);
  std::map<NodeKind, int> kinds;
  for (const Node& n : x.f.nodes) ++kinds[node_kind(n)];
  for (const Problem& p : x.f.problems)
    if (p.kind == "no_lids") std::cerr << "ibroute: warning: " << p.detail << "\n";
  if (o.json)
    print_scan_json(o, x, rc, kinds);
  else
    print_scan(o, x, rc, kinds);
  return x.info.complete ? kExitOk : kExitIncomplete;
}

}  // namespace

Runner setup_scan(CLI::App& app) {
  auto o = std::make_shared<ScanOptions>();
  auto* c = add_command(app, "scan");
  add_db_option(c, o->db, true);
  add_mad_options(c, o->ca, o->port, o->timeout_ms, o->retries, true);
  add_in_flight_option(c, o->mads, "LFT SMPs (live)");
  c->add_option("--topology", o->topology,
                "topology to import (offline): ibnetdiscover output, plain, -g or -p, or its --cache file; "
                "ibdiagnet's ibdiagnet2.ibnetdiscover, .lst or .db_csv (docs/import-formats.md)");
  c->add_option("--lfts", o->lfts,
                "forwarding tables to import (offline; optional): dump_lfts.sh / ibroute, dump_fts, OpenSM's "
                "opensm-lfts.dump, or the .fdbs of OpenSM and ibdiagnet");
  c->add_option("--node-name-map", o->node_name_map,
                "GUID -> name file as infiniband-diags read it; names are stored with the scan and used in all output");
  c->add_flag("--json", o->json, "print the summary as JSON");
  return [o] { return run_scan(*o); };
}

}  // namespace ibroute::cli
