// The fabric database: scans (topology, LIDs, LFTs, routes, problems) kept side by side.
// Schema: docs/database.md. Each scan is written in one transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/routes.hpp"
#include "ibroute/schedule/schedule.hpp"
#include "sqlite.hpp"

namespace ibroute::store {

constexpr int kSchemaVersion = 3;  // 1: scans; 2: + schedules; 3: + runs (older ones migrate on open)

struct ScanInfo {
  int64_t id = 0;
  std::string started_at;  // ISO 8601, UTC
  std::string source;      // "live" | "offline"
  std::string origin;      // CA/port, or the imported files
  bool complete = true;
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

class FabricStore {
 public:
  // create=false: the file must already be an ibroute database.
  FabricStore(const std::string& path, bool create);

  int64_t save_scan(ScanInfo info, const fabric::Fabric& f, const fabric::RouteSet& routes);
  std::vector<ScanInfo> scans();
  ScanInfo scan(int64_t id);  // throws InputError when absent
  int64_t latest_scan();      // throws InputError when the database holds no scan

  fabric::Fabric load_fabric(int64_t scan, bool with_lfts);
  fabric::RouteSet load_routes(int64_t scan);
  std::optional<StoredRoute> route(int64_t scan, int32_t ingress, uint16_t dlid);

  // Schedules. save_schedule throws InputError when the name exists and !replace.
  int64_t save_schedule(int64_t scan, const schedule::Schedule& s, int max_load, int64_t congested, double seconds,
                        bool replace);
  std::vector<ScheduleInfo> schedules();
  ScheduleInfo schedule_info(const std::string& name_or_id);  // throws InputError when absent
  schedule::Schedule load_schedule(int64_t id);
  bool schedule_exists(const std::string& name);

  // A run of a schedule (ibroute run): its counts and the whole report as JSON text.
  int64_t save_run(const RunRow& run);
  std::optional<RunRow> run(int64_t id);

  Db& db() { return db_; }

 private:
  std::string path_;
  Db db_;
  void check_or_create_schema(bool create);
  void migrate_from(int version);
};

// Now as ISO 8601 UTC ("2026-11-22T03:44:00Z"), as the tables store times.
std::string now_iso();

std::string encode_hops(std::span<const fabric::Hop> hops);
std::vector<fabric::Hop> decode_hops(std::string_view text);

}  // namespace ibroute::store
