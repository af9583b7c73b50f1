// Parser for ibnetdiscover's topology output (the format of infiniband-diags' ibnetdiscover(8)):
//   switchguid=0x20000b(20000b)
//   Switch  12 "S-000000000020000b"   # "ibswitch12" base port 0 lid 48 lmc 0
//   [1]     "H-0000000000100008"[1](100009)   # "node1-024" lid 36 4xEDR
//   Ca      1 "H-0000000000100060"   # "node1-037"
//   [1](100061)  "S-000000000020000b"[8]   # lid 228 lmc 2 "ibswitch12" lid 48 4xEDR
#include <charconv>
#include <map>
#include <regex>
#include <string>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/text_import.hpp"

namespace ibroute::fabric {

namespace {

uint64_t hex_u64(std::string_view s) {
  if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) throw InputError("bad hex number '" + std::string(s) + "'");
  return v;
}

// "S-000000000020000b" -> 0x20000b; node ids of other tools may not carry a GUID.
std::optional<uint64_t> guid_from_id(const std::string& id) {
  if (id.size() > 2 && id[1] == '-' && (id[0] == 'S' || id[0] == 'H' || id[0] == 'R')) {
    try {
      return hex_u64(id.substr(2));
    } catch (const InputError&) {
    }
  }
  return std::nullopt;
}

struct PendingLink {
  int node, port;
  std::string remote_id;
  int remote_port;
  uint64_t remote_port_guid;
  size_t line;
};

}  // namespace

Fabric parse_ibnetdiscover(std::string_view text, std::string_view source_name) {
  static const std::regex header(R"re(^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"(.*)"(.*))?$)re");
  static const std::regex port_line(
      R"re(^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*(?:#(.*))?$)re");
  static const std::regex lid_lmc(R"re(lid\s+(\d+)\s+lmc\s+(\d+))re");
  static const std::regex width_speed(R"re((\d+x[A-Z0-9]+)\s*$)re");

  Fabric f;
  std::map<std::string, int> by_id;
  std::vector<PendingLink> links;
  uint64_t pending_guid = 0;
  int cur = -1;
  size_t lineno = 0;
  auto fail = [&](const std::string& what) {
    throw InputError(std::string(source_name) + ":" + std::to_string(lineno) + ": " + what);
  };

  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string line(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++lineno;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty()) {
      cur = -1;
      continue;
    }
    if (line[0] == '#') continue;
    std::smatch m;
    if (line.starts_with("switchguid=") || line.starts_with("caguid=") || line.starts_with("routerguid=")) {
      std::string v = line.substr(line.find('=') + 1);
      pending_guid = hex_u64(v.substr(0, v.find('(')));
      continue;
    }
    if (line.find('=') != std::string::npos && line[0] != '[') continue;  // vendid=, devid=, sysimgguid=
    if (std::regex_match(line, m, header)) {
      Node n;
      n.type = m[1] == "Switch" ? NodeType::sw : m[1] == "Ca" ? NodeType::ca : NodeType::router;
      int nports = std::stoi(m[2]);
      if (nports < 1 || nports > 254) fail("bad port count " + m[2].str());
      std::string id = m[3];
      if (by_id.count(id)) fail("node \"" + id + "\" defined twice");
      auto g = pending_guid ? std::optional<uint64_t>(pending_guid) : guid_from_id(id);
      if (!g) fail("no GUID for node \"" + id + "\"");
      n.guid = *g;
      pending_guid = 0;
      n.desc = m[4].matched ? m[4].str() : id;
      n.ports.resize(nports + 1);
      if (n.is_switch()) {
        n.ports[0].guid = n.guid;
        n.ports[0].state = PortState::active;
        std::smatch lm;
        std::string rest = m[5];
        if (std::regex_search(rest, lm, lid_lmc)) {
          n.ports[0].base_lid = static_cast<uint16_t>(std::stoi(lm[1]));
          n.ports[0].lmc = static_cast<uint8_t>(std::stoi(lm[2]));
        }
      }
      cur = static_cast<int>(f.nodes.size());
      by_id[id] = cur;
      f.nodes.push_back(std::move(n));
      continue;
    }
    if (std::regex_match(line, m, port_line)) {
      if (cur < 0) fail("port line outside a node record");
      Node& n = f.nodes[cur];
      int p = std::stoi(m[1]);
      if (p < 1 || p > n.num_ports()) fail("port " + m[1].str() + " out of range for \"" + n.desc + "\"");
      Port& port = n.ports[p];
      port.guid = m[2].matched ? hex_u64(m[2].str()) : n.is_switch() ? n.guid : 0;
      std::string comment = m[6].matched ? m[6].str() : "";
      std::smatch cm;
      if (!n.is_switch() && std::regex_search(comment, cm, lid_lmc)) {
        port.base_lid = static_cast<uint16_t>(std::stoi(cm[1]));
        port.lmc = static_cast<uint8_t>(std::stoi(cm[2]));
      }
      if (std::regex_search(comment, cm, width_speed)) {
        if (auto ws = parse_width_speed(cm[1].str())) {
          port.width = ws->width;
          port.speed = ws->speed;
        }
      }
      links.push_back({cur, p, m[3], std::stoi(m[4]), m[5].matched ? hex_u64(m[5].str()) : 0, lineno});
      continue;
    }
    fail("cannot parse: " + line.substr(0, 80));
  }

  for (const PendingLink& l : links) {
    auto it = by_id.find(l.remote_id);
    if (it == by_id.end()) {
      lineno = l.line;
      fail("link to node \"" + l.remote_id + "\" that the file does not define (truncated file?)");
    }
    Node& r = f.nodes[it->second];
    if (l.remote_port < 1 || l.remote_port > r.num_ports()) {
      lineno = l.line;
      fail("link to port " + std::to_string(l.remote_port) + " of \"" + r.desc + "\" which has " +
           std::to_string(r.num_ports()) + " ports");
    }
    Port& rp = r.ports[l.remote_port];
    if (rp.connected() && (rp.peer_node != l.node || rp.peer_port != l.port)) {
      lineno = l.line;
      fail("\"" + r.desc + "\" port " + std::to_string(l.remote_port) + " is cabled to two places");
    }
    if (l.remote_port_guid && !rp.guid) rp.guid = l.remote_port_guid;
    f.link(l.node, l.port, it->second, l.remote_port);
  }
  for (Node& n : f.nodes)
    for (size_t i = 1; i < n.ports.size(); ++i)
      if (n.ports[i].connected()) n.ports[i].state = PortState::unknown;
  if (f.nodes.empty()) throw InputError(std::string(source_name) + ": no nodes found (not ibnetdiscover output?)");
  return f;
}

}  // namespace ibroute::fabric
