// Parser for ibnetdiscover's topology output, plain or grouped (-g), as infiniband-diags writes it:
//   vendid=0x2c9
//   sysimgguid=0x2c90200401234            # Chassis 1 (IS5600)          (the comment only with -g)
//   switchguid=0x20000b(20000b)            # ... Line 5 Chip 1          (likewise)
//   Switch  12 "S-000000000020000b"   # "ibswitch12" base port 0 lid 48 lmc 0
//   [1]     "H-0000000000100008"[1](100009)   # "node1-024" lid 36 4xEDR
//   [3][ext 7]  "S-..."[12]   # "MF0;spine:IS5600/S01/U1" lid 5 4xQDR
//   Ca      1 "H-0000000000100060"   # "node1-037"
//   [1](100061)  "S-000000000020000b"[8]   # lid 228 lmc 2 "ibswitch12" lid 48 4xEDR
// Grouping lines ("Chassis 3 (guid 0x...)", "Non-Chassis Nodes") carry nothing the records do not.
// Descriptions may hold '=', '#' and quotes: a description runs to the last quote of its line.
// ibdiagnet's form labels the ports of switches with cages and splits (Quantum-2:
// ASIC/Cage/Port[/Split]) and the ports of CAs likewise, before the port GUID:
//   [1](1/1/1) "S-fc6a1c030091cf00"[63]      # "Quantum-2 Mellanox Technologies" lid 13 4xNDR
//   [1](B9D0F0/0/0/1)(5c25730300d0dc72) "S-fc6a1c030091cf00"[1] # lid 130 lmc 0 "..." lid 13 4xNDR
// Lines that tools print when MADs fail are kept as problems; a file that ends in the middle
// (links to nodes it never defines) is imported and marked incomplete. Files as admins keep them
// (a terminal's banner and prompt, CRLF, a lost tab, LID 65535) are read with one problem each.
#include <map>
#include <string>

#include "file_oddities.hpp"
#include "ibroute/fabric/text_import.hpp"
#include "text_reader.hpp"

namespace ibroute::fabric {

using namespace text;

namespace {

// "S-000000000020000b" -> 0x20000b; other tools' node ids may not carry a GUID.
std::optional<uint64_t> guid_from_id(std::string_view id) {
  uint64_t v = 0;
  if (id.size() > 2 && id[1] == '-' && (id[0] == 'S' || id[0] == 'H' || id[0] == 'R') && parse_uint(id.substr(2), 16, v))
    return v;
  return std::nullopt;
}

// A quoted string at the start of s: its contents; s keeps what follows the closing quote.
bool take_quoted(std::string_view& s, std::string_view& out) {
  s = trim(s);
  if (s.empty() || s[0] != '"') return false;
  size_t e = s.find('"', 1);
  if (e == std::string_view::npos) return false;
  out = s.substr(1, e - 1);
  s = s.substr(e + 1);
  return true;
}
// "[12]" or "[12][ext 3]" at the start of s: the port number.
bool take_port(std::string_view& s, std::string_view& num) {
  if (s.empty() || s[0] != '[') return false;
  size_t e = s.find(']');
  if (e == std::string_view::npos) return false;
  num = s.substr(1, e - 1);
  s = s.substr(e + 1);
  if (s.starts_with("[ext ")) {
    size_t x = s.find(']');
    if (x == std::string_view::npos) return false;
    s = s.substr(x + 1);
  }
  return true;
}
// "(1a2b)" at the start of s: the port GUID (or, in ibdiagnet's form, a port label).
bool take_guid(std::string_view& s, std::string_view& g) {
  if (s.empty() || s[0] != '(') return false;
  size_t e = s.find(')');
  if (e == std::string_view::npos) return false;
  g = s.substr(1, e - 1);
  s = s.substr(e + 1);
  return true;
}

// The port's own GUID after "[p]": ibnetdiscover writes "(guid)" for CA ports; ibdiagnet writes
// a label first, "(label)(guid)" for CA ports and "(label)" alone for switch ports (a switch
// port's GUID is the switch's). A switch port's one group is a label unless it is the switch's GUID.
bool take_local_guid(std::string_view& s, const Node& n, std::string_view& guid) {
  std::string_view first, second;
  if (!take_guid(s, first)) return false;
  if (take_guid(s, second)) return guid = second, true;
  uint64_t v = 0;
  if (n.is_switch() && !(parse_uint(first, 16, v) && v == n.guid)) return false;  // a label
  return guid = first, true;
}

// True for lines that start like ibnetdiscover's own records: a node record, a port line, a
// GUID line. A line that fails to parse and starts so is an error; other lines before the first
// record or after the last are a terminal's banner or prompt.
bool looks_like_record(std::string_view line) {
  if (line.size() > 1 && line[0] == '[' && line[1] >= '0' && line[1] <= '9') return true;
  for (std::string_view k : {"Switch", "Ca", "Rt"})  // then a blank or the port count ("Cannot …" is no record)
    if (line.starts_with(k) && line.size() > k.size() &&
        (line[k.size()] == ' ' || line[k.size()] == '\t' || (line[k.size()] >= '0' && line[k.size()] <= '9')))
      return true;
  for (std::string_view k : {"vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid=", "rtguid=", "routerguid="})
    if (line.starts_with(k)) return true;
  return false;
}

// "Switch41" (the tab lost in a terminal capture) -> keyword "Switch", count "41".
bool split_glued_keyword(std::string_view& first, std::string_view& count) {
  for (std::string_view k : {"Switch", "Ca", "Rt"})
    if (first.size() > k.size() && first.starts_with(k) && first[k.size()] >= '0' && first[k.size()] <= '9') {
      count = first.substr(k.size());
      first = first.substr(0, k.size());
      return true;
    }
  return false;
}

// "lid 36 lmc 2" anywhere in s (the first occurrence), range-checked; LID 65535 is "unassigned"
// (stored as no LID and noted).
void find_lid_lmc(const LineReader& r, std::string_view s, uint16_t& lid, uint8_t& lmc, bool want_lmc,
                  Oddities* odd = nullptr) {
  size_t at = s.find("lid ");
  if (at == std::string_view::npos) return;
  std::string_view rest = s.substr(at + 4);
  std::string_view l = next_token(rest);
  uint64_t v = 0;
  if (odd && parse_uint(l, 10, v) && v == kUnassignedLid) {
    odd->note(Oddity::unassigned_lid, r.where(), s.substr(at));
    lid = 0;
  } else {
    lid = static_cast<uint16_t>(checked_uint(r, l, 10, 0, kMaxLid, "LID"));
  }
  if (!want_lmc) return;
  std::string_view k = next_token(rest);
  if (k != "lmc") return;
  lmc = static_cast<uint8_t>(checked_uint(r, next_token(rest), 10, 0, 7, "LMC"));
}

struct PendingLink {
  int node, port;
  std::string remote_id;
  int remote_port;
  uint64_t remote_port_guid;
  size_t line;
};

struct UnknownRate {
  int count = 0;
  std::string example;
};

// The width and speed after the peer's quoted description: `lid 48 4xEDR`, maybe followed by
// -f's `s=1 w=2 v=4` or a Xsigo slot. ibnetdiscover prints an unknown width as "??" and an unknown
// speed as "???" ("??QDR", "4x???"): what is known is kept, the rest counted as a problem.
void read_rate(std::string_view after_desc, Port& port, UnknownRate& unknown, const std::string& where) {
  std::string_view s = after_desc, t = next_token(s), rate = t;
  if (t == "lid") next_token(s), rate = next_token(s);
  if (rate.empty()) return;
  if (auto ws = parse_width_speed(rate)) {
    port.width = ws->width;
    port.speed = ws->speed;
    return;
  }
  size_t x = rate.starts_with("??") ? 1 : rate.find('x');
  if (x != std::string_view::npos) {
    uint64_t w = 0;
    if (parse_uint(rate.substr(0, x), 10, w) && is_link_width(static_cast<int64_t>(w))) port.width = static_cast<uint8_t>(w);
    if (lane_gbps(rate.substr(x + 1)) > 0) port.speed = std::string(rate.substr(x + 1));
  }
  if (unknown.count++ == 0) unknown.example = where + " '" + excerpt(rate) + "'";
}

}  // namespace

Fabric parse_ibnetdiscover(std::string_view text, std::string_view source_name) {
  LineReader r(text, source_name);
  Fabric f;
  std::map<std::string, int, std::less<>> by_id;
  std::vector<PendingLink> links;
  uint64_t pending_guid = 0, pending_sysimg = 0;
  int cur = -1;
  UnknownRate unknown;
  Oddities odd;
  std::vector<std::string> messages;

  // One line; returns true for a line that holds data, false for lines it skips.
  auto take_line = [&](std::string_view line) -> bool {
    line = trim(line);
    if (line.empty()) {
      cur = -1;
      return false;
    }
    if (line[0] == '#') return false;
    std::string_view rest = line;
    std::string_view first = next_token(rest), count;
    if (split_glued_keyword(first, count)) odd.note(Oddity::glued_keyword, r.where(), line);
    if (first == "Switch" || first == "Ca" || first == "Rt") {
      if (count.empty()) count = next_token(rest);
      std::string_view id;
      if (!take_quoted(rest, id)) r.fail("node record without a quoted node id: " + excerpt(line));
      Node n;
      n.type = first == "Switch" ? NodeType::sw : first == "Ca" ? NodeType::ca : NodeType::router;
      int nports = static_cast<int>(checked_uint(r, count, 10, 1, 254, "port count"));
      if (by_id.count(id)) r.fail("node \"" + excerpt(id) + "\" defined twice");
      auto g = pending_guid ? std::optional<uint64_t>(pending_guid) : guid_from_id(id);
      if (!g) r.fail("no GUID for node \"" + excerpt(id) + "\"");
      n.guid = *g;
      n.sysimg_guid = pending_sysimg;
      pending_guid = pending_sysimg = 0;
      n.desc = std::string(id);
      std::string_view comment = trim(rest);
      if (comment.starts_with("#")) {
        comment = trim(comment.substr(1));
        size_t last = comment.rfind('"');
        if (comment.starts_with("\"") && last > 0) {
          n.desc = std::string(comment.substr(1, last - 1));
          comment = comment.substr(last + 1);
        }
      }
      n.ports.resize(nports + 1);
      if (n.is_switch()) {
        n.ports[0].guid = n.guid;
        n.ports[0].state = PortState::active;
        find_lid_lmc(r, comment, n.ports[0].base_lid, n.ports[0].lmc, true, &odd);
      }
      cur = static_cast<int>(f.nodes.size());
      by_id.emplace(std::string(id), cur);
      f.nodes.push_back(std::move(n));
      return true;
    }
    if (line[0] == '[') {
      if (cur < 0) r.fail("port line outside a node record");
      Node& n = f.nodes[cur];
      std::string_view s = line, pnum, lguid, rid, rport, rguid;
      if (!take_port(s, pnum)) r.fail("bad port line: " + excerpt(line));
      int p = static_cast<int>(checked_uint(r, pnum, 10, 1, 254, "port number"));
      if (p > n.num_ports()) r.fail("port " + std::to_string(p) + " out of range for \"" + excerpt(n.desc) + "\"");
      bool has_lguid = take_local_guid(s, n, lguid);
      s = trim(s);
      std::string_view after_id = s;
      if (!take_quoted(after_id, rid) || !take_port(after_id, rport)) r.fail("bad port line: " + excerpt(line));
      after_id = trim(after_id);  // a CA peer's GUID follows after a space: "H-..."[1] (guid)
      bool has_rguid = take_guid(after_id, rguid);
      Port& port = n.ports[p];
      if (has_lguid) port.guid = checked_uint(r, lguid, 16, 0, UINT64_MAX, "port GUID");
      else if (n.is_switch()) port.guid = n.guid;
      std::string_view comment = trim(after_id);
      if (!comment.empty() && comment[0] != '#') r.fail("bad port line: " + excerpt(line));
      if (!comment.empty()) comment = comment.substr(1);
      if (!n.is_switch()) {
        // The CA's own "lid N lmc M" comes before the remote node's quoted description.
        std::string_view own = comment.substr(0, comment.find('"'));
        find_lid_lmc(r, own, port.base_lid, port.lmc, true, &odd);
      }
      size_t q = comment.rfind('"');
      read_rate(q == std::string_view::npos ? comment : comment.substr(q + 1), port, unknown, r.where());
      // ibnetdiscover ends every line; a last line without its end that lost its rate was cut.
      if (r.unterminated() && port.width == 0 && port.speed.empty()) r.fail("the last line is cut");
      int remote_port = static_cast<int>(checked_uint(r, rport, 10, 1, 254, "remote port number"));
      links.push_back({cur, p, std::string(rid), remote_port,
                       has_rguid ? checked_uint(r, rguid, 16, 0, UINT64_MAX, "remote port GUID") : 0, r.lineno()});
      return true;
    }
    size_t eq = line.find('=');
    std::string_view key = eq == std::string_view::npos ? std::string_view{} : line.substr(0, eq);
    if (key == "switchguid" || key == "caguid" || key == "rtguid" || key == "routerguid" || key == "sysimgguid") {
      std::string_view v = line.substr(eq + 1);
      v = v.substr(0, v.find_first_of("( \t#"));
      (key == "sysimgguid" ? pending_sysimg : pending_guid) = checked_uint(r, v, 16, 0, UINT64_MAX, "GUID");
      return true;
    }
    if (key == "vendid" || key == "devid") return true;
    if (first == "Chassis" || line.starts_with("Non-Chassis Nodes") || first == "Hostname:") return false;  // -g grouping
    if (is_progress_line(line)) return false;  // -s
    if (is_tool_message(line)) {
      if (messages.size() < 1000) messages.push_back(r.where() + ": " + excerpt(line, 240));
      return false;
    }
    r.fail("cannot parse: " + excerpt(line));
  };
  const bool cut = read_records(r, odd, take_line, looks_like_record);

  size_t dangling = 0;
  std::string first_dangling;
  for (const PendingLink& l : links) {
    auto it = by_id.find(l.remote_id);
    if (it == by_id.end()) {
      // Cut-off files end mid-record: keep what is there, say what is missing.
      if (dangling++ == 0) first_dangling = r.where(l.line) + ": \"" + excerpt(l.remote_id) + "\"";
      continue;
    }
    Node& rn = f.nodes[it->second];
    if (l.remote_port > rn.num_ports())
      r.fail_at(l.line, "link to port " + std::to_string(l.remote_port) + " of \"" + excerpt(rn.desc) + "\" which has " +
                            std::to_string(rn.num_ports()) + " ports");
    Port& rp = rn.ports[l.remote_port];
    if (rp.connected() && (rp.peer_node != l.node || rp.peer_port != l.port))
      r.fail_at(l.line, "\"" + excerpt(rn.desc) + "\" port " + std::to_string(l.remote_port) + " is cabled to two places");
    const Port& lp = f.nodes[l.node].ports[l.port];
    if (lp.connected() && (lp.peer_node != it->second || lp.peer_port != l.remote_port))
      r.fail_at(l.line, "\"" + excerpt(f.nodes[l.node].desc) + "\" port " + std::to_string(l.port) + " is cabled to two places");
    if (l.remote_port_guid && !rp.guid) rp.guid = l.remote_port_guid;
    f.link(l.node, l.port, it->second, l.remote_port);
  }
  if (f.nodes.empty()) throw InputError(std::string(source_name) + ": no nodes found (not ibnetdiscover output?)");
  for (Node& n : f.nodes)
    for (size_t i = 1; i < n.ports.size(); ++i)
      if (n.ports[i].connected()) n.ports[i].state = PortState::unknown;
  if (cut) {
    f.complete = false;
    f.problems.push_back({"topology_cut", 0, -1, r.where() + ": the file ends in the middle of a line (cut off?)"});
  }
  if (dangling) {
    f.complete = false;
    f.problems.push_back({"topology_cut", 0, -1,
                          std::to_string(dangling) + " link(s) to nodes the file does not define (file cut off?), first at " +
                              first_dangling});
  }
  if (unknown.count)
    f.problems.push_back({"unknown_rate", 0, -1,
                          std::to_string(unknown.count) + " port(s) with an unknown width or speed, first at " + unknown.example});
  odd.add_to(f, r);
  for (const std::string& m : messages) f.problems.push_back({"tool_message", 0, -1, m});
  if (!messages.empty()) f.complete = false;  // a MAD that failed during discovery: something may be missing
  return f;
}

}  // namespace ibroute::fabric
