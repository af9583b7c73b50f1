// ibroute diff: topology and route changes between two scans (default: the two newest).
#include <iostream>

#include "cabling_plan.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/cabling.hpp"
#include "ibroute/fabric/diff.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/routes.hpp"
#include "options.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;

namespace {

struct DiffOptions : StoreOptions {
  std::optional<int64_t> scan_a, scan_b;
  size_t examples = 20;
  std::string against;  // a cabling plan (docs/cabling.md)
};

std::string cable_text(const Cable& c) {
  return c.a.node + "[" + std::to_string(c.a.port) + "] - " + c.b.node + "[" + std::to_string(c.b.port) + "]";
}

nlohmann::json cable_json(const Cable& c) {
  auto end = [](const CableEnd& e) {
    nlohmann::json j{{"node", e.node}, {"port", e.port}};
    if (e.guid) j["guid"] = guid_hex(e.guid);
    return j;
  };
  return {{"a", end(c.a)}, {"b", end(c.b)}, {"text", cable_text(c)}};
}

// diff --against FILE: the scan's cables against a cabling plan.
int run_against(const DiffOptions& o) {
  const std::vector<Cable> plan = workflow::read_cabling_plan(o.against);
  store::FabricStore store(o.db, store::Access::read_only);
  const int64_t scan = pick_scan(store, o.scan_a);
  const CablingCheck c = check_cabling(store.load_fabric(scan, false), plan);
  if (o.json) {
    nlohmann::json j{{"scan_id", scan},
                     {"against", o.against},
                     {"planned", c.planned},
                     {"as_planned", c.as_planned},
                     {"ok", c.ok()}};
    auto list = [](const std::vector<Cable>& v) {
      nlohmann::json x = nlohmann::json::array();
      for (const Cable& k : v) x.push_back(cable_json(k));
      return x;
    };
    auto pairs = [](const std::vector<std::pair<Cable, Cable>>& v, const char* first, const char* second) {
      nlohmann::json x = nlohmann::json::array();
      for (const auto& [p, q] : v) x.push_back({{first, cable_json(p)}, {second, cable_json(q)}});
      return x;
    };
    j["missing"] = list(c.missing), j["extra"] = list(c.extra);
    j["moved"] = pairs(c.moved, "planned", "found");
    j["swapped"] = pairs(c.swapped, "planned", "planned_too");
    j["unresolved"] = c.unresolved;
    print_json(j);
    return c.ok() ? kExitOk : kExitFailure;
  }
  std::cout << "cabling of scan " << scan << " against " << o.against << ": " << c.as_planned << " of " << c.planned
            << " cables as planned" << (c.ok() ? "" : "; differences, by both ends:") << "\n";
  for (const auto& [p, q] : c.swapped)
    std::cout << "  swapped: " << cable_text(p) << " and " << cable_text(q) << " have their far ends exchanged\n";
  for (const auto& [p, f] : c.moved)
    std::cout << "  moved:   " << cable_text(p) << " planned, found as " << cable_text(f) << "\n";
  for (const Cable& k : c.missing) std::cout << "  missing: " << cable_text(k) << "\n";
  for (const Cable& k : c.extra) std::cout << "  extra:   " << cable_text(k) << " (not planned)\n";
  for (const std::string& u : counted_once(c.unresolved)) std::cout << "  not in the fabric: " << u << "\n";
  return c.ok() ? kExitOk : kExitFailure;
}

std::string end_text(const PortRef& p) { return p.desc + "[" + std::to_string(p.port) + "]"; }

nlohmann::json link_json(const LinkChange& c) {
  return {{"a", {{"guid", guid_hex(c.a.guid)}, {"desc", c.a.desc}, {"port", c.a.port}}},
          {"b", {{"guid", guid_hex(c.b.guid)}, {"desc", c.b.desc}, {"port", c.b.port}}},
          {"before", c.before},
          {"after", c.after}};
}

// The two scans: as given, or the two newest.
std::pair<int64_t, int64_t> scans_of(const DiffOptions& o, store::FabricStore& store) {
  if (o.scan_a && o.scan_b) {
    store.scan(*o.scan_a), store.scan(*o.scan_b);
    return {*o.scan_a, *o.scan_b};
  }
  if (o.scan_a) throw InputError("diff takes two scan ids, or none for the two newest");
  auto all = store.scans();
  if (all.size() < 2) throw InputError(o.db + " holds " + std::to_string(all.size()) + " scan(s); diff needs two");
  return {all[all.size() - 2].id, all.back().id};
}

// Routes named as people know them: the switch they enter at and the port that owns the DLID
// (in the newer scan; the older where it is gone).
struct RouteNames {
  const Fabric &fa, &fb;
  const LidMap lids_a{fa}, lids_b{fb};
  std::string owner(uint16_t dlid) const {
    for (auto [f, m] : {std::pair{&fb, &lids_b}, std::pair{&fa, &lids_a}})
      if (const LidOwner* w = m->owner(dlid))
        return f->nodes[w->node].desc + (f->nodes[w->node].is_switch() ? "" : " port " + std::to_string(w->port));
    return "no owner";
  }
  std::string ingress(const RouteChange& r) const {
    for (const Fabric* f : {&fb, &fa})
      for (const Node& n : f->nodes)
        if (n.guid == r.ingress_guid) return n.desc;
    return guid_hex(r.ingress_guid);
  }
};

nlohmann::json diff_json(int64_t a, int64_t b, const FabricDiff& d, const RouteNames& names) {
  nlohmann::json j{{"scan_a", a}, {"scan_b", b}, {"identical", d.empty()}};
  auto nodes = [](const std::vector<PortRef>& v) {
    nlohmann::json x = nlohmann::json::array();
    for (auto& n : v) x.push_back({{"guid", guid_hex(n.guid)}, {"desc", n.desc}});
    return x;
  };
  auto links = [](const std::vector<LinkChange>& v) {
    nlohmann::json x = nlohmann::json::array();
    for (auto& l : v) x.push_back(link_json(l));
    return x;
  };
  j["nodes_added"] = nodes(d.nodes_added);
  j["nodes_removed"] = nodes(d.nodes_removed);
  j["links_added"] = links(d.links_added);
  j["links_removed"] = links(d.links_removed);
  j["links_changed"] = links(d.links_changed);
  j["lids_changed"] = nlohmann::json::array();
  for (auto& l : d.lids_changed)
    j["lids_changed"].push_back({{"guid", guid_hex(l.port.guid)},
                                 {"desc", l.port.desc},
                                 {"port", l.port.port},
                                 {"before", {{"base_lid", l.lid_before}, {"lmc", l.lmc_before}}},
                                 {"after", {{"base_lid", l.lid_after}, {"lmc", l.lmc_after}}}});
  j["lft_entries_changed"] = d.lft_entries_changed;
  j["switches_with_lft_changes"] = d.switches_with_lft_changes;
  j["tables_compared"] = d.tables_compared;
  j["routes_compared"] = d.routes_compared;
  j["routes_changed"] = d.routes_changed;
  j["route_examples"] = nlohmann::json::array();
  for (auto& r : d.route_examples)
    j["route_examples"].push_back({{"ingress", r.ingress},
                                   {"ingress_guid", guid_hex(r.ingress_guid)},
                                   {"ingress_desc", names.ingress(r)},
                                   {"dlid", r.dlid},
                                   {"dlid_owner", names.owner(r.dlid)},
                                   {"before", r.before},
                                   {"after", r.after}});
  return j;
}

void print_diff(int64_t a, int64_t b, bool a_has_lfts, const FabricDiff& d, const RouteNames& names) {
  std::cout << "scan " << a << " -> scan " << b << ": "
            << (!d.empty()          ? "changed"
                : d.tables_compared ? "no changes"
                                    : "no changes in what both hold")
            << "\n";
  for (auto& n : d.nodes_removed) std::cout << "  - node " << n.desc << " {" << guid_hex(n.guid) << "}\n";
  for (auto& n : d.nodes_added) std::cout << "  + node " << n.desc << " {" << guid_hex(n.guid) << "}\n";
  for (auto& l : d.links_removed)
    std::cout << "  - link " << end_text(l.a) << " -- " << end_text(l.b) << " (" << l.before << ")\n";
  for (auto& l : d.links_added)
    std::cout << "  + link " << end_text(l.a) << " -- " << end_text(l.b) << " (" << l.after << ")\n";
  for (auto& l : d.links_changed)
    std::cout << "  ~ link " << end_text(l.a) << " -- " << end_text(l.b) << ": " << l.before << " -> " << l.after
              << "\n";
  for (auto& l : d.lids_changed)
    std::cout << "  ~ lid  " << end_text(l.port) << ": " << l.lid_before << "/lmc " << int(l.lmc_before) << " -> "
              << l.lid_after << "/lmc " << int(l.lmc_after) << "\n";
  if (!d.tables_compared) {  // "0 of 0 compared" would read as "unchanged"
    std::cout << "  LFT entries and routes: not compared (scan " << (a_has_lfts ? b : a)
              << " has no forwarding tables: a topology-only import)\n";
    return;
  }
  std::cout << "  LFT entries changed: " << d.lft_entries_changed << " on " << d.switches_with_lft_changes
            << " switches\n"
            << "  routes changed: " << d.routes_changed << " of " << d.routes_compared << " compared\n";
  for (auto& r : d.route_examples)
    std::cout << "    from " << names.ingress(r) << " to DLID " << r.dlid << " (" << names.owner(r.dlid)
              << ")\n      before " << r.before << "\n      after  " << r.after << "\n";
  if (d.routes_changed > d.route_examples.size())
    std::cout << "    ... " << d.routes_changed - d.route_examples.size() << " more (--examples N shows more)\n";
}

int run_diff(const DiffOptions& o) {
  if (!o.against.empty()) {
    if (o.scan_b) throw InputError("diff --against FILE takes one scan id (default: the newest)");
    return run_against(o);
  }
  store::FabricStore store(o.db, store::Access::read_only);
  const auto [a, b] = scans_of(o, store);
  Fabric fa = store.load_fabric(a, true), fb = store.load_fabric(b, true);
  RouteSet ra = store.load_routes(a), rb = store.load_routes(b);
  const FabricDiff d = diff_fabrics(fa, ra, fb, rb, o.examples);
  const RouteNames names{fa, fb};
  if (o.json)
    print_json(diff_json(a, b, d, names));
  else
    print_diff(a, b, fa.has_lfts, d, names);
  return d.empty() ? kExitOk : kExitFailure;
}

}  // namespace

Runner setup_diff(CLI::App& app) {
  auto o = std::make_shared<DiffOptions>();
  auto* c = add_store_command(app, *o, "diff", kWithJson);
  c->add_option("SCAN_A", o->scan_a, "the older scan's id (default: the two newest scans)");
  c->add_option("SCAN_B", o->scan_b, "the newer scan's id (with SCAN_A)");
  c->add_option("--examples", o->examples, "changed routes to show")->capture_default_str();
  c->add_option("--against", o->against,
                "a cabling plan to check the scan's cables against (ibnetdiscover output or CSV)");
  return [o] { return run_diff(*o); };
}

}  // namespace ibroute::cli
