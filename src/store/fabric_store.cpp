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

// Version 2: schedules. Per phase, the destination rank (int32) and DLID (uint16) of every
// source rank, little-endian, in two BLOBs.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE schedule(
  id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,  -- ids are never reused
  scan_id INTEGER NOT NULL REFERENCES scan(id),
  created_at TEXT NOT NULL, method TEXT NOT NULL, bound INTEGER NOT NULL,
  hosts INTEGER NOT NULL, phases INTEGER NOT NULL,
  message_size INTEGER NOT NULL, rate REAL NOT NULL, slot_s REAL NOT NULL,
  max_load INTEGER NOT NULL, congested INTEGER NOT NULL, seconds REAL NOT NULL);
CREATE TABLE schedule_host(
  schedule_id INTEGER NOT NULL, rank INTEGER NOT NULL, node_idx INTEGER NOT NULL, port INTEGER NOT NULL,
  name TEXT NOT NULL, PRIMARY KEY (schedule_id, rank)) WITHOUT ROWID;
CREATE TABLE schedule_phase(
  schedule_id INTEGER NOT NULL, phase INTEGER NOT NULL, dst BLOB NOT NULL, dlid BLOB NOT NULL,
  PRIMARY KEY (schedule_id, phase)) WITHOUT ROWID;
)sql";

// Version 3: runs of schedules, with the whole report as JSON.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE run(
  id INTEGER PRIMARY KEY AUTOINCREMENT, schedule_id INTEGER, scan_id INTEGER, started_at TEXT NOT NULL,
  ranks INTEGER NOT NULL, rounds INTEGER NOT NULL, planned INTEGER NOT NULL, ok INTEGER NOT NULL,
  skipped INTEGER NOT NULL, failed INTEGER NOT NULL, missing INTEGER NOT NULL, report TEXT NOT NULL);
)sql";

}  // namespace

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

namespace {

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
    db_.exec(kSchemaV2);
    db_.exec(kSchemaV3);
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
  if (version == "1" || version == "2") {
    migrate_from(std::stoi(version));
    return;
  }
  if (version != std::to_string(kSchemaVersion))
    throw InputError(path_ + " has database schema version " + version + "; this ibroute reads version " +
                     std::to_string(kSchemaVersion));
}

void FabricStore::migrate_from(int version) {
  Transaction t(db_);
  if (version <= 1) db_.exec(kSchemaV2);
  if (version <= 2) db_.exec(kSchemaV3);
  Stmt m(db_, "UPDATE meta SET value = ? WHERE key = 'schema_version'");
  m.bind(1, std::to_string(kSchemaVersion)).run();
  t.commit();
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

namespace ibroute::store {

namespace {
template <class T>
std::vector<uint8_t> to_le_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t b = 0; b < sizeof(T); ++b) out[i * sizeof(T) + b] = static_cast<uint8_t>(static_cast<uint64_t>(v[i]) >> (8 * b));
  return out;
}
template <class T>
std::vector<T> from_le_bytes(std::span<const uint8_t> bytes, size_t n) {
  if (bytes.size() != n * sizeof(T)) throw InputError("corrupt schedule in database: phase of the wrong size");
  std::vector<T> out(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = 0;
    for (size_t b = 0; b < sizeof(T); ++b) x |= uint64_t(bytes[i * sizeof(T) + b]) << (8 * b);
    out[i] = static_cast<T>(x);
  }
  return out;
}
constexpr const char* kScheduleCols =
    "SELECT id, name, scan_id, created_at, method, bound, hosts, phases, message_size, rate, slot_s, max_load, congested, "
    "seconds FROM schedule";
ScheduleInfo read_schedule_row(Stmt& q) {
  ScheduleInfo s;
  s.id = q.i64(0);
  s.name = q.text(1);
  s.scan_id = q.i64(2);
  s.created_at = q.text(3);
  s.method = q.text(4);
  s.bound = static_cast<int>(q.i64(5));
  s.hosts = q.i64(6);
  s.phases = q.i64(7);
  s.timing = {static_cast<uint64_t>(q.i64(8)), q.f64(9), q.f64(10)};
  s.max_load = static_cast<int>(q.i64(11));
  s.congested = q.i64(12);
  s.seconds = q.f64(13);
  return s;
}
}  // namespace

bool FabricStore::schedule_exists(const std::string& name) {
  Stmt q(db_, "SELECT 1 FROM schedule WHERE name = ?");
  q.bind(1, name);
  return q.step();
}

int64_t FabricStore::save_schedule(int64_t scan, const schedule::Schedule& s, int max_load, int64_t congested,
                                   double seconds, bool replace) {
  Transaction t(db_);
  if (schedule_exists(s.name)) {
    if (!replace) throw InputError("a schedule named '" + s.name + "' exists (choose another --name, or --replace)");
    Stmt id(db_, "SELECT id FROM schedule WHERE name = ?");
    id.bind(1, s.name);
    id.step();
    int64_t old = id.i64(0);
    for (const char* sql : {"DELETE FROM schedule_phase WHERE schedule_id = ?", "DELETE FROM schedule_host WHERE schedule_id = ?",
                            "DELETE FROM schedule WHERE id = ?"}) {
      Stmt d(db_, sql);
      d.bind(1, old).run();
    }
  }
  Stmt ins(db_, "INSERT INTO schedule(name, scan_id, created_at, method, bound, hosts, phases, message_size, rate, slot_s, "
                "max_load, congested, seconds) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, s.name).bind(2, scan).bind(3, now_iso()).bind(4, s.method).bind(5, int64_t{s.bound})
      .bind(6, int64_t(s.hosts.size())).bind(7, int64_t(s.phases.size())).bind(8, int64_t(s.timing.message_size))
      .bind(9, s.timing.rate).bind(10, s.timing.slot_s).bind(11, int64_t{max_load}).bind(12, congested).bind(13, seconds).run();
  const int64_t id = db_.last_insert_rowid();
  Stmt h(db_, "INSERT INTO schedule_host VALUES (?,?,?,?,?)");
  for (size_t r = 0; r < s.hosts.size(); ++r)
    h.bind(1, id).bind(2, int64_t(r)).bind(3, int64_t{s.hosts[r].node}).bind(4, int64_t{s.hosts[r].port}).bind(5, s.hosts[r].name).run();
  Stmt p(db_, "INSERT INTO schedule_phase VALUES (?,?,?,?)");
  for (size_t k = 0; k < s.phases.size(); ++k)
    p.bind(1, id).bind(2, int64_t(k)).bind_blob(3, to_le_bytes(s.phases[k].dst)).bind_blob(4, to_le_bytes(s.phases[k].dlid)).run();
  t.commit();
  return id;
}

std::vector<ScheduleInfo> FabricStore::schedules() {
  std::vector<ScheduleInfo> out;
  Stmt q(db_, std::string(kScheduleCols) + " ORDER BY id");
  while (q.step()) out.push_back(read_schedule_row(q));
  return out;
}

ScheduleInfo FabricStore::schedule_info(const std::string& name_or_id) {
  Stmt q(db_, std::string(kScheduleCols) + " WHERE name = ?1 OR (CAST(id AS TEXT) = ?1 AND NOT EXISTS (SELECT 1 FROM schedule WHERE name = ?1))");
  q.bind(1, name_or_id);
  if (!q.step()) throw InputError("no schedule named '" + name_or_id + "' in " + path_ + " (ibroute plan makes one)");
  return read_schedule_row(q);
}

schedule::Schedule FabricStore::load_schedule(int64_t id) {
  Stmt q(db_, std::string(kScheduleCols) + " WHERE id = ?");
  q.bind(1, id);
  if (!q.step()) throw InputError("no schedule " + std::to_string(id));
  ScheduleInfo info = read_schedule_row(q);
  schedule::Schedule s;
  s.name = info.name;
  s.method = info.method;
  s.bound = info.bound;
  s.timing = info.timing;
  Stmt h(db_, "SELECT node_idx, port, name FROM schedule_host WHERE schedule_id = ? ORDER BY rank");
  h.bind(1, id);
  while (h.step()) s.hosts.push_back({static_cast<int32_t>(h.i64(0)), static_cast<uint8_t>(h.i64(1)), h.text(2)});
  Stmt p(db_, "SELECT dst, dlid FROM schedule_phase WHERE schedule_id = ? ORDER BY phase");
  p.bind(1, id);
  while (p.step())
    s.phases.push_back({from_le_bytes<int32_t>(p.blob(0), s.hosts.size()), from_le_bytes<uint16_t>(p.blob(1), s.hosts.size())});
  if (static_cast<int64_t>(s.phases.size()) != info.phases) throw InputError("corrupt schedule in database: phases missing");
  return s;
}

int64_t FabricStore::save_run(const RunRow& r) {
  Stmt q(db_,
         "INSERT INTO run(schedule_id, scan_id, started_at, ranks, rounds, planned, ok, skipped, failed, missing, report) "
         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (r.schedule_id) q.bind(1, *r.schedule_id);
  if (r.scan_id) q.bind(2, *r.scan_id);
  q.bind(3, std::string_view(r.started_at.empty() ? now_iso() : r.started_at)).bind(4, r.ranks).bind(5, r.rounds).bind(6, r.planned).bind(7, r.ok);
  q.bind(8, r.skipped).bind(9, r.failed).bind(10, r.missing).bind(11, r.report_json).run();
  return db_.last_insert_rowid();
}

std::optional<RunRow> FabricStore::run(int64_t id) {
  Stmt q(db_, "SELECT id, schedule_id, scan_id, started_at, ranks, rounds, planned, ok, skipped, failed, missing, report FROM run WHERE id = ?");
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  RunRow r;
  r.id = q.i64(0);
  if (!q.is_null(1)) r.schedule_id = q.i64(1);
  if (!q.is_null(2)) r.scan_id = q.i64(2);
  r.started_at = q.text(3);
  r.ranks = q.i64(4), r.rounds = q.i64(5), r.planned = q.i64(6), r.ok = q.i64(7);
  r.skipped = q.i64(8), r.failed = q.i64(9), r.missing = q.i64(10);
  r.report_json = q.text(11);
  return r;
}

}  // namespace ibroute::store
