// ibroute scans: the scans a database holds, or the problems of one of them.
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "options.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;

namespace {

struct ScansOptions : StoreOptions {
  std::optional<int64_t> problems;
};

nlohmann::json scan_json(const store::ScanInfo& s) {
  return {{"scan_id", s.id},
          {"started_at", s.started_at},
          {"source", s.source},
          {"origin", s.origin},
          {"complete", s.complete},
          {"duration_s", s.duration_s},
          {"lmc", s.lmc},
          {"switches", s.switches},
          {"cas", s.cas},
          {"links", s.links},
          {"lids", s.lids},
          {"routes", s.routes},
          {"forwarding_tables", s.has_lfts},
          {"routes_stored",
           !(s.has_lfts && s.routes == 0 && s.lids > 0)}};  // false: answered from the tables (watch stores them later)
}

int run_scans(const ScansOptions& o) {
  store::FabricStore store(o.db, store::Access::read_only);
  if (o.problems) {
    Fabric f = store.load_fabric(*o.problems, false);
    nlohmann::json j = nlohmann::json::array();
    for (const Problem& p : f.problems) {
      j.push_back({{"kind", p.kind}, {"node_guid", guid_hex(p.node_guid)}, {"port", p.port}, {"detail", p.detail}});
      if (!o.json) std::cout << p.kind << "\t" << p.detail << "\n";
    }
    if (o.json) print_json({{"db", o.db}, {"scan_id", *o.problems}, {"problems", j}});
    return kExitOk;
  }
  nlohmann::json j = nlohmann::json::array();
  const std::vector<store::ScanInfo> all = store.scans();
  if (!o.json) {
    if (all.empty())
      std::cout << "no scans in " << o.db << " (ibroute scan makes one)\n";
    else
      std::cout << "id\tstarted\tsource\tstate\tfabric\torigin\n";
  }
  for (const auto& s : all) {
    j.push_back(scan_json(s));
    if (!o.json)
      std::cout << s.id << "\t" << s.started_at << "\t" << s.source << "\t" << (s.complete ? "complete" : "INCOMPLETE")
                << "\t" << s.switches << " switches, " << s.cas << " CAs, LMC " << s.lmc << ", "
                << (!s.has_lfts                   ? std::string("routes unknown (no tables)")
                    : s.routes == 0 && s.lids > 0 ? std::string("routes from the tables (not stored yet)")
                                                  : std::to_string(s.routes) + " routes")
                << "\t" << s.origin << "\n";
  }
  if (o.json) print_json({{"db", o.db}, {"scans", j}});
  return kExitOk;
}

}  // namespace

Runner setup_scans(CLI::App& app) {
  auto o = std::make_shared<ScansOptions>();
  auto* c = add_store_command(app, *o, "scans", kWithJson);
  c->add_option("--problems", o->problems, "list the problems recorded for this scan id");
  c->get_option("--json")->description(
      "print JSON: {\"db\", \"scans\": [{\"scan_id\", ...}]} (with --problems: {\"scan_id\", \"problems\"})");
  return [o] { return run_scans(*o); };
}

}  // namespace ibroute::cli
