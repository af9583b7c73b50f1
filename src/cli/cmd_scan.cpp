// ibroute scan: a live scan (libibnetdisc + libibmad) or an offline import (ibnetdiscover +
// dump_fts files), routes resolved for every (ingress switch, DLID), all stored as one scan.
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/live_scan.hpp"
#include "ibroute/fabric/routes.hpp"
#include "ibroute/fabric/text_import.hpp"

namespace ibroute::cli {

using namespace ibroute::fabric;

namespace {

struct ScanOptions {
  std::string db = kDefaultDb;
  std::string ca;
  int port = 0;
  int timeout_ms = 0;
  int retries = 0;
  int mads = 32;
  std::string topology, lfts;
  bool json = false;
};

void add_lid_conflicts(Fabric& f) {
  LidMap lids(f);
  for (const auto& c : lids.conflicts())
    f.problems.push_back({"lid_conflict", f.nodes[c.b.node].guid, c.b.port,
                          "LID " + std::to_string(c.lid) + " is claimed by " + f.nodes[c.a.node].desc + " and " +
                              f.nodes[c.b.node].desc});
}

int run_scan(const ScanOptions& o) {
  const bool offline = !o.topology.empty() || !o.lfts.empty();
  if (offline && (o.topology.empty() || o.lfts.empty()))
    throw InputError("an offline scan needs both --topology and --lfts");
  if (offline && (!o.ca.empty() || o.port))
    throw InputError("-C/-P select the port of a live scan; they do not go with --topology/--lfts");

  store::FabricStore store(o.db, true);  // fail on a bad database before scanning
  Stopwatch clock;
  Progress progress;
  store::ScanInfo info;
  Fabric f;
  double t_discover = 0, t_lft = 0;
  if (offline) {
    info.source = "offline";
    info.origin = o.topology + " + " + o.lfts;
    f = parse_ibnetdiscover(read_file(o.topology), o.topology);
    t_discover = clock.lap();
    apply_lft_dump(f, read_file(o.lfts), o.lfts);
    t_lft = clock.lap();
  } else {
    info.source = "live";
    info.origin = (o.ca.empty() ? std::string("default CA") : "CA " + o.ca) + (o.port ? " port " + std::to_string(o.port) : "");
    LiveScanOptions lo{o.ca, o.port, o.timeout_ms, o.retries, o.mads, std::ref(progress)};
    f = scan_live(lo);
    t_lft = clock.lap();  // discovery and LFT reads; the split below comes from scan_live's stages
  }
  add_lid_conflicts(f);
  RouteSet routes = resolve_routes(f);
  double t_routes = clock.lap();
  progress.finish();
  info.complete = f.complete;
  info.duration_s = clock.seconds();
  int64_t id = store.save_scan(info, f, routes);
  double t_store = clock.lap();
  info = store.scan(id);
  RouteCounts rc = count_routes(routes);
  double total = clock.seconds();

  if (o.json) {
    nlohmann::json j{{"scan_id", id},
                     {"database", o.db},
                     {"source", info.source},
                     {"origin", info.origin},
                     {"complete", info.complete},
                     {"switches", info.switches},
                     {"cas", info.cas},
                     {"links", info.links},
                     {"lmc", info.lmc},
                     {"lids", info.lids},
                     {"routes", {{"total", rc.total}, {"ok", rc.ok}, {"drop", rc.drop}, {"loop", rc.loop},
                                 {"dead_end", rc.dead_end}, {"misdelivered", rc.misdelivered}, {"unknown", rc.unknown}}},
                     {"problems", nlohmann::json::array()},
                     {"seconds", {{"read", t_discover + t_lft}, {"routes", t_routes}, {"store", t_store}, {"total", total}}}};
    for (const Problem& p : f.problems)
      j["problems"].push_back({{"kind", p.kind}, {"node_guid", guid_hex(p.node_guid)}, {"port", p.port}, {"detail", p.detail}});
    print_json(j);
  } else {
    std::cout << "scan " << id << " (" << info.source << ", " << (info.complete ? "complete" : "INCOMPLETE")
              << ") stored in " << o.db << "\n"
              << "  fabric    " << info.switches << " switches, " << info.cas << " CAs, " << info.links << " links, LMC "
              << info.lmc << "\n"
              << "  LIDs      " << info.lids << "\n"
              << "  routes    " << rc.total << " (" << routes.ingress.size() << " ingress switches x " << routes.dlids.size()
              << " DLIDs): " << rc.ok << " ok";
    for (auto [n, what] : {std::pair{rc.drop, "drop"}, {rc.loop, "loop"}, {rc.dead_end, "dead end"},
                           {rc.misdelivered, "misdelivered"}, {rc.unknown, "unknown (LFT unread)"}})
      if (n) std::cout << ", " << n << ' ' << what;
    std::cout << "\n  problems  " << (f.problems.empty() ? "none" : std::to_string(f.problems.size())) << "\n";
    for (size_t i = 0; i < f.problems.size() && i < 20; ++i) std::cout << "    " << f.problems[i].detail << "\n";
    if (f.problems.size() > 20) std::cout << "    ... (ibroute scans --problems " << id << " lists all)\n";
    std::cout << "  time      " << std::fixed;
    std::cout.precision(2);
    std::cout << total << " s (read " << t_discover + t_lft << " s, routes " << t_routes << " s, store " << t_store
              << " s)\n";
  }
  return info.complete ? kExitOk : kExitIncomplete;
}

}  // namespace

Runner setup_scan(CLI::App& app) {
  auto o = std::make_shared<ScanOptions>();
  auto* c = app.add_subcommand("scan", "Discover the fabric, read every switch's LFT, store every route.");
  c->footer(
      "Discover the fabric, read every switch's linear forwarding table and store the route of every\n"
      "(source port, destination LID) pair - all 2^LMC LIDs of every port - as a new scan.\n"
      "Live (default): through libibnetdisc and libibmad, like ibnetdiscover and dump_fts.\n"
      "Offline: from files admins keep: --topology (ibnetdiscover output) and --lfts (dump_fts output).");
  c->add_option("--db", o->db, "fabric database (created if absent)")->capture_default_str();
  c->add_option("-C,--Ca", o->ca, "CA name to scan from (live)");
  c->add_option("-P,--Port", o->port, "CA port number to scan from (live)")->check(CLI::Range(0, 254));
  c->add_option("-t,--timeout", o->timeout_ms, "MAD timeout in ms (live; default: libibmad's)")->check(CLI::Range(0, 60000));
  c->add_option("--retries", o->retries, "MAD retries (live; default: libibmad's)")->check(CLI::Range(0, 100));
  c->add_option("--mads-in-flight", o->mads, "LFT SMPs in flight at once (live)")->capture_default_str()->check(CLI::Range(1, 256));
  c->add_option("--topology", o->topology, "ibnetdiscover output to import (offline)");
  c->add_option("--lfts", o->lfts, "dump_fts / dump_lfts.sh output to import (offline)");
  c->add_flag("--json", o->json, "print the summary as JSON");
  return [o] { return run_scan(*o); };
}

}  // namespace ibroute::cli
