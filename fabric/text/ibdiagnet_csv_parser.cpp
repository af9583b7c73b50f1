// Parser for ibdiagnet's CSV database (`ibdiagnet2.db_csv`): sections between `START_<NAME>` and
// `END_<NAME>`, each a CSV header line and rows, e.g.
//   START_NODES
//   NodeDesc,NumPorts,NodeType,ClassVersion,BaseVersion,SystemImageGUID,NodeGUID,PortGUID,…
//   "Quantum-2 Mellanox Technologies",65,2,1,1,0xfc6a…,0xfc6a…,0xfc6a…,54002,8,160,713,63
//   END_NODES
// The topology comes from NODES, PORTS and LINKS; columns are found by their header name, since
// ibdiagnet versions add columns. GUIDs are hex (0x…), the rest decimal; PORTS encodes widths and
// speeds as the IBA's bit masks (LinkSpeedActv: byte 0 SDR/DDR/QDR, byte 1 FDR/EDR/HDR/NDR,
// byte 2 Mellanox's FDR10/EDR20, byte 3 XDR). Forwarding tables are not in the database
// (ibdiagnet writes them to `ibdiagnet2.fdbs`, which `--lfts` reads). PM_INFO, the ports' counters
// as ibdiagnet read them, is a counters snapshot (columns named as the IBA names the counters).
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "file_oddities.hpp"
#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/text_import.hpp"
#include "text_reader.hpp"

namespace ibroute::fabric {

using namespace text;

namespace {

struct Row {
  size_t line;
  std::vector<std::string> fields;
};

struct Section {
  size_t header_line = 0;
  std::vector<std::string> columns;
  std::vector<Row> rows;
};

// One CSV line: fields split at commas, "quoted" fields unquoted ("" inside is one quote).
bool split_csv(std::string_view line, std::vector<std::string>& out) {
  out.clear();
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"')
        field += c;
      else if (i + 1 < line.size() && line[i + 1] == '"')
        field += '"', ++i;
      else
        quoted = false;
    } else if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      out.push_back(was_quoted ? field : std::string(trim(field)));
      field.clear();
      was_quoted = false;
    } else {
      field += c;
    }
  }
  if (quoted) return false;
  out.push_back(was_quoted ? field : std::string(trim(field)));
  return true;
}

// Every section of the file, by name. A section is read only where a parser asks for it; the
// others (dozens, some large) are split into lines but never into fields.
class CsvDatabase {
 public:
  CsvDatabase(std::string_view text, std::string_view source) : r_(text, source) {
    std::string open;
    size_t open_line = 0;
    for (std::string_view line; r_.next(line);) {
      const std::string_view l = trim(line);
      if (open.empty()) {
        if (l.empty() || l[0] == '#') continue;
        if (!l.starts_with("START_")) r_.fail("a line outside any START_/END_ section: " + excerpt(l));
        open = std::string(l.substr(6));
        open_line = r_.lineno();
        if (raw_.count(open)) r_.fail("section " + excerpt(open) + " appears twice");
        raw_[open] = {};
        continue;
      }
      if (l == "END_" + open) {
        open.clear();
        continue;
      }
      raw_[open].push_back({r_.lineno(), line});
    }
    if (open.empty()) return;
    cut_ = r_.where(open_line) + ": section " + excerpt(open) + " has no END_ line (file cut off?)";
    if (r_.unterminated() && !raw_[open].empty()) raw_[open].pop_back();  // a row that broke off
  }
  const LineReader& reader() const { return r_; }
  const std::string& cut() const { return cut_; }

  // The section split into fields; an empty section (header only, or absent) has no rows.
  // Rows of the wrong field count are errors naming their line.
  const Section* section(const std::string& name) {
    auto done = sections_.find(name);
    if (done != sections_.end()) return &done->second;
    auto it = raw_.find(name);
    if (it == raw_.end()) return nullptr;
    Section s;
    bool header = true;
    for (const auto& [lineno, line] : it->second) {
      if (trim(line).empty()) continue;
      std::vector<std::string> fields;
      if (!split_csv(line, fields)) r_.fail_at(lineno, "a quote that does not close");
      if (header) {
        s.header_line = lineno;
        s.columns = std::move(fields);
        header = false;
        continue;
      }
      if (fields.size() != s.columns.size())
        r_.fail_at(lineno, std::to_string(fields.size()) + " fields where " + name + "'s header has " +
                               std::to_string(s.columns.size()));
      s.rows.push_back({lineno, std::move(fields)});
    }
    return &sections_.emplace(name, std::move(s)).first->second;
  }

 private:
  LineReader r_;
  std::map<std::string, std::vector<std::pair<size_t, std::string_view>>> raw_;
  std::map<std::string, Section> sections_;
  std::string cut_;
};

// Column look-up by header name, and range-checked values naming the row's line and the column.
class Columns {
 public:
  Columns(const LineReader& r, const Section& s, const char* name) : r_(r), s_(s), name_(name) {}
  size_t at(const char* column) const {
    for (size_t i = 0; i < s_.columns.size(); ++i)
      if (s_.columns[i] == column) return i;
    r_.fail_at(s_.header_line, std::string(name_) + " has no column " + column);
  }
  uint64_t num(const Row& row, size_t col, int base, uint64_t lo, uint64_t hi) const {
    const std::string& v = row.fields[col];
    uint64_t x = 0;
    if (!parse_uint(v, base, x)) r_.fail_at(row.line, "bad " + s_.columns[col] + " '" + excerpt(v) + "'");
    if (x < lo || x > hi)
      r_.fail_at(row.line,
                 s_.columns[col] + " " + v + " out of range (" + std::to_string(lo) + ".." + std::to_string(hi) + ")");
    return x;
  }
  uint64_t guid(const Row& row, size_t col) const {
    if (!row.fields[col].starts_with("0x"))
      r_.fail_at(row.line, "bad " + s_.columns[col] + " '" + excerpt(row.fields[col]) + "'");
    return num(row, col, 16, 0, UINT64_MAX);
  }

 private:
  const LineReader& r_;
  const Section& s_;
  const char* name_;
};

// LinkSpeedActv as ibdiagnet writes it: the highest byte that is set names the speed.
std::string speed_of_mask(uint64_t m) {
  const uint64_t ext2 = (m >> 24) & 0xff, mlnx = (m >> 16) & 0xff, ext = (m >> 8) & 0xff, reg = m & 0xff;
  if (ext2) return ext2 == 1 ? "XDR" : "";
  if (ext) return ext == 1 ? "FDR" : ext == 2 ? "EDR" : ext == 4 ? "HDR" : ext == 8 ? "NDR" : "";
  if (mlnx) return mlnx == 1 ? "FDR10" : "";  // 2 is EDR20: not a speed ibroute knows
  return reg == 1 ? "SDR" : reg == 2 ? "DDR" : reg == 4 ? "QDR" : "";
}

void read_nodes(CsvDatabase& db, Fabric& f, std::map<uint64_t, int>& by_guid) {
  const Section* s = db.section("NODES");
  if (!s || s->rows.empty())
    throw InputError(std::string(db.reader().source()) + ": no NODES section with rows (not an ibdiagnet db_csv?)");
  const Columns c(db.reader(), *s, "NODES");
  const size_t desc = c.at("NodeDesc"), nports = c.at("NumPorts"), type = c.at("NodeType"), guid = c.at("NodeGUID"),
               sysimg = c.at("SystemImageGUID");
  for (const Row& row : s->rows) {
    Node n;
    n.type = static_cast<NodeType>(c.num(row, type, 10, 1, 3));
    n.guid = c.guid(row, guid);
    n.sysimg_guid = c.guid(row, sysimg);
    n.desc = row.fields[desc];
    n.ports.resize(c.num(row, nports, 10, 1, 254) + 1);
    if (n.is_switch()) n.ports[0].guid = n.guid, n.ports[0].state = PortState::active;
    if (!by_guid.emplace(n.guid, static_cast<int>(f.nodes.size())).second)
      db.reader().fail_at(row.line, "node " + guid_hex(n.guid) + " listed twice");
    f.nodes.push_back(std::move(n));
  }
}

void read_ports(CsvDatabase& db, Fabric& f, const std::map<uint64_t, int>& by_guid, Oddities& odd) {
  const Section* s = db.section("PORTS");
  if (!s) return;
  const Columns c(db.reader(), *s, "PORTS");
  const size_t node = c.at("NodeGuid"), pguid = c.at("PortGuid"), pnum = c.at("PortNum"), lid = c.at("LID"),
               lmc = c.at("LMC"), width = c.at("LinkWidthActv"), speed = c.at("LinkSpeedActv"),
               state = c.at("PortState");
  for (const Row& row : s->rows) {
    auto it = by_guid.find(c.guid(row, node));
    if (it == by_guid.end())
      db.reader().fail_at(row.line, "a port of node " + row.fields[node] + " which NODES does not list");
    Node& n = f.nodes[it->second];
    const int p = static_cast<int>(c.num(row, pnum, 10, 0, static_cast<uint64_t>(n.num_ports())));
    if (p == 0 && !n.is_switch()) db.reader().fail_at(row.line, "port 0 of a CA");
    Port& port = n.ports[p];
    port.guid = c.guid(row, pguid);
    const uint64_t l = c.num(row, lid, 10, 0, kUnassignedLid);
    if (l == kUnassignedLid)
      odd.note(Oddity::unassigned_lid, db.reader().where(row.line), "LID 65535");
    else if (l > static_cast<uint64_t>(kMaxLid))
      c.num(row, lid, 10, 0, kMaxLid);  // fails, naming the line
    if (p == 0 || !n.is_switch()) {
      port.base_lid = l == kUnassignedLid ? 0 : static_cast<uint16_t>(l);
      port.lmc = static_cast<uint8_t>(c.num(row, lmc, 10, 0, 7));
    }
    if (p == 0) continue;  // the switch's management port: no cable
    port.state = static_cast<PortState>(c.num(row, state, 10, 0, 4));
    if (port.state == PortState::down || port.state == PortState::unknown) continue;  // widths say nothing
    port.width = lanes_of_width_mask(c.num(row, width, 10, 0, UINT32_MAX));
    port.speed = speed_of_mask(c.num(row, speed, 10, 0, UINT32_MAX));
    if (port.width == 0 || port.speed.empty())
      odd.note(Oddity::unknown_rate, db.reader().where(row.line),
               "LinkWidthActv " + row.fields[width] + ", LinkSpeedActv " + row.fields[speed]);
  }
}

void read_links(CsvDatabase& db, Fabric& f, const std::map<uint64_t, int>& by_guid) {
  const Section* s = db.section("LINKS");
  if (!s) return;
  const Columns c(db.reader(), *s, "LINKS");
  const size_t g1 = c.at("NodeGuid1"), p1 = c.at("PortNum1"), g2 = c.at("NodeGuid2"), p2 = c.at("PortNum2");
  for (const Row& row : s->rows) {
    int end[2];
    int port[2];
    for (int k = 0; k < 2; ++k) {
      auto it = by_guid.find(c.guid(row, k ? g2 : g1));
      if (it == by_guid.end())
        db.reader().fail_at(row.line, "a link to node " + row.fields[k ? g2 : g1] + " which NODES does not list");
      end[k] = it->second;
      port[k] = static_cast<int>(c.num(row, k ? p2 : p1, 10, 1, static_cast<uint64_t>(f.nodes[end[k]].num_ports())));
    }
    const Port& a = f.nodes[end[0]].ports[port[0]];
    const Port& b = f.nodes[end[1]].ports[port[1]];
    if ((a.connected() && (a.peer_node != end[1] || a.peer_port != port[1])) ||
        (b.connected() && (b.peer_node != end[0] || b.peer_port != port[0])))
      db.reader().fail_at(row.line, "a port cabled to two places");
    f.link(end[0], port[0], end[1], port[1]);
  }
}

// A column by name, or none (-1).
int column(const Section& s, std::string_view name) {
  for (size_t i = 0; i < s.columns.size(); ++i)
    if (s.columns[i] == name) return static_cast<int>(i);
  return -1;
}

// One PM_INFO row's counter: hex (0x…) or decimal, within `bits`; false for "N/A" or -1 (not
// read, or not supported by the port); an InputError for anything else.
bool pm_value(const LineReader& r, const Row& row, const Section& s, int col, int bits, uint64_t& out) {
  const std::string& v = row.fields[static_cast<size_t>(col)];
  if (v == "N/A" || v == "-1" || v.empty()) return false;
  const bool hex = v.starts_with("0x");
  if (!parse_uint(v, hex ? 16 : 10, out)) r.fail_at(row.line, "bad " + s.columns[col] + " '" + excerpt(v) + "'");
  if (bits < 64 && out >> bits)
    r.fail_at(row.line, s.columns[col] + " " + v + " does not fit its " + std::to_string(bits) + " bits");
  return true;
}

// PM_INFO of an indexed db_csv as a snapshot of `f` (see parse_ibdiagnet_counters).
std::optional<CounterSnapshot> read_pm_info(CsvDatabase& db, const Fabric& f) {
  const Section* s = db.section("PM_INFO");
  if (!s || s->rows.empty()) return std::nullopt;
  const LineReader& r = db.reader();
  const Columns c(r, *s, "PM_INFO");
  const size_t node = c.at("NodeGUID");
  int port = column(*s, "PortNumber");
  if (port < 0) port = static_cast<int>(c.at("PortNum"));
  // Each counter's column; the data and packet counts from their Extended (64-bit) columns where present.
  std::array<int, kCounters> col{}, wide{};
  for (size_t i = 0; i < kCounters; ++i) {
    const std::string ib(counter_info(i).ib);
    col[i] = column(*s, ib);
    wide[i] = counter_bits(static_cast<Counter>(i), true) == 64 ? column(*s, ib + "Extended") : -1;
    if (col[i] < 0 && wide[i] < 0) r.fail_at(s->header_line, "PM_INFO has no column " + ib);
  }
  std::map<uint64_t, int32_t> by_guid;
  for (size_t i = 0; i < f.nodes.size(); ++i) by_guid.emplace(f.nodes[i].guid, static_cast<int32_t>(i));
  CounterSnapshot snap;
  std::map<std::pair<int32_t, int>, bool> seen;
  for (const Row& row : s->rows) {
    const auto it = by_guid.find(c.guid(row, node));
    if (it == by_guid.end()) r.fail_at(row.line, "counters of node " + row.fields[node] + " which NODES does not list");
    const int32_t* n = &it->second;
    PortSample ps;
    ps.node = *n;
    ps.port = static_cast<int>(c.num(row, static_cast<size_t>(port), 10, 0, f.nodes[*n].num_ports()));
    if (!seen.emplace(std::make_pair(ps.node, ps.port), true).second) r.fail_at(row.line, "a port's counters twice");
    bool all = true;
    ps.extended = true;
    for (size_t i = 0; i < kCounters; ++i) {
      const bool use_wide = wide[i] >= 0 && pm_value(r, row, *s, wide[i], 64, ps.v[i]);
      if (wide[i] >= 0 && !use_wide && counter_bits(static_cast<Counter>(i), true) == 64) ps.extended = false;
      if (!use_wide) all &= col[i] >= 0 && pm_value(r, row, *s, col[i], counter_info(i).bits, ps.v[i]);
    }
    if (!all) {
      snap.unanswered.emplace_back(ps.node, ps.port);
      continue;
    }
    if (!ps.extended) snap.no_extended.emplace_back(ps.node, ps.port);
    snap.ports.push_back(ps);
  }
  auto by_port = [](const auto& a, const auto& b) { return std::tie(a.node, a.port) < std::tie(b.node, b.port); };
  std::sort(snap.ports.begin(), snap.ports.end(), by_port);
  std::sort(snap.unanswered.begin(), snap.unanswered.end());
  std::sort(snap.no_extended.begin(), snap.no_extended.end());
  return snap;
}

}  // namespace

bool looks_like_ibdiagnet_csv(std::string_view text) { return first_data_line(text).starts_with("START_"); }

std::optional<CounterSnapshot> parse_ibdiagnet_counters(std::string_view text, const Fabric& f,
                                                        std::string_view source_name) {
  CsvDatabase db(text, source_name);
  return read_pm_info(db, f);
}

Fabric parse_ibdiagnet_csv(std::string_view text, std::string_view source_name,
                           std::optional<CounterSnapshot>* counters) {
  CsvDatabase db(text, source_name);
  Fabric f;
  Oddities odd;
  std::map<uint64_t, int> by_guid;
  read_nodes(db, f, by_guid);
  read_ports(db, f, by_guid, odd);
  read_links(db, f, by_guid);
  if (!db.cut().empty()) {
    f.complete = false;
    f.problems.push_back({"topology_cut", 0, -1, db.cut()});
  }
  odd.add_to(f, db.reader());
  if (counters) *counters = read_pm_info(db, f);  // the same index: the file is split into lines once
  return f;
}

}  // namespace ibroute::fabric
