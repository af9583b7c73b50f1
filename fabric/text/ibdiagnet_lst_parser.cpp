// Parser for ibdiagnet's `.lst` (ibdm's link list): one line per link, both ends in braces, e.g.
//   { CA Ports:01 SystemGUID:5c25… NodeGUID:5c25… PortGUID:5c25… VenID:000002c9 DevID:1021
//     Rev:00000000 {h4-12-gpu HCA-1} LID:00b5 PN:01 } { SW Ports:41 … {Quantum-2 Mellanox
//     Technologies} LID:00b6 PN:0c } PHY=4x LOG=ACT SPD=100
// (one line in the file). Numbers are hex: port counts, LIDs and port numbers too. A switch end's
// LID is the switch's (port 0). SPD is the lane's data rate in Gb/s. The list carries no LMC and
// no port that is not cabled: LMC is taken as 0 and said, as for the ports report.
#include <map>
#include <string>

#include "file_oddities.hpp"
#include "ibroute/fabric/text_import.hpp"
#include "text_reader.hpp"

namespace ibroute::fabric {

using namespace text;

namespace {

struct LstEnd {
  NodeType type = NodeType::ca;
  int ports = 0;
  uint64_t sysimg = 0, node_guid = 0, port_guid = 0;
  std::string_view desc;
  uint64_t lid = 0;
  int port = 0;
};

// "{ CA Ports:01 … {desc} LID:00b5 PN:01 }" at the start of s; s keeps what follows.
LstEnd read_end(const LineReader& r, std::string_view& s, Oddities& odd) {
  s = trim(s);
  if (!s.starts_with("{")) r.fail("a link end in braces expected: " + excerpt(s));
  s.remove_prefix(1);
  LstEnd e;
  const std::string_view type = next_token(s);
  if (type == "SW")
    e.type = NodeType::sw;
  else if (type == "RT")
    e.type = NodeType::router;
  else if (type != "CA")
    r.fail("bad node type '" + excerpt(type) + "' (CA, SW or RT expected)");
  bool has_lid = false, has_port = false, has_ports = false, has_guid = false;
  while (true) {
    s = trim(s);
    if (s.empty()) r.fail("a link end without its closing brace");
    if (s[0] == '}') {
      s.remove_prefix(1);
      break;
    }
    if (s[0] == '{') {  // the description: it may hold braces, so it ends at "} LID:"
      const size_t e2 = s.find("} LID:");
      if (e2 == std::string_view::npos) r.fail("a node description without \"} LID:\" after it");
      e.desc = s.substr(1, e2 - 1);
      s = s.substr(e2 + 1);
      continue;
    }
    const std::string_view tok = next_token(s);
    const size_t colon = tok.find(':');
    if (colon == std::string_view::npos) r.fail("bad field '" + excerpt(tok) + "' (Key:value expected)");
    const std::string_view key = tok.substr(0, colon), value = tok.substr(colon + 1);
    if (key == "Ports") {
      e.ports = static_cast<int>(checked_uint(r, value, 16, 1, 254, "port count"));
      has_ports = true;
    } else if (key == "SystemGUID") {
      e.sysimg = checked_uint(r, value, 16, 0, UINT64_MAX, "system GUID");
    } else if (key == "NodeGUID") {
      e.node_guid = checked_uint(r, value, 16, 0, UINT64_MAX, "node GUID");
      has_guid = true;
    } else if (key == "PortGUID") {
      e.port_guid = checked_uint(r, value, 16, 0, UINT64_MAX, "port GUID");
    } else if (key == "LID") {
      uint64_t v = 0;
      if (parse_uint(value, 16, v) && v == kUnassignedLid)
        odd.note(Oddity::unassigned_lid, r.where(), tok);
      else
        e.lid = checked_uint(r, value, 16, 0, kMaxLid, "LID");
      has_lid = true;
    } else if (key == "PN") {
      e.port = static_cast<int>(checked_uint(r, value, 16, 1, 254, "port number"));
      has_port = true;
    }  // VenID, DevID, Rev: not kept
  }
  // Older ibdiagnet runs leave the description out: it stays empty.
  if (!has_lid || !has_port || !has_ports || !has_guid) r.fail("a link end without Ports, NodeGUID, LID and PN");
  if (e.port > e.ports)
    r.fail("port " + std::to_string(e.port) + " of a node with " + std::to_string(e.ports) + " ports");
  if (!e.port_guid) e.port_guid = e.node_guid;
  return e;
}

// "SPD=100": the lane's data rate in Gb/s, as ibdm prints it (FDR10 and EDR20 by name; EDR20,
// Mellanox's own, is not a speed ibroute knows: unknown).
std::string lane_of_spd(std::string_view spd) {
  static constexpr std::pair<std::string_view, std::string_view> kSpeeds[] = {
      {"2.5", "SDR"}, {"5", "DDR"},  {"10", "QDR"},  {"FDR10", "FDR10"}, {"14", "FDR"},
      {"25", "EDR"},  {"50", "HDR"}, {"100", "NDR"}, {"200", "XDR"}};
  for (const auto& [k, v] : kSpeeds)
    if (spd == k) return std::string(v);
  return {};
}

PortState state_of_log(std::string_view log) {
  if (log == "ACT") return PortState::active;
  if (log == "INI") return PortState::init;
  if (log == "ARM") return PortState::armed;
  if (log == "DWN" || log == "DOWN") return PortState::down;
  return PortState::unknown;
}

// The node of an end, made on first sight; a later sight must agree with it.
int node_of(Fabric& f, std::map<uint64_t, int>& by_guid, const LineReader& r, const LstEnd& e) {
  auto [it, added] = by_guid.emplace(e.node_guid, static_cast<int>(f.nodes.size()));
  if (added) {
    Node n;
    n.type = e.type;
    n.guid = e.node_guid;
    n.sysimg_guid = e.sysimg;
    n.desc = std::string(e.desc);
    n.ports.resize(e.ports + 1);
    if (n.is_switch()) {
      n.ports[0].guid = e.node_guid;
      n.ports[0].state = PortState::active;
      n.ports[0].base_lid = static_cast<uint16_t>(e.lid);
    }
    f.nodes.push_back(std::move(n));
  }
  Node& n = f.nodes[it->second];
  if (n.type != e.type || n.num_ports() != e.ports)
    r.fail("node " + guid_hex(e.node_guid) + " listed with another type or port count than before");
  if (n.is_switch() && n.ports[0].base_lid != e.lid)
    r.fail("switch " + guid_hex(e.node_guid) + " listed with two LIDs");
  Port& p = n.ports[e.port];
  p.guid = e.port_guid;
  if (!n.is_switch()) p.base_lid = static_cast<uint16_t>(e.lid);
  return it->second;
}

}  // namespace

bool looks_like_ibdiagnet_lst(std::string_view text) {
  const std::string_view line = first_data_line(text);
  return line.starts_with("{ CA ") || line.starts_with("{ SW ") || line.starts_with("{ RT ");
}

Fabric parse_ibdiagnet_lst(std::string_view text, std::string_view source_name) {
  LineReader r(text, source_name);
  Fabric f;
  Oddities odd;
  std::map<uint64_t, int> by_guid;

  // One cable a line.
  auto take_line = [&](std::string_view line) -> bool {
    const std::string_view l = trim(line);
    if (l.empty() || l[0] == '#') return false;
    std::string_view s = l;
    const LstEnd a = read_end(r, s, odd);
    const LstEnd b = read_end(r, s, odd);
    std::string_view phy, log, spd;
    for (std::string_view t = next_token(s); !t.empty(); t = next_token(s)) {
      if (t.starts_with("PHY="))
        phy = t.substr(4);
      else if (t.starts_with("LOG="))
        log = t.substr(4);
      else if (t.starts_with("SPD="))
        spd = t.substr(4);
    }
    const int ia = node_of(f, by_guid, r, a), ib = node_of(f, by_guid, r, b);
    Port& pa = f.nodes[ia].ports[a.port];
    Port& pb = f.nodes[ib].ports[b.port];
    if ((pa.connected() && (pa.peer_node != ib || pa.peer_port != b.port)) ||
        (pb.connected() && (pb.peer_node != ia || pb.peer_port != a.port)))
      r.fail("a port cabled to two places");
    const std::string lane = lane_of_spd(spd);
    uint64_t w = 0;
    const bool width_ok = phy.ends_with("x") && parse_uint(phy.substr(0, phy.size() - 1), 10, w) &&
                          is_link_width(static_cast<int64_t>(w));
    if (!width_ok || lane.empty())
      odd.note(Oddity::unknown_rate, r.where(), "PHY=" + std::string(phy) + " SPD=" + std::string(spd));
    for (Port* p : {&pa, &pb}) {
      if (width_ok) p->width = static_cast<uint8_t>(w);
      p->speed = lane;
      p->state = state_of_log(log);
    }
    f.link(ia, a.port, ib, b.port);
    return true;
  };
  const bool cut = read_records(r, odd, take_line, [](std::string_view l) { return l.starts_with("{"); });
  if (f.nodes.empty()) throw InputError(std::string(source_name) + ": no links found (not an ibdiagnet .lst?)");
  f.problems.push_back(
      {"no_lmc", 0, -1,
       std::string(source_name) + ": an ibdiagnet .lst carries no LMC and no uncabled ports: LMC taken as 0"});
  if (cut) {
    f.complete = false;
    f.problems.push_back({"topology_cut", 0, -1, r.where() + ": the file ends in the middle of a line (cut off?)"});
  }
  odd.add_to(f, r);
  return f;
}

}  // namespace ibroute::fabric
