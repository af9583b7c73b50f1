// Parser for the forwarding-table dumps admins keep. One parser, because each section's header
// says its format:
// - infiniband-diags `ibroute <lid>` (what dump_lfts.sh runs per switch), `dump_fts`, and
//   OpenSM's opensm-lfts.dump:
//     Unicast lids [0x0-0x1a3] of switch Lid 12 guid 0x000000000020000b (ibswitch12):
//       Lid  Out   Destination
//            Port     Info
//     0x0004 010 : (Channel Adapter portguid 0x...: 'node1-024')
//     400 valid lids dumped          ("400 lids dumped" in OpenSM's dump and with -a)
//   (dump_fts names the switch by "DR path slid 0; dlid 0; 0,1,9 guid 0x..." instead of "Lid 12 guid 0x...")
// - OpenSM's opensm.fdbs and ibdiagnet's .fdbs:
//     osm_ucast_mgr_dump_ucast_routes: Switch 0x000000000020000b
//     LID    : Port : Hops : Optimal
//     0x0001 : 003  : 01   : yes
//     0x0002 : UNREACHABLE
// A table without its trailer, or interrupted by a tool's error line ("iberror: ... linear
// forwarding table get failed"), was cut: the scan is incomplete, the rows read are kept and the
// LIDs after the last of them unknown (the tools write rows in LID order; a table whose rows were
// not in order, or that has none, is unread) — unless its rows reached the top LID of its
// header's range (QLogic directors' dumps print that error after the last row of every table):
// then every LID has its row, the table is kept whole and the line noted.
#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "ibroute/fabric/text_import.hpp"
#include "text_reader.hpp"

namespace ibroute::fabric {

using namespace text;

namespace {

constexpr std::string_view kFdbsHeader = "dump_ucast_routes: Switch ";

enum class Section { none, unicast, fdbs, multicast };

class LftDumpReader {
 public:
  LftDumpReader(Fabric& f, std::string_view text, std::string_view source) : f_(f), r_(text, source) {
    for (size_t i = 0; i < f.nodes.size(); ++i)
      if (f.nodes[i].is_switch()) by_guid_[f.nodes[i].guid] = static_cast<int>(i);
    cut_.assign(f.nodes.size(), 0);
  }

  void read() {
    for (std::string_view line; r_.next(line);) {
      try {
        take(trim(line));
      } catch (const InputError&) {
        if (!r_.unterminated()) throw;
        cut_line_ = true;  // the last line broke off in the middle: the table it was in is cut below
      }
    }
    close_section(true);
    if (sections_ == 0) throw InputError(std::string(r_.source()) + ": no forwarding tables found (not an LFT dump?)");
    for (Node& n : f_.nodes)
      if (n.is_switch() && !n.lft_read && !cut_[&n - f_.nodes.data()]) {
        f_.complete = false;
        f_.problems.push_back({"lft_missing", n.guid, -1, "no forwarding table for " + n.desc + " in the dump"});
      }
  }

 private:
  Fabric& f_;
  LineReader r_;
  std::unordered_map<uint64_t, int> by_guid_;
  std::vector<char> cut_;  // per node: its table was cut (reported once, as lft_cut)
  Section section_ = Section::none;
  int cur_ = -1;  // node of the table being read
  size_t header_line_ = 0;
  uint64_t entries_ = 0, top_ = 0, last_lid_ = 0;
  bool ordered_ = true;  // the open table's rows in ascending LID order
  size_t sections_ = 0;
  bool cut_line_ = false;

  void take(std::string_view line) {
    if (line.empty() || line.starts_with('#')) return;  // comments, as OpenSM's file engine skips them
    if (line.starts_with("Unicast lids [")) return open_unicast(line);
    // "dump_ucast_routes: Switch 0x…", "osm_ucast_mgr_…" (ibdiagnet) or "__osm_ucast_mgr_…" (OpenSM before 2009).
    if (line.find(kFdbsHeader) != std::string_view::npos && line.find(kFdbsHeader) < 40) return open_fdbs(line);
    if (line.starts_with("PLFT_NUM")) return;  // ibdiagnet2
    if (line.starts_with("Multicast mlids")) {
      close_section(false);
      section_ = Section::multicast;
      return;
    }
    if (section_ == Section::multicast) return;
    if (is_tool_message(line)) return tool_message(line);
    std::string_view rest = line;
    std::string_view t0 = next_token(rest);
    if (t0 == "Lid" || t0 == "Port" || t0 == "LID") return;  // column headings
    if (t0.starts_with("0x") || t0.starts_with("0X"))
      return section_ == Section::fdbs ? fdbs_row(t0, rest) : unicast_row(t0, rest);
    uint64_t n = 0;
    if (parse_uint(t0, 10, n) && (rest.find("lids dumped") != std::string_view::npos))
      return trailer(n, rest.find("valid") != std::string_view::npos);
    r_.fail("cannot parse: " + excerpt(line));
  }

  Node& switch_by_guid(std::string_view text) {
    uint64_t guid = checked_uint(r_, text, 16, 0, UINT64_MAX, "switch GUID");
    auto it = by_guid_.find(guid);
    if (it == by_guid_.end()) {
      if (!f_.complete) {  // the topology itself is cut: say so, do not refuse
        f_.problems.push_back({"lft_unknown_switch", guid, -1, r_.where() + ": table of a switch the topology lacks"});
        cur_ = -2;
        return f_.nodes.front();
      }
      r_.fail("switch " + guid_hex(guid) + " is not in the topology (dump of another fabric?)");
    }
    cur_ = it->second;
    Node& sw = f_.nodes[cur_];
    if (sw.lft_read || cut_[cur_]) r_.fail("a second table for " + sw.desc);
    return sw;
  }

  void open_unicast(std::string_view line) {
    close_section(false);
    size_t close = line.find(']');
    size_t dash = line.find('-', 14);
    size_t g = line.find(" guid ", close == std::string_view::npos ? 0 : close);
    if (close == std::string_view::npos || dash == std::string_view::npos || dash > close ||
        g == std::string_view::npos)
      r_.fail("bad switch header: " + excerpt(line));
    // infiniband-diags writes the range in hex ("[0x0-0x1a3]"), OpenSM in decimal ("[0-215]").
    std::string_view lo_text = line.substr(14, dash - 14), hi_text = line.substr(dash + 1, close - dash - 1);
    int base = lo_text.starts_with("0x") ? 16 : 10;
    uint64_t hi = checked_uint(r_, hi_text, base, 0, kMaxLid, "top LID");
    checked_uint(r_, lo_text, base, 0, hi, "first LID");
    top_ = hi;
    std::string_view gs = line.substr(g + 6);
    gs = gs.substr(0, gs.find_first_of(" :("));
    start(switch_by_guid(gs), Section::unicast, hi + 1);
  }

  void open_fdbs(std::string_view line) {
    close_section(false);
    std::string_view gs = trim(line.substr(line.find(kFdbsHeader) + kFdbsHeader.size()));
    start(switch_by_guid(gs.substr(0, gs.find_first_of(" \t"))), Section::fdbs, 0);
  }

  void start(Node& sw, Section kind, uint64_t size) {
    section_ = kind;
    header_line_ = r_.lineno();
    entries_ = 0, last_lid_ = 0, ordered_ = true;
    ++sections_;
    if (cur_ < 0) return;
    sw.lft.assign(size, kNoRoute);
    sw.lft_read = true;
  }

  void set_entry(uint64_t lid, uint64_t port) {
    if (cur_ == -1) r_.fail("LFT entry outside a switch table");
    // A last line without its end broke off: its port may have lost digits ("001" read as "0").
    // Not taken; the table is cut before it.
    if (r_.unterminated()) {
      cut_line_ = true;
      return;
    }
    ++entries_;
    if (cur_ < 0) return;
    Node& sw = f_.nodes[cur_];
    if (port != kNoRoute && port > static_cast<uint64_t>(sw.num_ports()))
      r_.fail("port " + std::to_string(port) + " does not exist on " + sw.desc + " (" + std::to_string(sw.num_ports()) +
              " ports)");
    if (section_ == Section::fdbs && lid >= sw.lft.size()) sw.lft.resize(lid + 1, kNoRoute);
    if (lid >= sw.lft.size()) r_.fail("LID " + std::to_string(lid) + " outside the table's range");
    sw.lft[lid] = static_cast<uint8_t>(port);
    if (entries_ > 1 && lid <= last_lid_) ordered_ = false;
    last_lid_ = std::max(last_lid_, lid);
  }

  // A unicast table whose rows reached its header's top LID: nothing after them is missing.
  bool rows_complete() const { return section_ == Section::unicast && cur_ >= 0 && entries_ > 0 && last_lid_ == top_; }

  void unicast_row(std::string_view lid_text, std::string_view rest) {
    if (section_ != Section::unicast) r_.fail("LFT entry outside a switch table");
    uint64_t lid = checked_uint(r_, lid_text, 16, 0, kMaxLid, "LID");
    uint64_t port = checked_uint(r_, next_token(rest), 10, 0, 255, "out port");
    set_entry(lid, port);
  }

  void fdbs_row(std::string_view lid_text, std::string_view rest) {
    uint64_t lid = checked_uint(r_, lid_text, 16, 0, kMaxLid, "LID");
    if (next_token(rest) != ":") r_.fail("bad forwarding entry: expected ':' after the LID");
    std::string_view port = next_token(rest);
    set_entry(lid, port == "UNREACHABLE" ? kNoRoute : checked_uint(r_, port, 10, 0, 255, "out port"));
  }

  // "N valid lids dumped" (ibroute, dump_fts) counts the rows; "N lids dumped" counts every LID up
  // to the top (OpenSM) or every row including unreachable ones (ibroute -a).
  void trailer(uint64_t n, bool counts_rows) {
    if (section_ != Section::unicast) r_.fail("'lids dumped' without a switch table");
    if (cur_ >= 0 && (counts_rows ? n != entries_ : (n < entries_ || n > top_ + 1)))
      r_.fail("table of " + f_.nodes[cur_].desc + " says " + std::to_string(n) + " LIDs but has " +
              std::to_string(entries_));
    section_ = Section::none;
    cur_ = -1;
  }

  void tool_message(std::string_view line) {
    if (rows_complete()) {  // after the last row: the table stands, the line is noted
      f_.problems.push_back(
          {"tool_message", f_.nodes[cur_].guid, -1,
           r_.where() + ": after the last row of " + f_.nodes[cur_].desc + "'s table (kept): " + excerpt(line, 200)});
      section_ = Section::none;
      cur_ = -1;
      return;
    }
    f_.complete = false;
    if (section_ == Section::unicast && cur_ >= 0) {
      cut(r_.where() + ": " + excerpt(line, 240));
      section_ = Section::none;
      cur_ = -1;
      return;
    }
    f_.problems.push_back({"tool_message", 0, -1, r_.where() + ": " + excerpt(line, 240)});
  }

  // The open table ended without its trailer (or at the end of the file).
  void close_section(bool at_end) {
    if (section_ == Section::fdbs && cur_ >= 0 && cut_line_ && at_end)
      cut(r_.where() + ": the file ends in the middle of a line");
    const std::string why =
        ": the table has no 'lids dumped' line" + std::string(at_end ? " (the file ends)" : " (the next table starts)");
    if (rows_complete())
      f_.problems.push_back({"lft_unterminated", f_.nodes[cur_].guid, -1,
                             r_.where(header_line_) + why + "; its rows reach its top LID: kept"});
    else if (section_ == Section::unicast && cur_ >= 0)
      cut(r_.where(header_line_) + why);
    section_ = Section::none;
    cur_ = -1;
  }

  void cut(const std::string& why) {
    Node& sw = f_.nodes[cur_];
    cut_[cur_] = 1;
    f_.complete = false;
    if (entries_ > 0 && ordered_) {  // the rows read stand; the LIDs after the last one are unknown
      sw.lft_rows_to = static_cast<uint32_t>(last_lid_ + 1);
      char lid[8];
      std::snprintf(lid, sizeof lid, "0x%04x", static_cast<unsigned>(last_lid_ + 1));
      f_.problems.push_back({"lft_cut", sw.guid, -1,
                             "forwarding table of " + sw.desc + " is cut after " + std::to_string(entries_) +
                                 " rows (routes to LID " + lid + " and above unknown): " + why});
      return;
    }
    sw.lft.clear();
    sw.lft_read = false;
    f_.problems.push_back({"lft_cut", sw.guid, -1, "forwarding table of " + sw.desc + " is cut: " + why});
  }
};

}  // namespace

void apply_lft_dump(Fabric& f, std::string_view text, std::string_view source_name) {
  if (f.nodes.empty()) throw InputError(std::string(source_name) + ": no topology to apply forwarding tables to");
  LftDumpReader(f, text, source_name).read();
}

}  // namespace ibroute::fabric
