// The database file: its schema, version check and migrations (docs/database.md).
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <span>

#include "column_read.hpp"
#include "fabric_store.hpp"
#include "ibroute/fabric/error.hpp"

namespace ibroute::store {

using namespace ibroute::fabric;
using namespace ibroute::store::column;

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
  scan_id INTEGER NOT NULL, node_idx INTEGER NOT NULL, top INTEGER NOT NULL, ports BLOB NOT NULL, rows_to INTEGER,
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
// Version 8: a table read only up to a LID (`rows_to`: the first LID without a row; NULL: every LID).
constexpr AddedColumn kSchemaV8[] = {
    {"lft", "rows_to", "ALTER TABLE lft ADD COLUMN rows_to INTEGER"},
};

}  // namespace

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

namespace {

// The database path, checked before SQLite opens it: a FIFO would hang every command, a directory or
// device give "disk I/O error", "" a database in memory that vanishes, a read-only file a message
// without its name. One line naming the file and the reason instead.
void check_db_path(const std::string& path, Access access) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError("--db: an empty path (give the database file)");
  if (path.size() > 4096) throw InputError("--db: a path of " + std::to_string(path.size()) + " bytes (at most 4096)");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw InputError(path + ": " + ec.message());
  if (!fs::exists(st)) {
    if (access != Access::create) throw InputError("no database at " + path + " (run 'ibroute scan' first)");
    const fs::path dir = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
    if (!fs::is_directory(dir, ec)) throw InputError(path + ": its directory " + dir.string() + " does not exist");
    if (::access(dir.c_str(), W_OK) != 0)
      throw InputError(path + ": its directory is not writable (" + std::strerror(errno) + ")");
    return;
  }
  if (!fs::is_regular_file(st)) {
    const char* kind = fs::is_directory(st)                                 ? "a directory"
                       : fs::is_fifo(st)                                    ? "a FIFO"
                       : fs::is_socket(st)                                  ? "a socket"
                       : fs::is_block_file(st) || fs::is_character_file(st) ? "a device"
                                                                            : "not a regular file";
    throw InputError(path + " is " + kind + ", not a database file");
  }
  if (access != Access::read_only) {
    // SQLite writes its journal beside the file: both must be writable.
    const fs::path dir = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
    if (::access(path.c_str(), W_OK) != 0)
      throw InputError(path + " is read-only (" + std::strerror(errno) + "); this command writes to it");
    if (::access(dir.c_str(), W_OK) != 0)
      throw InputError(path + ": its directory is not writable (" + std::strerror(errno) +
                       "); SQLite writes its journal there");
  }
}

}  // namespace

FabricStore::FabricStore(const std::string& path, Access access)
    : path_(path), db_([&] {
        check_db_path(path, access);
        int flags = access == Access::read_only
                        ? SQLITE_OPEN_READONLY
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
    if ((e.code() & 0xff) == SQLITE_NOTADB)
      throw InputError(path_ + " is not an ibroute database (file is not a database)");
    throw;
  } catch (const SqliteError& e) {
    throw InputError(path_ + " is not an ibroute database (" + e.what() + ")");
  }
  if (tables == 0) {
    if (access != Access::create) throw InputError(path_ + " is an empty database (run 'ibroute scan' first)");
    Transaction t(db_);  // BEGIN IMMEDIATE: one creator at a time
    int64_t now = 0;
    {
      Stmt again(db_, "SELECT count(*) FROM sqlite_master");
      again.step();
      now = again.i64(0);
    }
    if (now > 0) {  // another ibroute created it meanwhile: read it as it is
      t.commit();
      return check_or_create_schema(access);
    }
    db_.exec(kSchema);
    db_.exec(kSchemaV2);
    db_.exec(kSchemaV3);
    db_.exec(counter_table_sql().c_str());
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
  if (version.size() == 1 && version[0] >= '1' && version[0] < '0' + kSchemaVersion) {  // every older version
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
    if (c.step() && c.text_view(0) != "ok")
      throw InputError("database damaged: " + path_ + ": " + one_line(c.text_view(0)));
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
       {std::span<const AddedColumn>(kSchemaV4), std::span<const AddedColumn>(kSchemaV5),
        std::span<const AddedColumn>(kSchemaV6), std::span<const AddedColumn>(kSchemaV8)})
    for (const AddedColumn& c : added)
      if (!has_column(c.table, c.column)) db_.exec(c.sql);
  if (version <= 6) {  // version 7: counter snapshots (a database may have them already, see above)
    Stmt q(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'counter_snapshot'");
    if (!q.step()) db_.exec(counter_table_sql().c_str());
  }
  Stmt m(db_, "UPDATE meta SET value = ? WHERE key = 'schema_version'");
  m.bind(1, std::to_string(kSchemaVersion)).run();
  t.commit();
  return true;
}

}  // namespace ibroute::store
