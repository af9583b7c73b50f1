// Scans: the fabric (nodes, ports, LIDs, LFTs) and every route, stored and read back checked.
#include "fabric_store.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <span>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/routes.hpp"
#include "column_read.hpp"

namespace ibroute::store {

using namespace ibroute::fabric;
using namespace ibroute::store::column;

namespace {

ScanInfo read_scan_row(Stmt& q) {
  ScanInfo s;
  const auto [id, where] = row_id(q, "scan");
  s.id = id;
  s.started_at = text_col(q, 1, where, "started_at");
  s.source = text_col(q, 2, where, "source");
  if (s.source != "live" && s.source != "offline") damaged(where, "source " + shown(q, 2) + " (not live or offline)");
  s.origin = text_col(q, 3, where, "origin");
  s.complete = bool_col(q, 4, where, "complete");
  s.duration_s = real_col(q, 5, where, "duration_s");
  s.lmc = static_cast<int>(int_col(q, 6, 0, 7, where, "lmc"));
  s.switches = int_col(q, 7, 0, kMaxCount, where, "switches");
  s.cas = int_col(q, 8, 0, kMaxCount, where, "cas");
  s.links = int_col(q, 9, 0, kMaxCount, where, "links");
  s.lids = int_col(q, 10, 0, kMaxCount, where, "lids");
  s.routes = int_col(q, 11, 0, kMaxCount, where, "routes");
  s.has_lfts = bool_col(q, 12, where, "has_lfts");
  return s;
}
constexpr const char* kScanCols =
    "SELECT id, started_at, source, origin, complete, duration_s, lmc, switches, cas, links, lids, routes, has_lfts FROM scan";

}  // namespace

std::string encode_hops(std::span<const Hop> hops) {
  std::string s;
  s.reserve(hops.size() * 7);
  for (const Hop& h : hops) {
    if (!s.empty()) s += ' ';
    s += std::to_string(h.node);
    s += ':';
    s += std::to_string(h.out_port);
  }
  return s;
}

std::vector<Hop> decode_hops(std::string_view t) {
  std::vector<Hop> out;
  const char* p = t.data();
  const char* end = p + t.size();
  auto bad = [&] { throw InputError("corrupt route in database: '" + one_line(t, 80) + "'"); };
  while (p < end) {
    int node = 0, port = 0;
    auto r1 = std::from_chars(p, end, node);
    if (r1.ec != std::errc() || r1.ptr >= end || *r1.ptr != ':') bad();
    auto r2 = std::from_chars(r1.ptr + 1, end, port);
    if (r2.ec != std::errc() || node < 0 || port < 0 || port > 255) bad();
    if (r2.ptr < end && *r2.ptr != ' ') bad();
    out.push_back({node, static_cast<uint8_t>(port)});
    p = r2.ptr;
    while (p < end && *p == ' ') ++p;
  }
  return out;
}


int64_t FabricStore::save_scan(ScanInfo info, const Fabric& f, const RouteSet& routes) {
  Transaction t(db_);
  const int64_t id = insert_scan(info, f, static_cast<int64_t>(routes.size()));
  insert_routes(id, routes);
  t.commit();
  return id;
}

int64_t FabricStore::save_scan_tables(ScanInfo info, const Fabric& f) {
  Transaction t(db_);
  const int64_t id = insert_scan(info, f, 0);  // 0 routes: not stored (yet); readers resolve them from the tables
  t.commit();
  return id;
}

void FabricStore::save_routes(int64_t id, const RouteSet& routes, const std::vector<Problem>& problems) {
  const ScanInfo info = scan(id);
  if (info.routes != 0) throw std::logic_error("save_routes: scan " + std::to_string(id) + " has its routes already");
  Transaction t(db_);
  insert_routes(id, routes);
  insert_problems(id, problems);
  Stmt(db_, "UPDATE scan SET routes = ? WHERE id = ?").bind(1, static_cast<int64_t>(routes.size())).bind(2, id).run();
  t.commit();
}

int64_t FabricStore::insert_scan(ScanInfo info, const Fabric& f, int64_t routes) {
  LidMap lids(f);
  info.lmc = f.max_lmc();
  info.has_lfts = f.has_lfts;
  info.switches = info.cas = info.links = 0;
  for (const Node& n : f.nodes) {
    (n.is_switch() ? info.switches : info.cas)++;
    for (const Port& p : n.ports) info.links += p.connected();
  }
  info.links /= 2;
  info.lids = static_cast<int64_t>(lids.lids().size());
  info.routes = routes;
  if (info.started_at.empty()) info.started_at = now_iso();

  Stmt s(db_, "INSERT INTO scan(started_at, source, origin, complete, duration_s, lmc, switches, cas, links, lids, routes, has_lfts)"
              " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(1, info.started_at).bind(2, info.source).bind(3, info.origin).bind(4, int64_t{info.complete})
      .bind(5, info.duration_s).bind(6, int64_t{info.lmc}).bind(7, info.switches).bind(8, info.cas)
      .bind(9, info.links).bind(10, info.lids).bind(11, info.routes).bind(12, int64_t{info.has_lfts}).run();
  const int64_t id = db_.last_insert_rowid();
  shapes_.erase(id);
  if (tables_scan_ == id) tables_scan_ = 0;  // an id used again: not the fabric kept

  Stmt n(db_, "INSERT INTO node(scan_id, idx, guid, type, desc, nports, lft_read, sysimg_guid, node_desc) VALUES (?,?,?,?,?,?,?,?,?)");
  Stmt p(db_, "INSERT INTO port(scan_id, node_idx, num, guid, base_lid, lmc, state, width, speed, peer_node, peer_port)"
              " VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  Stmt l(db_, "INSERT INTO lft(scan_id, node_idx, top, ports, rows_to) VALUES (?,?,?,?,?)");
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& node = f.nodes[i];
    n.bind(1, id).bind(2, int64_t(i)).bind(3, guid_hex(node.guid)).bind(4, to_string(node.type)).bind(5, node.desc)
        .bind(6, int64_t{node.num_ports()}).bind(7, int64_t{node.lft_read}).bind(8, guid_hex(node.sysimg_guid));
    if (!node.node_desc.empty()) n.bind(9, node.node_desc);
    n.run();
    for (size_t pn = 0; pn < node.ports.size(); ++pn) {
      const Port& port = node.ports[pn];
      if (pn == 0 && !node.is_switch()) continue;
      p.bind(1, id).bind(2, int64_t(i)).bind(3, int64_t(pn)).bind(4, guid_hex(port.guid)).bind(5, int64_t{port.base_lid})
          .bind(6, int64_t{port.lmc}).bind(7, to_string(port.state)).bind(8, int64_t{port.width}).bind(9, port.speed);
      if (port.connected()) p.bind(10, int64_t{port.peer_node}).bind(11, int64_t{port.peer_port});
      p.run();
    }
    if (node.is_switch() && node.lft_read && !node.lft.empty()) {
      l.bind(1, id).bind(2, int64_t(i)).bind(3, int64_t(node.lft.size()) - 1).bind_blob(4, node.lft);
      if (node.lft_rows_to != Node::kAllRows) l.bind(5, int64_t{node.lft_rows_to});
      else l.bind_null(5);
      l.run();
    }
  }
  Stmt li(db_, "INSERT INTO lid(scan_id, lid, node_idx, port) VALUES (?,?,?,?)");
  for (uint16_t lid : lids.lids()) {
    const LidOwner* o = lids.owner(lid);
    li.bind(1, id).bind(2, int64_t{lid}).bind(3, int64_t{o->node}).bind(4, int64_t{o->port}).run();
  }
  insert_problems(id, f.problems);
  return id;
}

void FabricStore::insert_problems(int64_t id, const std::vector<Problem>& problems) {
  Stmt pr(db_, "INSERT INTO problem(scan_id, kind, node_guid, port, detail) VALUES (?,?,?,?,?)");
  for (const Problem& prob : problems) {
    pr.bind(1, id).bind(2, prob.kind);
    if (prob.node_guid) pr.bind(3, guid_hex(prob.node_guid));
    if (prob.port >= 0) pr.bind(4, int64_t{prob.port});
    pr.bind(5, prob.detail).run();
  }
}

void FabricStore::insert_routes(int64_t id, const RouteSet& routes) {
  Stmt r(db_, "INSERT INTO route(scan_id, ingress, dlid, status, hops) VALUES (?,?,?,?,?)");
  for (size_t ii = 0; ii < routes.ingress.size(); ++ii)
    for (size_t di = 0; di < routes.dlids.size(); ++di) {
      size_t k = routes.index(ii, di);
      r.bind(1, id).bind(2, int64_t{routes.ingress[ii]}).bind(3, int64_t{routes.dlids[di]})
          .bind(4, int64_t(routes.status[k])).bind(5, encode_hops(routes.path(k))).run();
    }
}

std::vector<ScanInfo> FabricStore::scans() {
  std::vector<ScanInfo> out;
  Stmt q(db_, std::string(kScanCols) + " ORDER BY id");
  while (q.step()) out.push_back(read_scan_row(q));
  return out;
}

ScanInfo FabricStore::scan(int64_t id) {
  Stmt q(db_, std::string(kScanCols) + " WHERE id = ?");
  q.bind(1, id);
  if (!q.step()) throw InputError("no scan " + std::to_string(id) + " in " + path_);
  return read_scan_row(q);
}

int64_t FabricStore::latest_scan() {
  Stmt q(db_, "SELECT max(id) FROM scan");
  if (!q.step() || q.is_null(0)) throw InputError(path_ + " holds no scan yet (run 'ibroute scan' first)");
  if (q.type(0) != SQLITE_INTEGER) damaged("scan table", "id " + shown(q, 0) + " is not an integer");
  return q.i64(0);
}

std::vector<Node> FabricStore::load_nodes(int64_t scan_id) {
  std::vector<Node> nodes;
  Stmt n(db_, "SELECT idx, guid, type, desc, nports, lft_read, sysimg_guid, node_desc FROM node WHERE scan_id = ? ORDER BY idx");
  n.bind(1, scan_id);
  const std::string scan_where = "scan " + std::to_string(scan_id);
  while (n.step()) {
    const std::string where = scan_where + ", node row " + std::to_string(nodes.size() + 1);
    int64_t idx = int_col(n, 0, 0, kMaxCount, where, "index");
    if (idx != static_cast<int64_t>(nodes.size()))
      damaged(where, "index " + std::to_string(idx) + ", expected " + std::to_string(nodes.size()) + " (indices have gaps)");
    if (nodes.size() >= 0x7fffffff) damaged(where, "too many nodes");
    Node node;
    node.guid = guid_col(n, 1, where, "GUID");
    auto type = node_type_from(n.text_view(2));
    if (n.type(2) != SQLITE_TEXT || !type) damaged(where, "type " + shown(n, 2) + " (not ca, switch or router)");
    node.type = *type;
    node.desc = text_col(n, 3, where, "desc");
    node.ports.resize(int_col(n, 4, 0, 254, where, "nports") + 1);
    node.lft_read = bool_col(n, 5, where, "lft_read");
    node.sysimg_guid = guid_col(n, 6, where, "system image GUID", true);
    if (!n.is_null(7)) node.node_desc = text_col(n, 7, where, "node_desc");
    nodes.push_back(std::move(node));
  }
  remember_shape(scan_id, nodes);
  return nodes;
}

void FabricStore::remember_shape(int64_t scan_id, const std::vector<Node>& nodes) {
  std::vector<NodeShape>& s = shapes_[scan_id];
  s.clear();
  for (const Node& n : nodes) s.push_back({n.type, n.num_ports()});
}

const std::vector<FabricStore::NodeShape>& FabricStore::shape(int64_t scan_id) {
  auto it = shapes_.find(scan_id);
  if (it != shapes_.end()) return it->second;
  load_nodes(scan_id);
  return shapes_.at(scan_id);
}

// The forwarding tables of scan `scan_id` into its loaded fabric `f`, each row checked.
void FabricStore::load_lfts(int64_t scan_id, Fabric& f) {
  const auto nn = static_cast<int64_t>(f.nodes.size());
  const std::string scan_where = "scan " + std::to_string(scan_id);
  Stmt l(db_, "SELECT node_idx, top, ports, rows_to FROM lft WHERE scan_id = ? ORDER BY node_idx");
  l.bind(1, scan_id);
  for (int64_t row = 1; l.step(); ++row) {
    std::string where = scan_where + ", LFT row " + std::to_string(row);
    const int64_t ni = l.type(0) == SQLITE_INTEGER ? l.i64(0) : -1;
    if (ni < 0 || ni >= nn) damaged(where, "node " + shown(l, 0) + " of " + std::to_string(nn));
    Node& node = f.nodes[ni];
    where += " (node " + std::to_string(ni) + ")";
    if (!node.is_switch()) damaged(where, "node " + std::to_string(ni) + " is not a switch");
    const int64_t top = int_col(l, 1, -1, kMaxLid, where, "top");
    auto b = blob_col(l, 2, where, "ports");
    if (b.size() > static_cast<size_t>(kMaxLid) + 1) damaged(where, "table of " + std::to_string(b.size()) + " LIDs (at most 49152)");
    for (size_t lid = 0; lid < b.size(); ++lid)
      if (b[lid] != kNoRoute && b[lid] > node.num_ports())
        damaged(where, "LID " + std::to_string(lid) + " to port " + std::to_string(b[lid]) + " of " + std::to_string(node.num_ports()));
    // Written as the table's last LID: a row whose two disagree was changed after the scan.
    if (static_cast<int64_t>(b.size()) != top + 1)
      damaged(where, "top LID " + std::to_string(top) + " but a table of " + std::to_string(b.size()) + " LIDs");
    node.lft.assign(b.begin(), b.end());
    // Rows read up to a LID of the table (a dump cut after it): the LIDs from there on unknown.
    if (!l.is_null(3)) node.lft_rows_to = static_cast<uint32_t>(int_col(l, 3, 1, top, where, "rows_to"));
  }
}

Fabric FabricStore::load_fabric(int64_t scan_id, bool with_lfts) {
  ScanInfo info = scan(scan_id);
  Fabric f;
  f.complete = info.complete;
  f.has_lfts = info.has_lfts;
  f.nodes = load_nodes(scan_id);
  const auto nn = static_cast<int64_t>(f.nodes.size());
  const std::string scan_where = "scan " + std::to_string(scan_id);

  Stmt p(db_, "SELECT node_idx, num, guid, base_lid, lmc, state, width, speed, peer_node, peer_port FROM port WHERE scan_id = ?"
              " ORDER BY node_idx, num");
  p.bind(1, scan_id);
  for (int64_t row = 1; p.step(); ++row) {
    std::string where = scan_where + ", port row " + std::to_string(row);
    const int64_t ni = p.type(0) == SQLITE_INTEGER ? p.i64(0) : -1;
    if (ni < 0 || ni >= nn) damaged(where, "node " + shown(p, 0) + " of " + std::to_string(nn));
    Node& node = f.nodes[ni];
    const int64_t pn = p.type(1) == SQLITE_INTEGER ? p.i64(1) : -1;
    if (pn < 0 || pn > node.num_ports())
      damaged(where, "port " + shown(p, 1) + " of node " + std::to_string(ni) + " with " + std::to_string(node.num_ports()) + " ports");
    where += " (node " + std::to_string(ni) + " port " + std::to_string(pn) + ")";
    Port& port = node.ports[pn];
    port.guid = guid_col(p, 2, where, "GUID");
    port.base_lid = static_cast<uint16_t>(int_col(p, 3, 0, kMaxLid, where, "base LID"));
    port.lmc = static_cast<uint8_t>(int_col(p, 4, 0, 7, where, "LMC"));
    auto state = port_state_from(p.text_view(5));
    if (p.type(5) != SQLITE_TEXT || !state) damaged(where, "state " + shown(p, 5) + " (not down, init, armed, active or unknown)");
    port.state = *state;
    int64_t width = p.type(6) == SQLITE_INTEGER ? p.i64(6) : -1;
    if (!valid_width(width)) damaged(where, "width " + shown(p, 6) + " (not 0, 1, 2, 4, 8 or 12)");
    port.width = static_cast<uint8_t>(width);
    port.speed = text_col(p, 7, where, "speed");
    if (!port.speed.empty() && lane_gbps(port.speed) == 0) damaged(where, "speed " + shown(p, 7) + " (not a known lane speed)");
    if (p.is_null(8) != p.is_null(9)) damaged(where, "peer node " + shown(p, 8) + " with peer port " + shown(p, 9));
    if (!p.is_null(8)) {
      const int64_t peer = p.type(8) == SQLITE_INTEGER ? p.i64(8) : -1;
      if (peer < 0 || peer >= nn) damaged(where, "peer node " + shown(p, 8) + " of " + std::to_string(nn));
      const int peer_ports = f.nodes[peer].num_ports();
      const int64_t pp = p.type(9) == SQLITE_INTEGER ? p.i64(9) : -1;
      if (pp < 1 || pp > peer_ports)
        damaged(where, "peer port " + shown(p, 9) + " of node " + std::to_string(peer) + " with " + std::to_string(peer_ports) + " ports");
      if (pn == 0) damaged(where, "port 0 is cabled");
      port.peer_node = static_cast<int32_t>(peer);
      port.peer_port = static_cast<uint8_t>(pp);
    }
  }
  // Links go both ways.
  for (size_t a = 0; a < f.nodes.size(); ++a)
    for (size_t pa = 1; pa < f.nodes[a].ports.size(); ++pa) {
      const Port& port = f.nodes[a].ports[pa];
      if (!port.connected()) continue;
      const Port& back = f.nodes[port.peer_node].ports[port.peer_port];
      if (back.peer_node != static_cast<int32_t>(a) || back.peer_port != pa)
        damaged(scan_where + ", node " + std::to_string(a) + " port " + std::to_string(pa),
                "peer node " + std::to_string(port.peer_node) + " port " + std::to_string(port.peer_port) + " points " +
                    (back.connected() ? "to node " + std::to_string(back.peer_node) + " port " + std::to_string(back.peer_port)
                                      : std::string("nowhere")));
    }

  if (with_lfts) load_lfts(scan_id, f);
  Stmt pr(db_, "SELECT kind, node_guid, port, detail FROM problem WHERE scan_id = ?");
  pr.bind(1, scan_id);
  for (int64_t row = 1; pr.step(); ++row) {
    const std::string where = scan_where + ", problem row " + std::to_string(row);
    Problem prob;
    prob.kind = text_col(pr, 0, where, "kind");
    prob.node_guid = guid_col(pr, 1, where, "node GUID", true);
    prob.port = pr.is_null(2) ? -1 : static_cast<int>(int_col(pr, 2, 0, 255, where, "port"));
    prob.detail = text_col(pr, 3, where, "detail");
    f.problems.push_back(std::move(prob));
  }
  return f;
}

std::vector<Hop> FabricStore::checked_hops(const std::vector<NodeShape>& nodes, int32_t ingress, std::string_view text,
                                           const std::string& where) {
  std::vector<Hop> hops;
  try {
    hops = decode_hops(text);
  } catch (const InputError&) {
    damaged(where, "hops '" + one_line(text, 60) + "' (not node:port ...)");
  }
  if (hops.empty()) damaged(where, "no hops");
  if (hops.front().node != ingress) damaged(where, "first hop at node " + std::to_string(hops.front().node) + ", not the ingress switch");
  for (const Hop& h : hops) {
    if (h.node < 0 || static_cast<size_t>(h.node) >= nodes.size())
      damaged(where, "hop to node " + std::to_string(h.node) + " of " + std::to_string(nodes.size()));
    const NodeShape& s = nodes[h.node];
    if (s.type != NodeType::sw) damaged(where, "hop through node " + std::to_string(h.node) + ", which is not a switch");
    if (h.out_port != kNoRoute && h.out_port > s.nports)
      damaged(where, "hop out of port " + std::to_string(h.out_port) + " of node " + std::to_string(h.node) + " with " +
                         std::to_string(s.nports) + " ports");
  }
  return hops;
}

RouteSet FabricStore::load_routes(int64_t scan_id) {
  if (const ScanInfo info = scan(scan_id); info.routes == 0 && info.has_lfts) return resolve_routes(load_fabric(scan_id, true));  // not stored (yet)
  const std::vector<NodeShape>& nodes = shape(scan_id);
  const auto nn = static_cast<int64_t>(nodes.size());
  const std::string scan_where = "scan " + std::to_string(scan_id);
  RouteSet r;
  Stmt d(db_, "SELECT lid, node_idx, port FROM lid WHERE scan_id = ? ORDER BY lid");
  d.bind(1, scan_id);
  for (int64_t row = 1; d.step(); ++row) {
    std::string where = scan_where + ", LID row " + std::to_string(row);
    const auto lid = int_col(d, 0, 1, kMaxLid, where, "LID");
    where = scan_where + ", LID " + std::to_string(lid);
    const int64_t ni = d.type(1) == SQLITE_INTEGER ? d.i64(1) : -1;
    if (ni < 0 || ni >= nn) damaged(where, "owner node " + shown(d, 1) + " of " + std::to_string(nn));
    const int64_t port = d.type(2) == SQLITE_INTEGER ? d.i64(2) : -1;
    const bool sw = nodes[ni].type == NodeType::sw;
    if (sw ? port != 0 : (port < 1 || port > nodes[ni].nports))
      damaged(where, "owner port " + shown(d, 2) + " of node " + std::to_string(ni) + (sw ? " (a switch: port 0)" : " with " + std::to_string(nodes[ni].nports) + " ports"));
    r.dlids.push_back(static_cast<uint16_t>(lid));
  }
  Stmt q(db_, "SELECT ingress, dlid, status, hops FROM route WHERE scan_id = ? ORDER BY ingress, dlid");
  q.bind(1, scan_id);
  r.offset.push_back(0);
  size_t di = 0;
  auto covered = [&] {
    if (!r.ingress.empty() && di != r.dlids.size())
      damaged(scan_where + ", routes of ingress " + std::to_string(r.ingress.back()),
              std::to_string(di) + " of " + std::to_string(r.dlids.size()) + " LIDs");
  };
  for (int64_t row = 1; q.step(); ++row) {
    std::string where = scan_where + ", route row " + std::to_string(row);
    const int64_t ingress = q.type(0) == SQLITE_INTEGER ? q.i64(0) : -1;
    if (ingress < 0 || ingress >= nn) damaged(where, "ingress node " + shown(q, 0) + " of " + std::to_string(nn));
    if (nodes[ingress].type != NodeType::sw) damaged(where, "ingress node " + std::to_string(ingress) + " is not a switch");
    if (r.ingress.empty() || r.ingress.back() != ingress) {
      covered();
      r.ingress.push_back(static_cast<int32_t>(ingress));
      di = 0;
    }
    const int64_t dlid = q.type(1) == SQLITE_INTEGER ? q.i64(1) : -1;
    where += " (ingress " + std::to_string(ingress) + ", DLID " + shown(q, 1) + ")";
    if (di >= r.dlids.size() || r.dlids[di] != dlid) damaged(where, "not the next assigned LID (routes do not cover the LIDs)");
    ++di;
    r.status.push_back(static_cast<RouteStatus>(int_col(q, 2, 0, static_cast<int>(RouteStatus::unknown), where, "status")));
    if (q.type(3) != SQLITE_TEXT) damaged(where, "hops " + shown(q, 3) + " are not text");
    for (const Hop& h : checked_hops(nodes, static_cast<int32_t>(ingress), q.text_view(3), where)) r.hops.push_back(h);
    r.offset.push_back(static_cast<uint32_t>(r.hops.size()));
  }
  covered();
  return r;
}

std::optional<StoredRoute> FabricStore::route(int64_t scan_id, int32_t ingress, uint16_t dlid) {
  const std::vector<NodeShape>& nodes = shape(scan_id);
  Stmt q(db_, "SELECT status, hops FROM route WHERE scan_id = ? AND ingress = ? AND dlid = ?");
  q.bind(1, scan_id).bind(2, int64_t{ingress}).bind(3, int64_t{dlid});
  if (!q.step()) {
    const ScanInfo info = scan(scan_id);
    if (info.routes != 0 || !info.has_lfts) return std::nullopt;
    // Routes not stored (yet): walked from the stored tables, as they would have been (for the
    // assigned LIDs from the switches hosts attach to, as resolve_routes walks them). The fabric is
    // kept for the next question: `routes` asks once per LID of the destination.
    if (tables_scan_ != scan_id) tables_ = load_fabric(scan_id, true), tables_scan_ = scan_id;
    const Fabric& f = tables_;
    if (ingress < 0 || static_cast<size_t>(ingress) >= f.nodes.size() || !f.nodes[ingress].is_switch() || !LidMap(f).owner(dlid))
      return std::nullopt;
    const std::vector<Port>& ports = f.nodes[ingress].ports;
    if (std::none_of(ports.begin(), ports.end(), [&](const Port& p) { return p.connected() && !f.nodes[p.peer_node].is_switch(); }))
      return std::nullopt;  // no CA behind it: not an ingress switch, none stored either
    StoredRoute r;
    r.status = LftWalker(f).walk(ingress, dlid, r.hops);
    return r;
  }
  const std::string where =
      "scan " + std::to_string(scan_id) + ", route of ingress " + std::to_string(ingress) + " to DLID " + std::to_string(dlid);
  if (ingress < 0 || static_cast<size_t>(ingress) >= nodes.size() || nodes[ingress].type != NodeType::sw)
    damaged(where, "ingress is not a switch");
  auto status = static_cast<RouteStatus>(int_col(q, 0, 0, static_cast<int>(RouteStatus::unknown), where, "status"));
  if (q.type(1) != SQLITE_TEXT) damaged(where, "hops " + shown(q, 1) + " are not text");
  return StoredRoute{status, checked_hops(nodes, ingress, q.text_view(1), where)};
}

}  // namespace ibroute::store
