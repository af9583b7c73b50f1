// Reading untrusted JSON: every value is checked where it is read, and every failure is one
// InputError naming the JSON pointer of the value (RFC 6901), e.g. "/phases/3/7/dlid: 65550 is
// not a unicast LID (1..49151)"; nlohmann's own type_error/out_of_range never reach the caller.
// Shared by the schedule format and the files `accept` reads; header-only.
#pragma once

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ibroute/fabric/error.hpp"

namespace ibroute {

namespace json_input {

using nlohmann::json;

// A value as quoted in a message: short and on one line (dump() escapes control characters).
inline std::string shown(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "a list";
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

[[noreturn]] inline void fail(const std::string& at, const std::string& what) {
  throw InputError((at.empty() ? "/" : at) + ": " + what);
}

// A JSON value and where it is in the document (RFC 6901 pointer).
struct At {
  const json& v;
  std::string path;

  bool has(const char* key) const { return v.is_object() && v.contains(key); }
  At operator[](const char* key) const {
    if (!v.is_object()) fail(path, shown(v) + " is not an object");
    auto it = v.find(key);
    if (it == v.end()) fail(path + "/" + key, std::string("\"") + key + "\" is missing");
    return {*it, path + "/" + key};
  }
  At operator[](size_t i) const { return {v[i], path + "/" + std::to_string(i)}; }
  size_t size() const { return v.size(); }
  const At& list() const {
    if (!v.is_array()) fail(path, shown(v) + " is not a list");
    return *this;
  }
  const At& object() const {
    if (!v.is_object()) fail(path, shown(v) + " is not an object");
    return *this;
  }
  int64_t integer(int64_t lo, int64_t hi, const std::string& what) const {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail(path, shown(v) + " is not " + what);
    if (!v.is_number_integer()) fail(path, shown(v) + " is not an integer (" + what + ")");
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi) fail(path, shown(v) + " is not " + what);
    return x;
  }
  double number(double lo, double hi, const std::string& what) const {
    if (!v.is_number()) fail(path, shown(v) + " is not a number (" + what + ")");
    const double x = v.get<double>();
    if (!(x >= lo && x <= hi)) fail(path, shown(v) + " is not " + what);
    return x;
  }
  bool boolean() const {
    if (!v.is_boolean()) fail(path, shown(v) + " is not true or false");
    return v.get<bool>();
  }
  std::string text() const {
    if (!v.is_string()) fail(path, shown(v) + " is not a string");
    const std::string& s = v.get_ref<const std::string&>();
    for (char c : s)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) fail(path, shown(v) + " contains a control character");
    return s;
  }
  uint64_t guid() const {
    std::string s = text();
    std::string_view d = s;
    if (!d.starts_with("0x")) fail(path, shown(v) + " is not a GUID (0x and hex digits)");
    d.remove_prefix(2);
    uint64_t g = 0;
    auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), g, 16);
    if (d.empty() || ec != std::errc() || p != d.data() + d.size())
      fail(path, shown(v) + " is not a GUID (0x and up to 16 hex digits)");
    return g;
  }
};

// Parses `text`; any failure (syntax, or `check` throwing) becomes "SOURCE: ..." on one line.
template <class F>
auto read_document(std::string_view text, const std::string& source, const char* what, F&& check) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& x) {
    throw InputError(source + ": not JSON (" + std::string(x.what()) + ")");
  }
  if (!doc.is_object()) throw InputError(source + ": not " + std::string(what) + " (expected a JSON object)");
  try {
    return check(At{doc, ""});
  } catch (const InputError& x) {
    throw InputError(source + ": " + x.what());
  } catch (const json::exception& x) {  // a check that was forgotten: still one line, still exit 2
    throw InputError(source + ": " + x.what());
  }
}

}  // namespace json_input

}  // namespace ibroute
