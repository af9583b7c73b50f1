// Parser for `ibnetdiscover -p`, the ports report: one line per port of every node, e.g.
//   SW    12  8 0x000000000020000b 4x EDR - CA    36  1 0x0000000000100009 ( 'ibswitch12' - 'node1-024' )
//   CA    36  1 0x0000000000100009 4x EDR - SW    12  8 0x000000000020000b ( 'node1-024' - 'ibswitch12' )
//   SW    12  9 0x000000000020000b 4x SDR                                    'ibswitch12'
// (type, LID — the switch's for switch ports —, port, port GUID, width, speed, then the peer or
// only the node's name). The report carries no node GUIDs and no LMC: a switch is known by its
// port GUID (all its ports share it), a CA by the GUID of each port; LMC is taken as 0 and said.
#include <map>
#include <string>

#include "file_oddities.hpp"
#include "ibroute/fabric/text_import.hpp"
#include "text_reader.hpp"

namespace ibroute::fabric {

using namespace text;

namespace {

struct End {
  NodeType type;
  uint16_t lid;
  int port;
  uint64_t guid;
};

std::optional<NodeType> type_of(std::string_view t) {
  if (t == "SW") return NodeType::sw;
  if (t == "CA") return NodeType::ca;
  if (t == "RT") return NodeType::router;
  return std::nullopt;
}

End read_end(const LineReader& r, std::string_view& s, Oddities& odd) {
  auto type = type_of(next_token(s));
  if (!type) r.fail("bad node type (SW, CA or RT expected)");
  End e{*type, 0, 0, 0};
  const std::string_view lid = next_token(s);
  uint64_t v = 0;
  if (parse_uint(lid, 10, v) && v == kUnassignedLid)
    odd.note(Oddity::unassigned_lid, r.where(), lid);
  else
    e.lid = static_cast<uint16_t>(checked_uint(r, lid, 10, 0, kMaxLid, "LID"));
  e.port = static_cast<int>(checked_uint(r, next_token(s), 10, 1, 254, "port number"));
  e.guid = checked_uint(r, next_token(s), 16, 0, UINT64_MAX, "port GUID");
  return e;
}

// 'name' at the start of s (names may hold quotes: the report does not escape them, so a name
// ends at the quote followed by " - '" or at the last quote).
std::string_view quoted_single(std::string_view s, bool first_of_two) {
  s = trim(s);
  if (s.empty() || s[0] != '\'') return {};
  size_t e = first_of_two ? s.find("' - '", 1) : s.rfind('\'');
  if (e == std::string_view::npos || e == 0) return {};
  return s.substr(1, e - 1);
}

using NodesByGuid = std::map<std::pair<NodeType, uint64_t>, int>;  // (type, port GUID for CAs / switch GUID)

// The node of a port line's end, made on first sight, with the port's GUID and LID.
int node_for(Fabric& f, NodesByGuid& by_guid, const End& e, std::string_view name) {
  auto [it, added] = by_guid.emplace(std::make_pair(e.type, e.guid), static_cast<int>(f.nodes.size()));
  const int idx = it->second;
  if (added) {
    Node n;
    n.type = e.type;
    n.guid = e.guid;
    n.desc = std::string(name);
    n.ports.resize(1);
    f.nodes.push_back(std::move(n));
  }
  Node& n = f.nodes[idx];
  if (n.desc.empty()) n.desc = std::string(name);
  if (static_cast<int>(n.ports.size()) <= e.port) n.ports.resize(e.port + 1);
  Port& p = n.ports[e.port];
  p.guid = e.guid;
  if (n.is_switch()) {
    n.ports[0].guid = e.guid;
    n.ports[0].state = PortState::active;
    n.ports[0].base_lid = e.lid;
  } else {
    p.base_lid = e.lid;
  }
  return idx;
}

}  // namespace

bool looks_like_ports_report(std::string_view text) {
  LineReader r(text, "");
  for (std::string_view line; r.next(line);) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || is_tool_message(line) || is_progress_line(line))
      continue;  // -s: progress first
    std::string_view s = line;
    return type_of(next_token(s)).has_value();
  }
  return false;
}

Fabric parse_ports_report(std::string_view text, std::string_view source_name) {
  LineReader r(text, source_name);
  Fabric f;
  NodesByGuid by_guid;
  struct PendingLink {
    End a, b;
    size_t line;
  };
  std::vector<PendingLink> links;
  std::vector<std::string> messages;
  Oddities odd;
  int unknown_rates = 0;
  std::string unknown_example;

  auto take_line = [&](std::string_view line) -> bool {
    std::string_view l = trim(line);
    if (l.empty() || l[0] == '#' || is_progress_line(l)) return false;  // ibnetdiscover -s -p: discovery progress
    if (is_tool_message(l)) {
      if (messages.size() < 1000) messages.push_back(r.where() + ": " + excerpt(l, 240));
      return false;
    }
    std::string_view s = l;
    End a = read_end(r, s, odd);
    std::string_view width = next_token(s), speed = next_token(s);
    auto ws = parse_width_speed(std::string(width) + std::string(speed));
    if (!ws && unknown_rates++ == 0) unknown_example = r.where() + " '" + excerpt(width) + " " + excerpt(speed) + "'";
    s = trim(s);
    if (!s.starts_with("- ")) {
      int ia = node_for(f, by_guid, a, quoted_single(s, false));
      f.nodes[ia].ports[a.port].state = PortState::down;
      return true;
    }
    s.remove_prefix(2);
    End b = read_end(r, s, odd);
    s = trim(s);
    if (!s.starts_with("(")) r.fail("bad port line: " + excerpt(l));
    std::string_view names = trim(s.substr(1));
    std::string_view na = quoted_single(names, true);
    std::string_view nb = quoted_single(names.substr(std::min(names.size(), na.size() + 5)), false);
    int ia = node_for(f, by_guid, a, na);
    node_for(f, by_guid, b, nb);
    Port& pa = f.nodes[ia].ports[a.port];
    if (ws) pa.width = ws->width, pa.speed = ws->speed;
    pa.state = PortState::active;
    links.push_back({a, b, r.lineno()});
    return true;
  };
  const bool cut = read_records(r, odd, take_line, [](std::string_view l) {
    std::string_view rest = l;
    return type_of(next_token(rest)).has_value();
  });
  if (f.nodes.empty())
    throw InputError(std::string(source_name) + ": no ports found (not an ibnetdiscover -p report?)");
  for (const PendingLink& l : links) {
    int ia = by_guid.at({l.a.type, l.a.guid});
    auto ib = by_guid.find({l.b.type, l.b.guid});
    if (ib == by_guid.end()) continue;  // cannot happen: node_for made it
    Port& pa = f.nodes[ia].ports[l.a.port];
    Port& pb = f.nodes[ib->second].ports[l.b.port];
    bool a_free = !pa.connected() || (pa.peer_node == ib->second && pa.peer_port == l.b.port);
    bool b_free = !pb.connected() || (pb.peer_node == ia && pb.peer_port == l.a.port);
    if (!a_free || !b_free) r.fail_at(l.line, "a port cabled to two places");
    f.link(ia, l.a.port, ib->second, l.b.port);
  }
  f.problems.push_back({"no_lmc", 0, -1,
                        std::string(source_name) + ": a ports report (ibnetdiscover -p) carries no LMC and no node "
                                                   "GUIDs: LMC taken as 0, CAs known by port GUID"});
  if (unknown_rates)
    f.problems.push_back(
        {"unknown_rate", 0, -1,
         std::to_string(unknown_rates) + " port(s) with an unknown width or speed, first at " + unknown_example});
  if (cut) {
    f.complete = false;
    f.problems.push_back({"topology_cut", 0, -1, r.where() + ": the file ends in the middle of a line (cut off?)"});
  }
  odd.add_to(f, r);
  for (const std::string& m : messages) f.problems.push_back({"tool_message", 0, -1, m});
  if (!messages.empty()) f.complete = false;
  return f;
}

}  // namespace ibroute::fabric
