// The fabric database: scans (topology, LIDs, LFTs, routes, problems) kept side by side.
// Schema: docs/database.md. Each scan is written in one transaction.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/routes.hpp"
#include "ibroute/schedule/schedule.hpp"
#include "sqlite.hpp"

namespace ibroute::store {

// 1: scans; 2: + schedules; 3: + runs; 4: + node.sysimg_guid, node.node_desc, scan.has_lfts;
// 5: + two-group schedules (schedule.senders/receivers) and compact phases (schedule_phase.shift);
// 6: + phases of different lengths (schedule_phase.slots); 7: + counter snapshots;
// 8: + lft.rows_to (a table read only up to a LID: the routes to the LIDs after it unknown).
// Older databases are migrated by the commands that write (and by `ibroute migrate`), never by those
// that only read.
constexpr int kSchemaVersion = 8;

// How a command opens the database. read_only: SQLITE_OPEN_READONLY, the file is never changed (an
// older schema is refused, naming `ibroute migrate`); read_write: an older schema is migrated;
// create: read_write, and an absent or empty file becomes a new database.
enum class Access { read_only, read_write, create };

struct ScanInfo {
  int64_t id = 0;
  std::string started_at;  // ISO 8601, UTC
  std::string source;      // "live" | "offline"
  std::string origin;      // CA/port, or the imported files
  bool complete = true;
  bool has_lfts = true;  // false: a topology imported without forwarding tables (no routes)
  double duration_s = 0;
  int lmc = 0;
  int64_t switches = 0, cas = 0, links = 0, lids = 0, routes = 0;
};

struct StoredRoute {
  fabric::RouteStatus status;
  std::vector<fabric::Hop> hops;  // from the ingress switch on
};

struct RunRow {
  int64_t id = 0;
  std::optional<int64_t> schedule_id, scan_id;
  std::string started_at;
  int64_t ranks = 0, rounds = 0, planned = 0, ok = 0, skipped = 0, failed = 0, missing = 0;
  std::string report_json;
};

struct CounterSnapshotInfo {
  int64_t id = 0, scan_id = 0;
  std::string taken_at, label;
};

struct ScheduleInfo {
  int64_t id = 0;
  std::string name;
  int64_t scan_id = 0;
  std::string created_at;
  std::string method;
  int bound = 0;
  int64_t hosts = 0, phases = 0;
  schedule::Timing timing;
  int max_load = 0;
  int64_t congested = 0;
  double seconds = 0;
};

// Everything read is validated before use: a row that cannot be right (an index beyond the table
// it points into, a value outside its set, a blob of the wrong size) throws InputError
// "database damaged: scan 3, port row 17 (node 5 port 2): peer node 256 of 48"; SQLite's own
// corruption errors become DamagedError (an InputError) of one line.
class FabricStore {
 public:
  // read_only and read_write: the file must already be an ibroute database (read_write: migrated
  // when older); create: made when absent.
  FabricStore(const std::string& path, Access access);

  // The schema version the file had when opened, and whether opening migrated it to kSchemaVersion.
  int found_version() const { return found_version_; }
  bool migrated() const { return migrated_; }

  int64_t save_scan(ScanInfo info, const fabric::Fabric& f, const fabric::RouteSet& routes);
  // A scan in two steps (ibroute watch: the epoch is planned from the tables while the routes, a
  // minute of writing at 10 000 hosts, wait): first everything but the routes (its `routes` count
  // 0), then save_routes. Until then load_routes and route() answer from the stored tables, which
  // the routes are a function of.
  int64_t save_scan_tables(ScanInfo info, const fabric::Fabric& f);
  // `problems`: what resolving the routes found (broken routes), stored with them.
  void save_routes(int64_t scan, const fabric::RouteSet& routes, const std::vector<fabric::Problem>& problems);
  std::vector<ScanInfo> scans();
  ScanInfo scan(int64_t id);  // throws InputError when absent
  int64_t latest_scan();      // throws InputError when the database holds no scan

  fabric::Fabric load_fabric(int64_t scan, bool with_lfts);
  fabric::RouteSet load_routes(int64_t scan);
  std::optional<StoredRoute> route(int64_t scan, int32_t ingress, uint16_t dlid);

  // Schedules. save_schedule throws InputError when the name exists and !replace.
  int64_t save_schedule(int64_t scan, const schedule::Schedule& s, int max_load, int64_t congested, double seconds,
                        bool replace);
  // Deletes the schedule `name`; false when there is none or a stored run names it (kept with it).
  bool delete_schedule(const std::string& name);
  std::vector<ScheduleInfo> schedules();
  ScheduleInfo schedule_info(const std::string& name_or_id);  // throws InputError when absent
  schedule::Schedule load_schedule(int64_t id);
  bool schedule_exists(const std::string& name);

  // A run of a schedule (ibroute run): its counts and the whole report as JSON text.
  int64_t save_run(const RunRow& run);
  std::optional<RunRow> run(int64_t id);
  int64_t last_run_id();  // 0 when there is none
  // The newest run of a schedule stored after run `after` (accept --launch: what rank 0 stored,
  // wherever it ran).
  std::optional<RunRow> newest_run_of(int64_t schedule_id, int64_t after);

  // Snapshots of the ports' performance counters, taken against a scan (ports by its node indices).
  int64_t save_counters(int64_t scan, const std::string& label, const fabric::CounterSnapshot& s);
  std::vector<CounterSnapshotInfo> counter_snapshots(int64_t scan);  // oldest first
  fabric::CounterSnapshot load_counters(int64_t id);                 // throws InputError when absent or damaged

  Db& db() { return db_; }

 private:
  struct NodeShape {
    fabric::NodeType type;
    int nports;
  };
  int64_t insert_scan(ScanInfo info, const fabric::Fabric& f, int64_t routes);
  void insert_routes(int64_t scan, const fabric::RouteSet& routes);
  void insert_problems(int64_t scan, const std::vector<fabric::Problem>& problems);
  std::string path_;
  Db db_;
  int64_t tables_scan_ = 0;  // the scan whose fabric route() last walked (routes not stored yet)
  fabric::Fabric tables_;
  int found_version_ = 0;
  bool migrated_ = false;
  std::map<int64_t, std::vector<NodeShape>> shapes_;  // per scan, once its nodes were read

  void check_or_create_schema(Access access);
  bool migrate_from(int version);  // false: someone else did it meanwhile
  // The base LID of each host's port in a scan (compact phases store offsets from it).
  std::vector<uint16_t> base_lids(int64_t scan, const std::vector<schedule::Host>& hosts, const std::string& where);
  // A stored schedule's hosts in rank order, each checked against its scan's nodes.
  std::vector<schedule::Host> load_schedule_hosts(int64_t id, const ScheduleInfo& info);
  bool has_column(const char* table, const char* column);
  std::vector<fabric::Node> load_nodes(int64_t scan);
  void load_lfts(int64_t scan, fabric::Fabric& f);
  const std::vector<NodeShape>& shape(int64_t scan);
  void remember_shape(int64_t scan, const std::vector<fabric::Node>& nodes);
  std::vector<fabric::Hop> checked_hops(const std::vector<NodeShape>& nodes, int32_t ingress, std::string_view text,
                                        const std::string& where);
};

// Version 7's tables (counter_snapshot, counter_port), their counter columns named as counters.hpp.
std::string counter_table_sql();

// Now as ISO 8601 UTC ("2026-11-22T03:44:00Z"), as the tables store times.
std::string now_iso();

std::string encode_hops(std::span<const fabric::Hop> hops);
std::vector<fabric::Hop> decode_hops(std::string_view text);

}  // namespace ibroute::store
