#include "sqlite.hpp"

#include <algorithm>

namespace ibroute::store {

namespace {
// What SQLite says when the file is damaged rather than the statement wrong.
bool is_damage(int rc, std::string_view msg) {
  const int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_FORMAT) return true;
  if (msg.find("malformed") != std::string_view::npos) return true;
  // Tables or columns that ibroute's own statements need are missing: a damaged schema.
  return primary == SQLITE_ERROR && (msg.starts_with("no such table") || msg.starts_with("no such column"));
}
}  // namespace

std::string one_line(std::string_view text, size_t max) {
  std::string out;
  out.reserve(std::min(text.size(), max) + 3);
  for (size_t i = 0; i < text.size();) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {  // control characters as spaces
      out += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
      ++i;
      continue;
    }
    // Whole UTF-8 sequences pass; any other byte becomes '?'.
    const size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool ok = len && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (ok) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

Db::Db(const std::string& path, int flags) : path_(path) {
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
  std::string msg = sqlite3_errmsg(db_);
  if (is_damage(rc, msg)) throw DamagedError(rc, "database damaged: " + path_ + ": " + one_line(msg));
  if (rc == SQLITE_READONLY_ROLLBACK)
    throw InputError(
        path_ +
        ": an interrupted write left a journal that a reading command cannot roll back; run 'ibroute migrate --db " +
        path_ + "' (it rolls it back)");
  throw SqliteError(rc, std::string(what) + ": " + one_line(msg, 400));
}

void Db::exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    if (is_damage(rc, msg)) throw DamagedError(rc, "database damaged: " + path_ + ": " + one_line(msg));
    throw SqliteError(rc, "database: " + one_line(msg, 400));
  }
}

Stmt Db::prepare(std::string_view sql) { return Stmt(*this, sql); }

Stmt::Stmt(const Db& db, std::string_view sql) : db_(&db) {
  int rc =
      sqlite3_prepare_v3(db.raw(), sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &st_, nullptr);
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
  // An empty span is an empty blob, not NULL (what sqlite3_bind_blob makes of a null pointer).
  if (v.empty())
    sqlite3_bind_zeroblob(st_, i, 0);
  else
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
