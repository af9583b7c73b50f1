// Runs: the counts of a run and its whole report as JSON.
#include <charconv>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <span>

#include "column_read.hpp"
#include "fabric_store.hpp"
#include "ibroute/fabric/error.hpp"

namespace ibroute::store {

using namespace ibroute::fabric;
using namespace ibroute::store::column;

int64_t FabricStore::save_run(const RunRow& r) {
  Stmt q(
      db_,
      "INSERT INTO run(schedule_id, scan_id, started_at, ranks, rounds, planned, ok, skipped, failed, missing, report) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (r.schedule_id) q.bind(1, *r.schedule_id);
  if (r.scan_id) q.bind(2, *r.scan_id);
  q.bind(3, std::string_view(r.started_at.empty() ? now_iso() : r.started_at))
      .bind(4, r.ranks)
      .bind(5, r.rounds)
      .bind(6, r.planned)
      .bind(7, r.ok);
  q.bind(8, r.skipped).bind(9, r.failed).bind(10, r.missing).bind(11, r.report_json).run();
  return db_.last_insert_rowid();
}

int64_t FabricStore::last_run_id() {
  Stmt q(db_, "SELECT max(id) FROM run");
  return q.step() && q.type(0) == SQLITE_INTEGER ? q.i64(0) : 0;
}

std::optional<RunRow> FabricStore::newest_run_of(int64_t schedule_id, int64_t after) {
  Stmt q(db_, "SELECT max(id) FROM run WHERE schedule_id = ? AND id > ?");
  q.bind(1, schedule_id).bind(2, after);
  if (!q.step() || q.type(0) != SQLITE_INTEGER) return std::nullopt;
  return run(q.i64(0));
}

std::optional<RunRow> FabricStore::run(int64_t id) {
  Stmt q(db_,
         "SELECT id, schedule_id, scan_id, started_at, ranks, rounds, planned, ok, skipped, failed, missing, report "
         "FROM run WHERE id = ?");
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  RunRow r;
  const auto [row, where] = row_id(q, "run");
  r.id = row;
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
