#include "fabric_store.hpp"

#include <charconv>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <span>

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
  lids INTEGER NOT NULL, routes INTEGER NOT NULL,
  has_lfts INTEGER NOT NULL DEFAULT 1);
CREATE TABLE node(
  scan_id INTEGER NOT NULL REFERENCES scan(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL, guid TEXT NOT NULL, type TEXT NOT NULL, desc TEXT NOT NULL,
  nports INTEGER NOT NULL, lft_read INTEGER NOT NULL,
  sysimg_guid TEXT, node_desc TEXT,
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
// source rank, little-endian, in two BLOBs. Version 5 adds two groups (senders and receivers: int32
// rank BLOBs, NULL for an all-to-all) and the compact phase: `shift` set, `dst` empty and `dlid`
// one byte per sender, the DLID offset from the destination's base LID (0xff: no transfer).
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE schedule(
  id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,  -- ids are never reused
  scan_id INTEGER NOT NULL REFERENCES scan(id),
  created_at TEXT NOT NULL, method TEXT NOT NULL, bound INTEGER NOT NULL,
  hosts INTEGER NOT NULL, phases INTEGER NOT NULL,
  message_size INTEGER NOT NULL, rate REAL NOT NULL, slot_s REAL NOT NULL,
  max_load INTEGER NOT NULL, congested INTEGER NOT NULL, seconds REAL NOT NULL,
  senders BLOB, receivers BLOB);
CREATE TABLE schedule_host(
  schedule_id INTEGER NOT NULL, rank INTEGER NOT NULL, node_idx INTEGER NOT NULL, port INTEGER NOT NULL,
  name TEXT NOT NULL, PRIMARY KEY (schedule_id, rank)) WITHOUT ROWID;
-- A rowid table (unlike the others): a phase row of a few KB stays on its page, where a WITHOUT
-- ROWID row spills everything beyond ~1 KB into an overflow page of its own (+35 % on disk).
CREATE TABLE schedule_phase(
  schedule_id INTEGER NOT NULL, phase INTEGER NOT NULL, dst BLOB NOT NULL, dlid BLOB NOT NULL, shift INTEGER,
  slots INTEGER, PRIMARY KEY (schedule_id, phase));
)sql";

// Version 3: runs of schedules, with the whole report as JSON.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE run(
  id INTEGER PRIMARY KEY AUTOINCREMENT, schedule_id INTEGER, scan_id INTEGER, started_at TEXT NOT NULL,
  ranks INTEGER NOT NULL, rounds INTEGER NOT NULL, planned INTEGER NOT NULL, ok INTEGER NOT NULL,
  skipped INTEGER NOT NULL, failed INTEGER NOT NULL, missing INTEGER NOT NULL, report TEXT NOT NULL);
)sql";

// Version 4: the system image GUID and the reported node description (NULL = same as desc) of
// every node; whether a scan has forwarding tables. Added column by column (a database may have
// some already: tests make older versions by dropping tables from a new one).
struct AddedColumn {
  const char* table;
  const char* column;
  const char* sql;
};
constexpr AddedColumn kSchemaV4[] = {
    {"node", "sysimg_guid", "ALTER TABLE node ADD COLUMN sysimg_guid TEXT"},
    {"node", "node_desc", "ALTER TABLE node ADD COLUMN node_desc TEXT"},
    {"scan", "has_lfts", "ALTER TABLE scan ADD COLUMN has_lfts INTEGER NOT NULL DEFAULT 1"},
};
// Version 5: two-group schedules and compact phases (above).
constexpr AddedColumn kSchemaV5[] = {
    {"schedule", "senders", "ALTER TABLE schedule ADD COLUMN senders BLOB"},
    {"schedule", "receivers", "ALTER TABLE schedule ADD COLUMN receivers BLOB"},
    {"schedule_phase", "shift", "ALTER TABLE schedule_phase ADD COLUMN shift INTEGER"},
};
// Version 6: phases of different lengths (`slots`: how many slots the phase lasts; NULL: one).
constexpr AddedColumn kSchemaV6[] = {
    {"schedule_phase", "slots", "ALTER TABLE schedule_phase ADD COLUMN slots INTEGER"},
};

}  // namespace

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

namespace {

// ---- validation of what the database holds: one line naming the row and what is wrong in it

[[noreturn]] void damaged(const std::string& where, const std::string& what) {
  throw InputError(one_line("database damaged: " + where + ": " + what, 300));
}

// A column's value as a message shows it.
std::string shown(const Stmt& q, int col) {
  switch (q.type(col)) {
    case SQLITE_NULL: return "NULL";
    case SQLITE_INTEGER: return std::to_string(q.i64(col));
    case SQLITE_FLOAT: return std::to_string(q.f64(col));
    case SQLITE_BLOB: return "a blob of " + std::to_string(q.blob(col).size()) + " bytes";
    default: return "'" + one_line(q.text_view(col), 40) + "'";
  }
}

int64_t int_col(const Stmt& q, int col, int64_t lo, int64_t hi, const std::string& where, std::string_view name) {
  if (q.type(col) != SQLITE_INTEGER) damaged(where, std::string(name) + " " + shown(q, col) + " is not an integer");
  int64_t v = q.i64(col);
  if (v < lo || v > hi)
    damaged(where, std::string(name) + " " + std::to_string(v) + " (not in " + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return v;
}
constexpr int64_t kMaxCount = int64_t{1} << 53;

double real_col(const Stmt& q, int col, const std::string& where, std::string_view name) {
  if (q.type(col) != SQLITE_INTEGER && q.type(col) != SQLITE_FLOAT)
    damaged(where, std::string(name) + " " + shown(q, col) + " is not a number");
  double v = q.f64(col);
  if (!std::isfinite(v) || v < 0) damaged(where, std::string(name) + " " + shown(q, col) + " (not a number >= 0)");
  return v;
}

bool bool_col(const Stmt& q, int col, const std::string& where, std::string_view name) {
  return int_col(q, col, 0, 1, where, name) != 0;
}

// "0x" and 1 to 16 hex digits, nothing else.
std::optional<uint64_t> guid_from(std::string_view s) {
  if (!s.starts_with("0x")) return std::nullopt;
  s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

uint64_t guid_col(const Stmt& q, int col, const std::string& where, std::string_view name, bool nullable = false) {
  if (nullable && q.is_null(col)) return 0;
  if (q.type(col) != SQLITE_TEXT) damaged(where, std::string(name) + " " + shown(q, col) + " is not a GUID");
  auto g = guid_from(q.text_view(col));
  if (!g) damaged(where, std::string(name) + " " + shown(q, col) + " is not a GUID");
  return *g;
}

std::string text_col(const Stmt& q, int col, const std::string& where, std::string_view name) {
  if (q.type(col) != SQLITE_TEXT) damaged(where, std::string(name) + " " + shown(q, col) + " is not text");
  return q.text(col);
}

std::span<const uint8_t> blob_col(const Stmt& q, int col, const std::string& where, std::string_view name) {
  if (q.type(col) != SQLITE_BLOB) damaged(where, std::string(name) + " " + shown(q, col) + " is not a blob");
  return q.blob(col);
}

// A group of ranks: int32 little-endian, distinct, each below n.
std::vector<int32_t> group_col(const Stmt& q, int col, size_t n, const std::string& where, std::string_view name) {
  auto b = blob_col(q, col, where, name);
  if (b.empty() || b.size() % 4 || b.size() / 4 > n)
    damaged(where, std::string(name) + " of " + std::to_string(b.size()) + " bytes (1.." + std::to_string(n) + " ranks of 4 bytes)");
  std::vector<int32_t> out(b.size() / 4);
  std::vector<char> seen(n, 0);
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t x = 0;
    for (size_t k = 0; k < 4; ++k) x |= uint32_t(b[i * 4 + k]) << (8 * k);
    if (x >= n || seen[x]++) damaged(where, std::string(name) + ": rank " + std::to_string(x) + " out of range or repeated");
    out[i] = static_cast<int32_t>(x);
  }
  return out;
}

constexpr bool valid_width(int64_t w) { return w == 0 || is_link_width(w); }  // 0: unknown

ScanInfo read_scan_row(Stmt& q) {
  ScanInfo s;
  if (q.type(0) != SQLITE_INTEGER) damaged("scan row", "id " + shown(q, 0) + " is not an integer");
  s.id = q.i64(0);
  const std::string where = "scan " + std::to_string(s.id);
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

FabricStore::FabricStore(const std::string& path, Access access)
    : path_(path),
      db_([&] {
        if (access != Access::create && !std::filesystem::exists(path))
          throw InputError("no database at " + path + " (run 'ibroute scan' first)");
        int flags = access == Access::read_only ? SQLITE_OPEN_READONLY
                                                : SQLITE_OPEN_READWRITE | (access == Access::create ? SQLITE_OPEN_CREATE : 0);
        return Db(path, flags);
      }()) {
  check_or_create_schema(access);
}

void FabricStore::check_or_create_schema(Access access) {
  int64_t tables = 0;
  try {
    Stmt q(db_, "SELECT count(*) FROM sqlite_master");
    q.step();
    tables = q.i64(0);
  } catch (const DamagedError& e) {
    if ((e.code() & 0xff) == SQLITE_NOTADB) throw InputError(path_ + " is not an ibroute database (file is not a database)");
    throw;
  } catch (const SqliteError& e) {
    throw InputError(path_ + " is not an ibroute database (" + e.what() + ")");
  }
  if (tables == 0) {
    if (access != Access::create) throw InputError(path_ + " is an empty database (run 'ibroute scan' first)");
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
    found_version_ = kSchemaVersion;
    return;
  }
  std::string version;
  try {
    Stmt q(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (q.step()) version = one_line(q.text_view(0), 40);
  } catch (const DamagedError& e) {
    if ((e.code() & 0xff) != SQLITE_ERROR) throw;  // no table meta, or not with these columns: not ours
  } catch (const SqliteError&) {
  }
  if (version.empty()) throw InputError(path_ + " is an SQLite database but not an ibroute database");
  const std::string current = std::to_string(kSchemaVersion);
  if (version == current) {
    found_version_ = kSchemaVersion;
    return;
  }
  if (version == "1" || version == "2" || version == "3" || version == "4" || version == "5") {
    found_version_ = version[0] - '0';
    if (access == Access::read_only)
      throw InputError(path_ + " has schema version " + version + "; run 'ibroute migrate --db " + path_ +
                       "' (this ibroute reads version " + current + ")");
    migrated_ = migrate_from(found_version_);
    return;
  }
  throw InputError(path_ + " has database schema version " + version + "; this ibroute reads version " + current);
}

bool FabricStore::has_column(const char* table, const char* column) {
  Stmt q(db_, std::string("SELECT 1 FROM pragma_table_info('") + table + "') WHERE name = ?");
  q.bind(1, std::string_view(column));
  return q.step();
}

bool FabricStore::migrate_from(int version) {
  // Never write into a damaged file: the check reads every page once.
  {
    Stmt c(db_, "PRAGMA quick_check(1)");
    if (c.step() && c.text_view(0) != "ok") throw InputError("database damaged: " + path_ + ": " + one_line(c.text_view(0)));
  }
  Transaction t(db_);
  {
    // Another ibroute (a rank of the same run) may have migrated it while this one waited for the lock.
    Stmt v(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (v.step() && v.text_view(0) == std::to_string(kSchemaVersion)) return false;
  }
  if (version <= 1) db_.exec(kSchemaV2);
  if (version <= 2) db_.exec(kSchemaV3);
  for (std::span<const AddedColumn> added :
       {std::span<const AddedColumn>(kSchemaV4), std::span<const AddedColumn>(kSchemaV5), std::span<const AddedColumn>(kSchemaV6)})
    for (const AddedColumn& c : added)
      if (!has_column(c.table, c.column)) db_.exec(c.sql);
  Stmt m(db_, "UPDATE meta SET value = ? WHERE key = 'schema_version'");
  m.bind(1, std::to_string(kSchemaVersion)).run();
  t.commit();
  return true;
}

int64_t FabricStore::save_scan(ScanInfo info, const Fabric& f, const RouteSet& routes) {
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
  info.routes = static_cast<int64_t>(routes.size());
  if (info.started_at.empty()) info.started_at = now_iso();

  Transaction t(db_);
  Stmt s(db_, "INSERT INTO scan(started_at, source, origin, complete, duration_s, lmc, switches, cas, links, lids, routes, has_lfts)"
              " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(1, info.started_at).bind(2, info.source).bind(3, info.origin).bind(4, int64_t{info.complete})
      .bind(5, info.duration_s).bind(6, int64_t{info.lmc}).bind(7, info.switches).bind(8, info.cas)
      .bind(9, info.links).bind(10, info.lids).bind(11, info.routes).bind(12, int64_t{info.has_lfts}).run();
  const int64_t id = db_.last_insert_rowid();

  Stmt n(db_, "INSERT INTO node(scan_id, idx, guid, type, desc, nports, lft_read, sysimg_guid, node_desc) VALUES (?,?,?,?,?,?,?,?,?)");
  Stmt p(db_, "INSERT INTO port(scan_id, node_idx, num, guid, base_lid, lmc, state, width, speed, peer_node, peer_port)"
              " VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  Stmt l(db_, "INSERT INTO lft(scan_id, node_idx, top, ports) VALUES (?,?,?,?)");
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
    if (node.is_switch() && node.lft_read && !node.lft.empty())
      l.bind(1, id).bind(2, int64_t(i)).bind(3, int64_t(node.lft.size()) - 1).bind_blob(4, node.lft).run();
  }
  Stmt li(db_, "INSERT INTO lid(scan_id, lid, node_idx, port) VALUES (?,?,?,?)");
  for (uint16_t lid : lids.lids()) {
    const LidOwner* o = lids.owner(lid);
    li.bind(1, id).bind(2, int64_t{lid}).bind(3, int64_t{o->node}).bind(4, int64_t{o->port}).run();
  }
  Stmt pr(db_, "INSERT INTO problem(scan_id, kind, node_guid, port, detail) VALUES (?,?,?,?,?)");
  for (const Problem& prob : f.problems) {
    pr.bind(1, id).bind(2, prob.kind);
    if (prob.node_guid) pr.bind(3, guid_hex(prob.node_guid));
    if (prob.port >= 0) pr.bind(4, int64_t{prob.port});
    pr.bind(5, prob.detail).run();
  }
  Stmt r(db_, "INSERT INTO route(scan_id, ingress, dlid, status, hops) VALUES (?,?,?,?,?)");
  for (size_t ii = 0; ii < routes.ingress.size(); ++ii)
    for (size_t di = 0; di < routes.dlids.size(); ++di) {
      size_t k = routes.index(ii, di);
      r.bind(1, id).bind(2, int64_t{routes.ingress[ii]}).bind(3, int64_t{routes.dlids[di]})
          .bind(4, int64_t(routes.status[k])).bind(5, encode_hops(routes.path(k))).run();
    }
  t.commit();
  shapes_.erase(id);
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

  if (with_lfts) {
    Stmt l(db_, "SELECT node_idx, top, ports FROM lft WHERE scan_id = ? ORDER BY node_idx");
    l.bind(1, scan_id);
    for (int64_t row = 1; l.step(); ++row) {
      std::string where = scan_where + ", LFT row " + std::to_string(row);
      const int64_t ni = l.type(0) == SQLITE_INTEGER ? l.i64(0) : -1;
      if (ni < 0 || ni >= nn) damaged(where, "node " + shown(l, 0) + " of " + std::to_string(nn));
      Node& node = f.nodes[ni];
      where += " (node " + std::to_string(ni) + ")";
      if (!node.is_switch()) damaged(where, "node " + std::to_string(ni) + " is not a switch");
      int_col(l, 1, -1, kMaxLid, where, "top");
      auto b = blob_col(l, 2, where, "ports");
      if (b.size() > static_cast<size_t>(kMaxLid) + 1) damaged(where, "table of " + std::to_string(b.size()) + " LIDs (at most 49152)");
      for (size_t lid = 0; lid < b.size(); ++lid)
        if (b[lid] != kNoRoute && b[lid] > node.num_ports())
          damaged(where, "LID " + std::to_string(lid) + " to port " + std::to_string(b[lid]) + " of " + std::to_string(node.num_ports()));
      node.lft.assign(b.begin(), b.end());
    }
  }
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
  scan(scan_id);  // exists, and its row is sound
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
  if (!q.step()) return std::nullopt;
  const std::string where =
      "scan " + std::to_string(scan_id) + ", route of ingress " + std::to_string(ingress) + " to DLID " + std::to_string(dlid);
  if (ingress < 0 || static_cast<size_t>(ingress) >= nodes.size() || nodes[ingress].type != NodeType::sw)
    damaged(where, "ingress is not a switch");
  auto status = static_cast<RouteStatus>(int_col(q, 0, 0, static_cast<int>(RouteStatus::unknown), where, "status"));
  if (q.type(1) != SQLITE_TEXT) damaged(where, "hops " + shown(q, 1) + " are not text");
  return StoredRoute{status, checked_hops(nodes, ingress, q.text_view(1), where)};
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
  if (q.type(0) != SQLITE_INTEGER) damaged("schedule row", "id " + shown(q, 0) + " is not an integer");
  s.id = q.i64(0);
  const std::string where = "schedule " + std::to_string(s.id);
  s.name = text_col(q, 1, where, "name");
  s.scan_id = int_col(q, 2, 0, kMaxCount, where, "scan_id");
  s.created_at = text_col(q, 3, where, "created_at");
  s.method = text_col(q, 4, where, "method");
  s.bound = static_cast<int>(int_col(q, 5, 0, 1 << 30, where, "bound"));
  s.hosts = int_col(q, 6, 0, 1 << 24, where, "hosts");
  s.phases = int_col(q, 7, 0, 1 << 24, where, "phases");
  s.timing = {static_cast<uint64_t>(int_col(q, 8, 0, kMaxCount, where, "message_size")), real_col(q, 9, where, "rate"),
              real_col(q, 10, where, "slot_s")};
  s.max_load = static_cast<int>(int_col(q, 11, 0, 1 << 30, where, "max_load"));
  s.congested = int_col(q, 12, 0, kMaxCount, where, "congested");
  s.seconds = real_col(q, 13, where, "seconds");
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
  if (!s.all_to_all()) {
    Stmt g(db_, "UPDATE schedule SET senders = ?, receivers = ? WHERE id = ?");
    g.bind_blob(1, to_le_bytes(s.senders)).bind_blob(2, to_le_bytes(s.receivers)).bind(3, id).run();
  }
  Stmt p(db_, "INSERT INTO schedule_phase(schedule_id, phase, dst, dlid, shift, slots) VALUES (?,?,?,?,?,?)");
  const std::vector<int32_t> shifts = schedule::shifts_of(s);
  const std::vector<uint16_t> base = shifts.empty() ? std::vector<uint16_t>{} : base_lids(scan, s.hosts, "schedule " + s.name);
  const std::vector<int32_t> senders = schedule::sender_ranks(s);
  for (size_t k = 0; k < s.phases.size(); ++k) {
    const schedule::Phase& ph = s.phases[k];
    p.bind(1, id).bind(2, int64_t(k));
    if (s.slots.empty()) p.bind_null(6);
    else p.bind(6, int64_t{s.slots[k]});
    std::vector<uint8_t> offsets;  // compact: one byte per sender, where every DLID is base + 0..254
    for (size_t i = 0; i < senders.size() && !shifts.empty(); ++i) {
      const int32_t d = ph.dst[senders[i]];
      const int off = d < 0 ? 0xff : int(ph.dlid[senders[i]]) - int(base[d]);
      if (base.empty() || (d >= 0 && (base[d] == 0 || off < 0 || off >= 0xff))) {
        offsets.clear();
        break;
      }
      offsets.push_back(static_cast<uint8_t>(off));
    }
    if (offsets.size() == senders.size() && !senders.empty())
      p.bind_blob(3, {}).bind_blob(4, offsets).bind(5, int64_t{shifts[k]}).run();
    else
      p.bind_blob(3, to_le_bytes(ph.dst)).bind_blob(4, to_le_bytes(ph.dlid)).bind_null(5).run();
  }
  t.commit();
  return id;
}

std::vector<uint16_t> FabricStore::base_lids(int64_t scan, const std::vector<schedule::Host>& hosts, const std::string& where) {
  std::vector<uint16_t> out;
  Stmt q(db_, "SELECT base_lid FROM port WHERE scan_id = ? AND node_idx = ? AND num = ?");
  for (size_t r = 0; r < hosts.size(); ++r) {
    q.bind(1, scan).bind(2, int64_t{hosts[r].node}).bind(3, int64_t{hosts[r].port});
    if (!q.step()) damaged(where + ", host rank " + std::to_string(r), "no port row for node " + std::to_string(hosts[r].node) + " port " + std::to_string(hosts[r].port));
    out.push_back(static_cast<uint16_t>(int_col(q, 0, 0, kMaxLid, where + ", host rank " + std::to_string(r), "base LID")));
    q.reset();
  }
  return out;
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
  const std::string sched_where = "schedule " + std::to_string(id);
  scan(info.scan_id);  // the scan it was planned on exists, and its row is sound
  const std::vector<NodeShape>& nodes = shape(info.scan_id);
  schedule::Schedule s;
  s.name = info.name;
  s.method = info.method;
  s.bound = info.bound;
  s.timing = info.timing;
  Stmt h(db_, "SELECT rank, node_idx, port, name FROM schedule_host WHERE schedule_id = ? ORDER BY rank");
  h.bind(1, id);
  while (h.step()) {
    std::string where = sched_where + ", host row " + std::to_string(s.hosts.size() + 1);
    const int64_t rank = int_col(h, 0, 0, kMaxCount, where, "rank");
    if (rank != static_cast<int64_t>(s.hosts.size()))
      damaged(where, "rank " + std::to_string(rank) + ", expected " + std::to_string(s.hosts.size()) + " (ranks have gaps)");
    where = sched_where + ", host rank " + std::to_string(rank);
    const int64_t ni = h.type(1) == SQLITE_INTEGER ? h.i64(1) : -1;
    if (ni < 0 || ni >= static_cast<int64_t>(nodes.size()))
      damaged(where, "node " + shown(h, 1) + " of " + std::to_string(nodes.size()) + " in scan " + std::to_string(info.scan_id));
    if (nodes[ni].type == NodeType::sw) damaged(where, "node " + std::to_string(ni) + " is a switch");
    const int64_t port = h.type(2) == SQLITE_INTEGER ? h.i64(2) : -1;
    if (port < 1 || port > nodes[ni].nports)
      damaged(where, "port " + shown(h, 2) + " of node " + std::to_string(ni) + " with " + std::to_string(nodes[ni].nports) + " ports");
    s.hosts.push_back({static_cast<int32_t>(ni), static_cast<uint8_t>(port), text_col(h, 3, where, "name")});
  }
  if (static_cast<int64_t>(s.hosts.size()) != info.hosts)
    damaged(sched_where, std::to_string(s.hosts.size()) + " host rows for " + std::to_string(info.hosts) + " hosts");
  const size_t n = s.hosts.size();
  {
    Stmt g(db_, "SELECT senders, receivers FROM schedule WHERE id = ?");
    g.bind(1, id);
    g.step();
    if (!g.is_null(0) || !g.is_null(1)) {
      s.senders = group_col(g, 0, n, sched_where, "senders");
      s.receivers = group_col(g, 1, n, sched_where, "receivers");
    }
  }
  const std::vector<int32_t> senders = schedule::sender_ranks(s), receivers = schedule::receiver_ranks(s);
  const size_t m = std::max(senders.size(), receivers.size());
  std::vector<uint16_t> base;  // read when the first compact phase needs it
  Stmt p(db_, "SELECT phase, dst, dlid, shift, slots FROM schedule_phase WHERE schedule_id = ? ORDER BY phase");
  p.bind(1, id);
  while (p.step()) {
    std::string where = sched_where + ", phase row " + std::to_string(s.phases.size() + 1);
    const int64_t k = int_col(p, 0, 0, kMaxCount, where, "phase");
    if (k != static_cast<int64_t>(s.phases.size()))
      damaged(where, "phase " + std::to_string(k) + ", expected " + std::to_string(s.phases.size()) + " (phases have gaps)");
    where = sched_where + ", phase " + std::to_string(k);
    if (!p.is_null(4)) {  // phases of different lengths
      s.slots.resize(s.phases.size(), 1);
      s.slots.push_back(static_cast<uint32_t>(int_col(p, 4, 1, schedule::kMaxPhaseSlots, where, "slots")));
    } else if (!s.slots.empty()) {
      s.slots.push_back(1);
    }
    if (!p.is_null(3) && s.phases.size() >= std::max<size_t>(m, 1)) damaged(where, "more phases than " + std::to_string(m) + " shifts of its groups");
    // Listed phases may be more than the shifts (waiting transfers packed apart), never more than the transfers.
    if (s.phases.size() >= std::max<size_t>(m, senders.size() * receivers.size()))
      damaged(where, "more phases than the " + std::to_string(senders.size() * receivers.size()) + " transfers of its groups");
    if (!p.is_null(3)) {
      const auto shift = static_cast<int32_t>(int_col(p, 3, 0, static_cast<int64_t>(m) - 1, where, "shift"));
      auto offsets = blob_col(p, 2, where, "dlid");
      if (offsets.size() != senders.size())
        damaged(where, "offsets of " + std::to_string(offsets.size()) + " bytes for " + std::to_string(senders.size()) + " senders");
      if (base.empty()) base = base_lids(info.scan_id, s.hosts, sched_where);
      schedule::Phase ph = schedule::group_shift_phase(n, senders, receivers, shift);
      for (size_t i = 0; i < senders.size(); ++i) {
        const int32_t d = ph.dst[senders[i]];
        if ((d < 0) != (offsets[i] == 0xff))
          damaged(where, "sender " + std::to_string(i) + ": offset " + std::to_string(offsets[i]) + " does not match shift " + std::to_string(shift));
        if (d >= 0) ph.dlid[senders[i]] = static_cast<uint16_t>(std::min<int>(base[d] + offsets[i], kMaxLid));
      }
      s.phases.push_back(std::move(ph));
      continue;
    }
    auto dst = blob_col(p, 1, where, "dst");
    if (dst.size() != n * 4) damaged(where, "dst of " + std::to_string(dst.size()) + " bytes for " + std::to_string(n) + " hosts");
    auto dlid = blob_col(p, 2, where, "dlid");
    if (dlid.size() != n * 2) damaged(where, "dlid of " + std::to_string(dlid.size()) + " bytes for " + std::to_string(n) + " hosts");
    schedule::Phase ph{from_le_bytes<int32_t>(dst, n), from_le_bytes<uint16_t>(dlid, n)};
    for (size_t r = 0; r < n; ++r) {
      if (ph.dst[r] < -1 || ph.dst[r] >= static_cast<int64_t>(n))
        damaged(where, "rank " + std::to_string(r) + " sends to rank " + std::to_string(ph.dst[r]) + " of " + std::to_string(n));
      if (ph.dlid[r] > kMaxLid) damaged(where, "rank " + std::to_string(r) + " sends to DLID " + std::to_string(ph.dlid[r]));
    }
    s.phases.push_back(std::move(ph));
  }
  if (static_cast<int64_t>(s.phases.size()) != info.phases)
    damaged(sched_where, std::to_string(s.phases.size()) + " phase rows for " + std::to_string(info.phases) + " phases");
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
  if (q.type(0) != SQLITE_INTEGER) damaged("run row", "id " + shown(q, 0) + " is not an integer");
  r.id = q.i64(0);
  const std::string where = "run " + std::to_string(r.id);
  if (!q.is_null(1)) r.schedule_id = int_col(q, 1, 0, kMaxCount, where, "schedule_id");
  if (!q.is_null(2)) r.scan_id = int_col(q, 2, 0, kMaxCount, where, "scan_id");
  r.started_at = text_col(q, 3, where, "started_at");
  r.ranks = int_col(q, 4, 0, kMaxCount, where, "ranks"), r.rounds = int_col(q, 5, 0, kMaxCount, where, "rounds");
  r.planned = int_col(q, 6, 0, kMaxCount, where, "planned"), r.ok = int_col(q, 7, 0, kMaxCount, where, "ok");
  r.skipped = int_col(q, 8, 0, kMaxCount, where, "skipped"), r.failed = int_col(q, 9, 0, kMaxCount, where, "failed");
  r.missing = int_col(q, 10, 0, kMaxCount, where, "missing");
  r.report_json = text_col(q, 11, where, "report");
  return r;
}

}  // namespace ibroute::store
