// What every text parser of fabric dumps shares: lines with numbers for error messages, tokens
// by hand (no std::regex: its recursion overflows the stack on long lines), numbers parsed whole
// and range-checked, and one way to say which line of which file is wrong.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "ibroute/fabric/error.hpp"

namespace ibroute::fabric::text {

// A line quoted in a message: at most `max` characters, control characters shown as '?'.
inline std::string excerpt(std::string_view line, size_t max = 80) {
  std::string s(line.substr(0, max));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  if (line.size() > max) s += "...";
  return s;
}

class LineReader {
 public:
  LineReader(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  // The next line without its end ("\n" or "\r\n"); false at the end of the text.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    size_t nl = text_.find('\n', pos_);
    if (nl == std::string_view::npos) nl = text_.size();
    line = text_.substr(pos_, nl - pos_);
    unterminated_ = nl == text_.size();
    pos_ = nl + 1;
    ++lineno_;
    if (!line.empty() && line.back() == '\r' && crlf_++ == 0) first_crlf_ = lineno_;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    return true;
  }
  size_t lineno() const { return lineno_; }
  // The current line is the last and has no line end: the file may have been cut off there.
  bool unterminated() const { return unterminated_; }
  // Lines that ended in "\r\n" (a file saved from a terminal or written on Windows) and the first.
  size_t crlf_lines() const { return crlf_; }
  size_t first_crlf_line() const { return first_crlf_; }
  std::string_view source() const { return source_; }
  std::string where() const { return std::string(source_) + ":" + std::to_string(lineno_); }
  std::string where(size_t line) const { return std::string(source_) + ":" + std::to_string(line); }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(where() + ": " + what); }
  [[noreturn]] void fail_at(size_t line, const std::string& what) const { throw InputError(where(line) + ": " + what); }

 private:
  std::string_view text_, source_;
  size_t pos_ = 0, lineno_ = 0, crlf_ = 0, first_crlf_ = 0;
  bool unterminated_ = false;
};

inline std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// The next whitespace-separated token; s keeps the rest.
inline std::string_view next_token(std::string_view& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return s = {}, std::string_view{};
  size_t e = s.find_first_of(" \t", b);
  std::string_view t = s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
  s = e == std::string_view::npos ? std::string_view{} : s.substr(e);
  return t;
}

// The first line that is neither blank nor a '#' comment, trimmed; empty when there is none.
inline std::string_view first_data_line(std::string_view text) {
  LineReader r(text, "");
  for (std::string_view line; r.next(line);)
    if (line = trim(line); !line.empty() && line[0] != '#') return line;
  return {};
}

// Whole-string unsigned numbers: "0x1f"/"1f" in base 16, "31" in base 10. No sign, no spaces.
inline bool parse_uint(std::string_view s, int base, uint64_t& out) {
  if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
  if (s.empty() || s.size() > 20) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

// A number in [lo, hi] or an InputError naming the line and what the number is.
inline uint64_t checked_uint(const LineReader& r, std::string_view s, int base, uint64_t lo, uint64_t hi,
                             const char* what) {
  uint64_t v = 0;
  if (!parse_uint(s, base, v)) r.fail(std::string("bad ") + what + " '" + excerpt(s) + "'");
  if (v < lo || v > hi)
    r.fail(std::string(what) + " " + std::string(s) + " out of range (" + std::to_string(lo) + ".." +
           std::to_string(hi) + ")");
  return v;
}

// Lines that tools print into saved dumps when a MAD fails or to show progress: not data, but
// worth keeping as problems of the scan. E.g.
//   src/query_smp.c:228; umad (DR path slid 0; dlid 0; 0,1,3 Attr 0x11:0) bad status 110; Connection timed out
//   ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1)
//   ibroute: iberror: [pid 1234] main: linear forwarding table get failed
inline bool is_tool_message(std::string_view line) {
  for (std::string_view p : {"ibwarn", "iberror", "ibpanic", "ibdebug", "ibnetdiscover:", "ibroute:", "dump_fts:",
                             "dump_lfts", "ibdiag", "ERR ", "WARN", "*** WARNING", "Duplicate Node", "Duplicate Port",
                             "Failed to", "can't open MAD port", "umad_recv failed", "SubnGet"})
    if (line.starts_with(p)) return true;
  if (line.find("iberror:") != std::string_view::npos || line.find("ibwarn:") != std::string_view::npos) return true;
  // "path/to/file.c:123; message" as libibnetdisc logs it (the path differs from build to build).
  size_t c = line.find(".c:");
  if (c != std::string_view::npos && c < 240 && line.substr(0, c).find(' ') == std::string_view::npos &&
      line.find("; ", c) != std::string_view::npos)
    return true;
  return false;
}

// ibnetdiscover -s progress: "DR path slid 0; dlid 0; 0,1,19 -> new Switch {...} portnum 0 lid 12-12 "desc"".
inline bool is_progress_line(std::string_view line) {
  return line.starts_with("DR path ") && line.find(" -> ") != std::string_view::npos;
}

}  // namespace ibroute::fabric::text
