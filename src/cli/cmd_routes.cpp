// ibroute routes: like ibtracert, answered from the stored routes of a scan.
#include <charconv>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/routes.hpp"
#include "options.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::fabric;

namespace {

struct RoutesOptions : StoreOptions {
  std::string from, to;
  std::string lid = "base";
};

std::string lid_range(const Port& p) {
  return std::to_string(p.base_lid) + "-" + std::to_string(p.base_lid + p.lid_count() - 1);
}

// --lid: all, base, +K (offset K from the base LID) or N (a LID the destination owns).
std::vector<uint16_t> pick_dlids(const Port& dst, const std::string& spec) {
  if (dst.base_lid == 0) throw InputError("the destination port has no LID");
  if (spec == "all") {
    std::vector<uint16_t> v;
    for (uint32_t i = 0; i < dst.lid_count(); ++i) v.push_back(static_cast<uint16_t>(dst.base_lid + i));
    return v;
  }
  if (spec == "base") return {dst.base_lid};
  bool offset = spec.starts_with("+");
  std::string_view num = offset ? std::string_view(spec).substr(1) : std::string_view(spec);
  unsigned v = 0;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec != std::errc() || p != num.data() + num.size() || num.empty())
    throw InputError("--lid takes all, base, +K (offset) or a LID, not '" + spec + "'");
  uint32_t lid = offset ? dst.base_lid + v : v;
  if (!dst.owns_lid(lid))
    throw InputError("LID " + std::to_string(lid) + " is not one of the destination's LIDs " + lid_range(dst));
  return {static_cast<uint16_t>(lid)};
}

nlohmann::json port_json(const Fabric& f, int node, int port) {
  const Node& n = f.nodes[node];
  const Port& p = n.ports[port];
  return {{"guid", guid_hex(n.guid)},
          {"port_guid", guid_hex(p.guid)},
          {"desc", n.desc},
          {"type", to_string(n.type)},
          {"port", port},
          {"base_lid", p.base_lid},
          {"lmc", p.lmc}};
}

// The routes as text: one line per LID where there are several, else every hop of the one.
void print_routes(const Fabric& f, PortSel src, PortSel dst, const nlohmann::json& out) {
  const Port& sport = f.nodes[src.node].ports[src.port];
  const Port& dport = f.nodes[dst.node].ports[dst.port];
  const Node& sn = f.nodes[src.node];
  const Node& dn = f.nodes[dst.node];
  if (out["routes"].size() > 1) {  // several LIDs: one line each, the path as desc[out port]
    std::cout << "From \"" << sn.desc << "\" port " << src.port << " to \"" << dn.desc << "\" lid " << lid_range(dport)
              << ":\n";
    for (const auto& r : out["routes"]) {
      std::cout << "  " << r["dlid"].get<int>() << " +" << r["offset"].get<int>() << "\t"
                << r["status"].get<std::string>() << "\t";
      for (const auto& h : r["hops"]) {
        int port = h["out_port"].get<int>();
        std::cout << h["desc"].get<std::string>() << "["
                  << (port == kNoRoute ? std::string("none") : std::to_string(port)) << "] -> ";
      }
      std::cout << (r["status"] == "ok" ? dn.desc : std::string("X")) << "\n";
    }
  }
  for (const auto& r : out["routes"]) {
    if (out["routes"].size() > 1) break;
    std::cout << "From " << to_string(sn.type) << " {" << guid_hex(sport.guid) << "} port " << src.port << " lid "
              << lid_range(sport) << " \"" << sn.desc << "\" to DLID " << r["dlid"].get<int>() << " (" << dn.desc
              << " +" << r["offset"].get<int>() << "): " << r["status"].get<std::string>() << "\n";
    const auto& hops = r["hops"];
    for (size_t i = 1; i < hops.size(); ++i)
      std::cout << "  [" << hops[i - 1]["out_port"].get<int>() << "] -> " << hops[i]["type"].get<std::string>() << " {"
                << hops[i]["guid"].get<std::string>() << "}[" << hops[i].value("in_port", 0) << "] \""
                << hops[i]["desc"].get<std::string>() << "\"\n";
    int last = hops.back()["out_port"].get<int>();
    if (r["status"] == "ok" && last != 0)
      std::cout << "  [" << last << "] -> " << to_string(dn.type) << " {" << guid_hex(dport.guid) << "}[" << dst.port
                << "] lid " << lid_range(dport) << " \"" << dn.desc << "\"\n";
    else if (r["status"] != "ok")
      std::cout << "  [" << (last == kNoRoute ? std::string("no entry") : std::to_string(last)) << "] stops here ("
                << r["status"].get<std::string>() << ")\n";
  }
}

int run_routes(const RoutesOptions& o) {
  store::FabricStore store(o.db, store::Access::read_only);
  int64_t scan = pick_scan(store, o.scan);
  Fabric f = store.load_fabric(scan, false);
  PortSel src = find_port(f, o.from, "--from");
  PortSel dst = find_port(f, o.to, "--to");
  if (f.nodes[src.node].is_switch())
    throw InputError("--from must be a CA port: routes are stored for CA sources ('" + o.from + "' is a switch)");
  const Port& dport = f.nodes[dst.node].ports[dst.port];
  // --to given as one of the port's LIDs other than the base: that LID is the one meant (an
  // explicit --lid still decides).
  std::string lid_spec = o.lid;
  if (uint32_t named = 0;
      lid_spec == "base" &&
      std::from_chars(o.to.data(), o.to.data() + o.to.size(), named).ptr == o.to.data() + o.to.size() &&
      named != dport.base_lid && dport.owns_lid(named))
    lid_spec = o.to;
  std::vector<uint16_t> dlids = pick_dlids(dport, lid_spec);

  const Port& sport = f.nodes[src.node].ports[src.port];
  nlohmann::json out{{"scan_id", scan},
                     {"from", port_json(f, src.node, src.port)},
                     {"to", port_json(f, dst.node, dst.port)},
                     {"routes", nlohmann::json::array()}};
  for (uint16_t dlid : dlids) {
    // The first hop comes from the port table; the rest is one stored row per (ingress, DLID).
    RouteStatus status = RouteStatus::dead_end;
    std::vector<Hop> hops{{src.node, static_cast<uint8_t>(src.port)}};
    if (sport.owns_lid(dlid)) {
      status = RouteStatus::ok;
      hops.back().out_port = 0;
    } else if (sport.connected() && f.nodes[sport.peer_node].is_switch()) {
      auto r = store.route(scan, sport.peer_node, dlid);
      if (!r) throw InputError("scan " + std::to_string(scan) + " has no route for DLID " + std::to_string(dlid));
      status = r->status;
      hops.insert(hops.end(), r->hops.begin(), r->hops.end());
    } else if (sport.connected()) {
      const Port& peer = f.nodes[sport.peer_node].ports[sport.peer_port];
      status = peer.owns_lid(dlid) ? RouteStatus::ok : RouteStatus::misdelivered;
    }
    nlohmann::json jh = nlohmann::json::array();
    int in_port = -1;
    for (const Hop& h : hops) {
      const Node& n = f.nodes[h.node];
      nlohmann::json x{
          {"guid", guid_hex(n.guid)}, {"desc", n.desc}, {"type", to_string(n.type)}, {"out_port", h.out_port}};
      if (in_port >= 0) x["in_port"] = in_port;
      const Port& op = n.ports[h.out_port == kNoRoute || h.out_port > n.num_ports() ? 0 : h.out_port];
      in_port = h.out_port != kNoRoute && op.connected() ? op.peer_port : -1;
      jh.push_back(std::move(x));
    }
    out["routes"].push_back(
        {{"dlid", dlid}, {"offset", dlid - dport.base_lid}, {"status", to_string(status)}, {"hops", jh}});
  }
  if (o.json)
    print_json(out);
  else
    print_routes(f, src, dst, out);
  for (const auto& r : out["routes"])
    if (r["status"] != "ok") return kExitFailure;
  return kExitOk;
}

}  // namespace

Runner setup_routes(CLI::App& app) {
  auto o = std::make_shared<RoutesOptions>();
  auto* c = add_store_command(app, *o, "routes", kScanAndJson);
  c->add_option("--from", o->from, "source NODE (a CA)")->required();
  c->add_option("--to", o->to, "destination NODE")->required();
  c->add_option("--lid", o->lid, "destination LID: all, base, +K (offset from the base LID) or a LID")
      ->capture_default_str();
  c->get_option("--json")->description("print JSON: every hop with node GUID, description, in and out port");
  return [o] { return run_routes(*o); };
}

}  // namespace ibroute::cli
