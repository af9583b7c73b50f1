// How a file was kept rather than what the tool wrote: line ends from a terminal or Windows, a
// banner before the first record, a shell prompt after the last, a lost tab, LIDs never assigned.
// Each is read for what it holds and becomes one problem line with a count and the first place,
// so an import never hides that the file was not the tool's own output.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/model.hpp"
#include "text_reader.hpp"

namespace ibroute::fabric::text {

enum class Oddity : uint8_t { banner, trailer, glued_keyword, unassigned_lid, unknown_rate };

// 0xFFFF in a LID field: the port has no LID yet (IBA: the permissive LID, never a port's own).
constexpr uint64_t kUnassignedLid = 0xFFFF;

class Oddities {
 public:
  void note(Oddity o, const std::string& where, std::string_view line) {
    Seen& s = seen_[static_cast<size_t>(o)];
    if (s.count++ == 0) s.first = where + " '" + excerpt(line, 60) + "'";
  }
  size_t count(Oddity o) const { return seen_[static_cast<size_t>(o)].count; }

  // One problem per oddity seen, and one for CRLF line ends (the reader counts those).
  void add_to(Fabric& f, const LineReader& r) const {
    if (r.crlf_lines())
      f.problems.push_back({"file_crlf", 0, -1,
                            std::to_string(r.crlf_lines()) +
                                " line(s) end in CR LF (saved from a terminal or on Windows), "
                                "first at " +
                                r.where(r.first_crlf_line()) + ": read as plain line ends"});
    static constexpr std::array<std::pair<const char*, const char*>, 5> kText{{
        {"file_banner", " line(s) before the first record are not the tool's output (a banner?), skipped; first at "},
        {"file_trailer",
         " line(s) after the last record are not the tool's output (a shell prompt?), skipped; first at "},
        {"file_glued_keyword",
         " node record(s) with no blank between the keyword and the port count, read as if "
         "there were one; first at "},
        {"unassigned_lid", " port(s) at LID 65535 (unassigned): stored without a LID; first at "},
        {"unknown_rate", " port(s) or link(s) with an unknown width or speed, kept as unknown; first at "},
    }};
    for (size_t i = 0; i < kText.size(); ++i)
      if (seen_[i].count)
        f.problems.push_back(
            {kText[i].first, 0, -1, std::to_string(seen_[i].count) + kText[i].second + seen_[i].first});
  }

 private:
  struct Seen {
    size_t count = 0;
    std::string first;
  };
  std::array<Seen, 5> seen_{};
};

// Every line of `r` through `take`, telling a terminal's banner and prompt from errors: `take`
// returns true for a line that holds data, false for one it skips (blank, comment), and throws
// InputError for one it cannot read. A line it cannot read before the first data line is a banner,
// after the last one a prompt (Oddity::banner/trailer) — unless it starts like a record
// (`looks_like_record`), is longer than a terminal line, or there are more of them than a banner
// has: then it is the error. A record-like last line without its line end that breaks is a cut
// file: returns true (the caller marks the scan incomplete).
template <class Take, class Looks>
bool read_records(LineReader& r, Oddities& odd, Take take, Looks looks_like_record) {
  constexpr size_t kLongestOddLine = 400, kMostOddLines = 40;
  bool started = false, cut = false;
  std::string after_error;   // the error of the first unreadable line after data, while no data followed
  std::string banner_error;  // the first line's error, said where no data follows at all
  for (std::string_view line; r.next(line);) {
    try {
      if (!take(line)) continue;
      if (!after_error.empty()) throw InputError(after_error);
      started = true;
    } catch (const InputError& e) {
      const std::string_view t = trim(line);
      if (!after_error.empty() && e.what() == after_error) throw;
      const bool record = looks_like_record(t);
      if (record && r.unterminated()) {
        cut = true;  // the last line broke off in the middle
        continue;
      }
      if (record || t.size() > kLongestOddLine ||
          odd.count(Oddity::banner) + odd.count(Oddity::trailer) >= kMostOddLines)
        throw;
      if (!started) {
        odd.note(Oddity::banner, r.where(), t);
        if (banner_error.empty()) banner_error = e.what();
        continue;
      }
      if (after_error.empty()) after_error = e.what();
      odd.note(Oddity::trailer, r.where(), t);
    }
  }
  if (!started && !banner_error.empty()) throw InputError(banner_error + " (and no record follows)");
  return cut;
}

}  // namespace ibroute::fabric::text
