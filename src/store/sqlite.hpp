// Thin RAII owners for sqlite3 handles. Errors carry the SQLite result code; errors that mean the
// file itself is damaged (SQLITE_CORRUPT, SQLITE_NOTADB, a malformed schema) are DamagedError, an
// InputError of one line: "database damaged: <path>: <what SQLite said>".
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ibroute/fabric/error.hpp"

namespace ibroute::store {

class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// The file is not a (whole) SQLite database, or not the one ibroute wrote: exit code 2.
class DamagedError : public InputError {
 public:
  DamagedError(int code, const std::string& what) : InputError(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// `text` on one line (control characters as spaces) and at most `max` bytes, for error messages
// that quote what a database holds.
std::string one_line(std::string_view text, size_t max = 200);

class Stmt;

class Db {
 public:
  Db(const std::string& path, int flags);
  Db(Db&& o) noexcept : path_(std::move(o.path_)), db_(o.db_) { o.db_ = nullptr; }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  void exec(const char* sql);
  Stmt prepare(std::string_view sql);
  int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
  [[noreturn]] void fail(int rc, std::string_view what) const;
  sqlite3* raw() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(const Db& db, std::string_view sql);
  Stmt(Stmt&& o) noexcept : db_(o.db_), st_(o.st_) { o.st_ = nullptr; }
  Stmt(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(st_); }

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind_blob(int i, std::span<const uint8_t> v);
  Stmt& bind_null(int i);
  bool step();  // true: a row is ready; false: done
  void run() { step(), reset(); }
  void reset();

  int64_t i64(int col) const { return sqlite3_column_int64(st_, col); }
  double f64(int col) const { return sqlite3_column_double(st_, col); }
  std::string text(int col) const;
  std::string_view text_view(int col) const;
  std::span<const uint8_t> blob(int col) const;
  bool is_null(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
  int type(int col) const { return sqlite3_column_type(st_, col); }  // SQLITE_INTEGER, _FLOAT, _TEXT, _BLOB, _NULL

 private:
  const Db* db_;
  sqlite3_stmt* st_ = nullptr;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() was called, so a
// failed or interrupted write leaves the database as it was.
class Transaction {
 public:
  explicit Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }
  Transaction(const Transaction&) = delete;
  ~Transaction() {
    if (!done_) sqlite3_exec(db_.raw(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    db_.exec("COMMIT");
    done_ = true;
  }

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace ibroute::store
