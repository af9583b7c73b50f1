// Reading columns of a database that may be damaged or hand-edited: every value range-checked,
// and a bad one refused with one line naming the row and what is wrong in it. Shared by the
// store's parts (scans, schedules, runs); the store is the only user.
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/model.hpp"
#include "sqlite.hpp"

namespace ibroute::store::column {

using namespace ibroute::fabric;

[[noreturn]] inline void damaged(const std::string& where, const std::string& what) {
  throw InputError(one_line("database damaged: " + where + ": " + what, 300));
}

// A column's value as a message shows it.
inline std::string shown(const Stmt& q, int col) {
  switch (q.type(col)) {
    case SQLITE_NULL:
      return "NULL";
    case SQLITE_INTEGER:
      return std::to_string(q.i64(col));
    case SQLITE_FLOAT:
      return std::to_string(q.f64(col));
    case SQLITE_BLOB:
      return "a blob of " + std::to_string(q.blob(col).size()) + " bytes";
    default:
      return "'" + one_line(q.text_view(col), 40) + "'";
  }
}

// A row's id (column 0) and the name every message about the row gives it: "KIND ID".
struct RowId {
  int64_t id;
  std::string where;
};
inline RowId row_id(const Stmt& q, const std::string& kind) {
  if (q.type(0) != SQLITE_INTEGER) damaged(kind + " row", "id " + shown(q, 0) + " is not an integer");
  return {q.i64(0), kind + " " + std::to_string(q.i64(0))};
}

inline int64_t int_col(const Stmt& q, int col, int64_t lo, int64_t hi, const std::string& where,
                       std::string_view name) {
  if (q.type(col) != SQLITE_INTEGER) damaged(where, std::string(name) + " " + shown(q, col) + " is not an integer");
  int64_t v = q.i64(col);
  if (v < lo || v > hi)
    damaged(where, std::string(name) + " " + std::to_string(v) + " (not in " + std::to_string(lo) + ".." +
                       std::to_string(hi) + ")");
  return v;
}
inline constexpr int64_t kMaxCount = int64_t{1} << 53;

inline double real_col(const Stmt& q, int col, const std::string& where, std::string_view name) {
  if (q.type(col) != SQLITE_INTEGER && q.type(col) != SQLITE_FLOAT)
    damaged(where, std::string(name) + " " + shown(q, col) + " is not a number");
  double v = q.f64(col);
  if (!std::isfinite(v) || v < 0) damaged(where, std::string(name) + " " + shown(q, col) + " (not a number >= 0)");
  return v;
}

inline bool bool_col(const Stmt& q, int col, const std::string& where, std::string_view name) {
  return int_col(q, col, 0, 1, where, name) != 0;
}

// "0x" and 1 to 16 hex digits, nothing else.
inline std::optional<uint64_t> guid_from(std::string_view s) {
  if (!s.starts_with("0x")) return std::nullopt;
  s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

inline uint64_t guid_col(const Stmt& q, int col, const std::string& where, std::string_view name,
                         bool nullable = false) {
  if (nullable && q.is_null(col)) return 0;
  if (q.type(col) != SQLITE_TEXT) damaged(where, std::string(name) + " " + shown(q, col) + " is not a GUID");
  auto g = guid_from(q.text_view(col));
  if (!g) damaged(where, std::string(name) + " " + shown(q, col) + " is not a GUID");
  return *g;
}

inline std::string text_col(const Stmt& q, int col, const std::string& where, std::string_view name) {
  if (q.type(col) != SQLITE_TEXT) damaged(where, std::string(name) + " " + shown(q, col) + " is not text");
  return q.text(col);
}

inline std::span<const uint8_t> blob_col(const Stmt& q, int col, const std::string& where, std::string_view name) {
  if (q.type(col) != SQLITE_BLOB) damaged(where, std::string(name) + " " + shown(q, col) + " is not a blob");
  return q.blob(col);
}

// A group of ranks: int32 little-endian, distinct, each below n.
inline std::vector<int32_t> group_col(const Stmt& q, int col, size_t n, const std::string& where,
                                      std::string_view name) {
  auto b = blob_col(q, col, where, name);
  if (b.empty() || b.size() % 4 || b.size() / 4 > n)
    damaged(where, std::string(name) + " of " + std::to_string(b.size()) + " bytes (1.." + std::to_string(n) +
                       " ranks of 4 bytes)");
  std::vector<int32_t> out(b.size() / 4);
  std::vector<char> seen(n, 0);
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t x = 0;
    for (size_t k = 0; k < 4; ++k) x |= uint32_t(b[i * 4 + k]) << (8 * k);
    if (x >= n || seen[x]++)
      damaged(where, std::string(name) + ": rank " + std::to_string(x) + " out of range or repeated");
    out[i] = static_cast<int32_t>(x);
  }
  return out;
}

constexpr bool valid_width(int64_t w) { return w == 0 || is_link_width(w); }  // 0: unknown

}  // namespace ibroute::store::column
