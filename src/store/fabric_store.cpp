#include "fabric_store.hpp"

#include <charconv>
#include <filesystem>

#include "ibroute/fabric/error.hpp"

namespace ibroute::store {

using namespace ibroute::fabric;

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE scan(
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('live', 'offline')),
  origin TEXT NOT NULL,
  complete INTEGER NOT NULL,
  duration_s REAL NOT NULL,
  lmc INTEGER NOT NULL,
  switches INTEGER NOT NULL, cas INTEGER NOT NULL, links INTEGER NOT NULL,
  lids INTEGER NOT NULL, routes INTEGER NOT NULL);
CREATE TABLE node(
  scan_id INTEGER NOT NULL REFERENCES scan(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL, guid TEXT NOT NULL, type TEXT NOT NULL, desc TEXT NOT NULL,
  nports INTEGER NOT NULL, lft_read INTEGER NOT NULL,
  PRIMARY KEY (scan_id, idx)) WITHOUT ROWID;
CREATE TABLE port(
  scan_id INTEGER NOT NULL, node_idx INTEGER NOT NULL, num INTEGER NOT NULL,
  guid TEXT NOT NULL, base_lid INTEGER NOT NULL, lmc INTEGER NOT NULL, state TEXT NOT NULL,
  width INTEGER NOT NULL, speed TEXT NOT NULL, peer_node INTEGER, peer_port INTEGER,
  PRIMARY KEY (scan_id, node_idx, num)) WITHOUT ROWID;
CREATE TABLE lid(
  scan_id INTEGER NOT NULL, lid INTEGER NOT NULL, node_idx INTEGER NOT NULL, port INTEGER NOT NULL,
  PRIMARY KEY (scan_id, lid)) WITHOUT ROWID;
CREATE TABLE lft(
  scan_id INTEGER NOT NULL, node_idx INTEGER NOT NULL, top INTEGER NOT NULL, ports BLOB NOT NULL,
  PRIMARY KEY (scan_id, node_idx)) WITHOUT ROWID;
CREATE TABLE route_status(code INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE route(
  scan_id INTEGER NOT NULL, ingress INTEGER NOT NULL, dlid INTEGER NOT NULL,
  status INTEGER NOT NULL, hops TEXT NOT NULL,
  PRIMARY KEY (scan_id, ingress, dlid)) WITHOUT ROWID;
CREATE TABLE problem(
  scan_id INTEGER NOT NULL, kind TEXT NOT NULL, node_guid TEXT, port INTEGER, detail TEXT NOT NULL);
CREATE INDEX problem_scan ON problem(scan_id);
)sql";

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

uint64_t parse_guid(std::string_view s) {
  if (s.starts_with("0x")) s.remove_prefix(2);
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return v;
}

ScanInfo read_scan_row(Stmt& q) {
  ScanInfo s;
  s.id = q.i64(0);
  s.started_at = q.text(1);
  s.source = q.text(2);
  s.origin = q.text(3);
  s.complete = q.i64(4) != 0;
  s.duration_s = q.f64(5);
  s.lmc = static_cast<int>(q.i64(6));
  s.switches = q.i64(7);
  s.cas = q.i64(8);
  s.links = q.i64(9);
  s.lids = q.i64(10);
  s.routes = q.i64(11);
  return s;
}
constexpr const char* kScanCols =
    "SELECT id, started_at, source, origin, complete, duration_s, lmc, switches, cas, links, lids, routes FROM scan";

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
  while (p < end) {
    int node = 0, port = 0;
    auto r1 = std::from_chars(p, end, node);
    if (r1.ec != std::errc() || r1.ptr >= end || *r1.ptr != ':') throw InputError("corrupt route in database: " + std::string(t));
    auto r2 = std::from_chars(r1.ptr + 1, end, port);
    if (r2.ec != std::errc()) throw InputError("corrupt route in database: " + std::string(t));
    out.push_back({node, static_cast<uint8_t>(port)});
    p = r2.ptr;
    while (p < end && *p == ' ') ++p;
  }
  return out;
}

FabricStore::FabricStore(const std::string& path, bool create)
    : path_(path),
      db_([&] {
        if (!create && !std::filesystem::exists(path)) throw InputError("no database at " + path + " (run 'ibroute scan' first)");
        return Db(path, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0));
      }()) {
  check_or_create_schema(create);
}

void FabricStore::check_or_create_schema(bool create) {
  int64_t tables = 0;
  try {
    Stmt q(db_, "SELECT count(*) FROM sqlite_master");
    q.step();
    tables = q.i64(0);
  } catch (const SqliteError& e) {
    throw InputError(path_ + " is not an ibroute database (" + e.what() + ")");
  }
  if (tables == 0) {
    if (!create) throw InputError(path_ + " is an empty database (run 'ibroute scan' first)");
    Transaction t(db_);
    db_.exec(kSchema);
    Stmt m(db_, "INSERT INTO meta(key, value) VALUES (?, ?)");
    m.bind(1, "schema_version").bind(2, std::to_string(kSchemaVersion)).run();
    m.bind(1, "application").bind(2, "ibroute").run();
    Stmt s(db_, "INSERT INTO route_status(code, name) VALUES (?, ?)");
    for (int c = 0; c <= static_cast<int>(RouteStatus::unknown); ++c)
      s.bind(1, int64_t{c}).bind(2, to_string(static_cast<RouteStatus>(c))).run();
    t.commit();
    return;
  }
  std::string version;
  try {
    Stmt q(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (q.step()) version = q.text(0);
  } catch (const SqliteError&) {
  }
  if (version.empty()) throw InputError(path_ + " is an SQLite database but not an ibroute database");
  if (version != std::to_string(kSchemaVersion))
    throw InputError(path_ + " has database schema version " + version + "; this ibroute reads version " +
                     std::to_string(kSchemaVersion));
}

int64_t FabricStore::save_scan(ScanInfo info, const Fabric& f, const RouteSet& routes) {
  LidMap lids(f);
  info.lmc = f.max_lmc();
  info.switches = info.cas = info.links = 0;
  for (const Node& n : f.nodes) {
    (n.is_switch() ? info.switches : info.cas)++;
    for (const Port& p : n.ports) info.links += p.connected();
  }
  info.links /= 2;
  info.lids = static_cast<int64_t>(lids.lids().size());
  info.routes = static_cast<int64_t>(routes.size());
  if (info.started_at.empty()) info.started_at = now_iso();

  Transaction t(db_);
  Stmt s(db_, "INSERT INTO scan(started_at, source, origin, complete, duration_s, lmc, switches, cas, links, lids, routes)"
              " VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(1, info.started_at).bind(2, info.source).bind(3, info.origin).bind(4, int64_t{info.complete})
      .bind(5, info.duration_s).bind(6, int64_t{info.lmc}).bind(7, info.switches).bind(8, info.cas)
      .bind(9, info.links).bind(10, info.lids).bind(11, info.routes).run();
  const int64_t id = db_.last_insert_rowid();

  Stmt n(db_, "INSERT INTO node VALUES (?,?,?,?,?,?,?)");
  Stmt p(db_, "INSERT INTO port VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  Stmt l(db_, "INSERT INTO lft VALUES (?,?,?,?)");
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& node = f.nodes[i];
    n.bind(1, id).bind(2, int64_t(i)).bind(3, guid_hex(node.guid)).bind(4, to_string(node.type)).bind(5, node.desc)
        .bind(6, int64_t{node.num_ports()}).bind(7, int64_t{node.lft_read}).run();
    for (size_t pn = 0; pn < node.ports.size(); ++pn) {
      const Port& port = node.ports[pn];
      if (pn == 0 && !node.is_switch()) continue;
      p.bind(1, id).bind(2, int64_t(i)).bind(3, int64_t(pn)).bind(4, guid_hex(port.guid)).bind(5, int64_t{port.base_lid})
          .bind(6, int64_t{port.lmc}).bind(7, to_string(port.state)).bind(8, int64_t{port.width}).bind(9, port.speed);
      if (port.connected()) p.bind(10, int64_t{port.peer_node}).bind(11, int64_t{port.peer_port});
      p.run();
    }
    if (node.is_switch() && node.lft_read) l.bind(1, id).bind(2, int64_t(i)).bind(3, int64_t(node.lft.size()) - 1).bind_blob(4, node.lft).run();
  }
  Stmt li(db_, "INSERT INTO lid VALUES (?,?,?,?)");
  for (uint16_t lid : lids.lids()) {
    const LidOwner* o = lids.owner(lid);
    li.bind(1, id).bind(2, int64_t{lid}).bind(3, int64_t{o->node}).bind(4, int64_t{o->port}).run();
  }
  Stmt pr(db_, "INSERT INTO problem VALUES (?,?,?,?,?)");
  for (const Problem& prob : f.problems) {
    pr.bind(1, id).bind(2, prob.kind);
    if (prob.node_guid) pr.bind(3, guid_hex(prob.node_guid));
    if (prob.port >= 0) pr.bind(4, int64_t{prob.port});
    pr.bind(5, prob.detail).run();
  }
  Stmt r(db_, "INSERT INTO route VALUES (?,?,?,?,?)");
  for (size_t ii = 0; ii < routes.ingress.size(); ++ii)
    for (size_t di = 0; di < routes.dlids.size(); ++di) {
      size_t k = routes.index(ii, di);
      r.bind(1, id).bind(2, int64_t{routes.ingress[ii]}).bind(3, int64_t{routes.dlids[di]})
          .bind(4, int64_t(routes.status[k])).bind(5, encode_hops(routes.path(k))).run();
    }
  t.commit();
  return id;
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
  return q.i64(0);
}

Fabric FabricStore::load_fabric(int64_t scan_id, bool with_lfts) {
  ScanInfo info = scan(scan_id);
  Fabric f;
  f.complete = info.complete;
  Stmt n(db_, "SELECT idx, guid, type, desc, nports, lft_read FROM node WHERE scan_id = ? ORDER BY idx");
  n.bind(1, scan_id);
  while (n.step()) {
    if (n.i64(0) != static_cast<int64_t>(f.nodes.size())) throw InputError("corrupt database: node indices have gaps");
    Node node;
    node.guid = parse_guid(n.text_view(1));
    node.type = node_type_from(n.text_view(2)).value_or(NodeType::ca);
    node.desc = n.text(3);
    node.ports.resize(n.i64(4) + 1);
    node.lft_read = n.i64(5) != 0;
    f.nodes.push_back(std::move(node));
  }
  Stmt p(db_, "SELECT node_idx, num, guid, base_lid, lmc, state, width, speed, peer_node, peer_port FROM port WHERE scan_id = ?");
  p.bind(1, scan_id);
  while (p.step()) {
    Port& port = f.nodes.at(p.i64(0)).ports.at(p.i64(1));
    port.guid = parse_guid(p.text_view(2));
    port.base_lid = static_cast<uint16_t>(p.i64(3));
    port.lmc = static_cast<uint8_t>(p.i64(4));
    port.state = port_state_from(p.text_view(5)).value_or(PortState::unknown);
    port.width = static_cast<uint8_t>(p.i64(6));
    port.speed = p.text(7);
    if (!p.is_null(8)) {
      port.peer_node = static_cast<int32_t>(p.i64(8));
      port.peer_port = static_cast<uint8_t>(p.i64(9));
    }
  }
  if (with_lfts) {
    Stmt l(db_, "SELECT node_idx, ports FROM lft WHERE scan_id = ?");
    l.bind(1, scan_id);
    while (l.step()) {
      auto b = l.blob(1);
      f.nodes.at(l.i64(0)).lft.assign(b.begin(), b.end());
    }
  }
  Stmt pr(db_, "SELECT kind, node_guid, port, detail FROM problem WHERE scan_id = ?");
  pr.bind(1, scan_id);
  while (pr.step())
    f.problems.push_back({pr.text(0), pr.is_null(1) ? 0 : parse_guid(pr.text_view(1)),
                          pr.is_null(2) ? -1 : static_cast<int>(pr.i64(2)), pr.text(3)});
  return f;
}

RouteSet FabricStore::load_routes(int64_t scan_id) {
  RouteSet r;
  Stmt d(db_, "SELECT lid FROM lid WHERE scan_id = ? ORDER BY lid");
  d.bind(1, scan_id);
  while (d.step()) r.dlids.push_back(static_cast<uint16_t>(d.i64(0)));
  Stmt q(db_, "SELECT ingress, dlid, status, hops FROM route WHERE scan_id = ? ORDER BY ingress, dlid");
  q.bind(1, scan_id);
  r.offset.push_back(0);
  size_t di = 0;
  while (q.step()) {
    auto ingress = static_cast<int32_t>(q.i64(0));
    if (r.ingress.empty() || r.ingress.back() != ingress) r.ingress.push_back(ingress), di = 0;
    if (di >= r.dlids.size() || r.dlids[di] != q.i64(1)) throw InputError("corrupt database: routes do not cover the LIDs");
    ++di;
    r.status.push_back(static_cast<RouteStatus>(q.i64(2)));
    for (const Hop& h : decode_hops(q.text_view(3))) r.hops.push_back(h);
    r.offset.push_back(static_cast<uint32_t>(r.hops.size()));
  }
  return r;
}

std::optional<StoredRoute> FabricStore::route(int64_t scan_id, int32_t ingress, uint16_t dlid) {
  Stmt q(db_, "SELECT status, hops FROM route WHERE scan_id = ? AND ingress = ? AND dlid = ?");
  q.bind(1, scan_id).bind(2, int64_t{ingress}).bind(3, int64_t{dlid});
  if (!q.step()) return std::nullopt;
  return StoredRoute{static_cast<RouteStatus>(q.i64(0)), decode_hops(q.text_view(1))};
}

}  // namespace ibroute::store
