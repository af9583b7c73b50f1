#include "sqlite.hpp"

namespace ibroute::store {

Db::Db(const std::string& path, int flags) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(rc, "cannot open database " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db_, 5000);  // before any statement: another ibroute may be writing
  sqlite3_extended_result_codes(db_, 1);
}

Db::~Db() { sqlite3_close_v2(db_); }

void Db::fail(int rc, std::string_view what) const {
  throw SqliteError(rc, std::string(what) + ": " + sqlite3_errmsg(db_));
}

void Db::exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqliteError(rc, "database: " + msg);
  }
}

Stmt Db::prepare(std::string_view sql) { return Stmt(*this, sql); }

Stmt::Stmt(const Db& db, std::string_view sql) : db_(&db) {
  int rc = sqlite3_prepare_v3(db.raw(), sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &st_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, "database");
}

Stmt& Stmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(st_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  sqlite3_bind_double(st_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view v) {
  sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind_blob(int i, std::span<const uint8_t> v) {
  sqlite3_bind_blob(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(st_, i);
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail(rc, "database");
}

void Stmt::reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

std::string Stmt::text(int col) const { return std::string(text_view(col)); }

std::string_view Stmt::text_view(int col) const {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
  return p ? std::string_view(p, sqlite3_column_bytes(st_, col)) : std::string_view{};
}

std::span<const uint8_t> Stmt::blob(int col) const {
  auto p = static_cast<const uint8_t*>(sqlite3_column_blob(st_, col));
  return {p, static_cast<size_t>(sqlite3_column_bytes(st_, col))};
}

}  // namespace ibroute::store
