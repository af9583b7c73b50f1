#include "ibroute/fabric/model.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <unordered_map>

namespace ibroute::fabric {

namespace {
constexpr std::array<std::string_view, 4> kNodeTypes{"?", "ca", "switch", "router"};
constexpr std::array<std::string_view, 5> kPortStates{"unknown", "down", "init", "armed", "active"};
struct Lane {
  std::string_view name;
  double gbps;
};
// Effective data rate per lane after line encoding (8b/10b up to QDR, 64b/66b after).
constexpr std::array<Lane, 9> kLanes{{{"SDR", 2.0},
                                      {"DDR", 4.0},
                                      {"QDR", 8.0},
                                      {"FDR10", 10.0},
                                      {"FDR", 13.64},
                                      {"EDR", 25.0},
                                      {"HDR", 50.0},
                                      {"NDR", 100.0},
                                      {"XDR", 200.0}}};
constexpr std::array<std::string_view, 4> kKinds{"host", "switch", "router", "aggregation"};
}  // namespace

std::string_view to_string(NodeType t) { return kNodeTypes.at(static_cast<size_t>(t)); }
std::string_view to_string(PortState s) { return kPortStates.at(static_cast<size_t>(s)); }

NodeKind node_kind(const Node& n) {
  if (n.type == NodeType::sw) return NodeKind::switch_asic;
  if (n.type == NodeType::router) return NodeKind::router;
  if (n.reported_desc().find("Aggregation Node") != std::string::npos) return NodeKind::aggregation;
  return NodeKind::host;
}
bool is_host(const Node& n) { return node_kind(n) == NodeKind::host; }
std::string_view to_string(NodeKind k) { return kKinds.at(static_cast<size_t>(k)); }

void assign_display_names(Fabric& f, const NodeNameMap& names) {
  std::unordered_map<uint64_t, const std::string*> by_guid;
  for (const auto& [g, name] : names) by_guid.emplace(g, &name);
  std::unordered_map<std::string, int> switch_names;
  for (Node& n : f.nodes) {
    std::string reported = n.reported_desc();
    auto it = by_guid.find(n.guid);
    n.desc = it != by_guid.end() ? *it->second : reported;
    n.node_desc = n.desc == reported ? std::string() : reported;
    if (n.type != NodeType::ca) ++switch_names[n.desc];
  }
  for (Node& n : f.nodes)
    if (n.type != NodeType::ca && switch_names[n.desc] > 1) {
      if (n.node_desc.empty()) n.node_desc = n.desc;
      n.desc += " (" + guid_hex(n.guid) + ")";
    }
}

std::optional<NodeType> node_type_from(std::string_view s) {
  for (size_t i = 1; i < kNodeTypes.size(); ++i)
    if (kNodeTypes[i] == s) return static_cast<NodeType>(i);
  return std::nullopt;
}
std::optional<PortState> port_state_from(std::string_view s) {
  for (size_t i = 0; i < kPortStates.size(); ++i)
    if (kPortStates[i] == s) return static_cast<PortState>(i);
  return std::nullopt;
}

void Fabric::link(int a, int pa, int b, int pb) {
  Port& x = nodes.at(a).ports.at(pa);
  Port& y = nodes.at(b).ports.at(pb);
  x.peer_node = b;
  x.peer_port = static_cast<uint8_t>(pb);
  y.peer_node = a;
  y.peer_port = static_cast<uint8_t>(pa);
}

std::optional<int> Fabric::find_guid(uint64_t guid) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].guid == guid) return static_cast<int>(i);
    for (const Port& p : nodes[i].ports)
      if (p.guid == guid) return static_cast<int>(i);
  }
  return std::nullopt;
}

uint8_t Fabric::max_lmc() const {
  uint8_t m = 0;
  for (const Node& n : nodes)
    for (const Port& p : n.ports) m = std::max(m, p.lmc);
  return m;
}

LidMap::LidMap(const Fabric& f) {
  for (size_t ni = 0; ni < f.nodes.size(); ++ni) {
    const Node& n = f.nodes[ni];
    for (size_t pi = 0; pi < n.ports.size(); ++pi) {
      const Port& p = n.ports[pi];
      if (p.base_lid == 0 || (n.is_switch() && pi != 0)) continue;
      for (uint32_t l = p.base_lid; l < p.base_lid + p.lid_count() && l <= kMaxLid; ++l) {
        if (owners_.size() <= l) owners_.resize(l + 1);
        LidOwner mine{static_cast<int32_t>(ni), static_cast<uint8_t>(pi)};
        if (owners_[l].node >= 0) {
          conflicts_.push_back({static_cast<uint16_t>(l), owners_[l], mine});
          continue;
        }
        owners_[l] = mine;
      }
    }
  }
  for (size_t l = 1; l < owners_.size(); ++l)
    if (owners_[l].node >= 0) lids_.push_back(static_cast<uint16_t>(l));
}

std::optional<WidthSpeed> parse_width_speed(std::string_view s) {
  size_t x = s.find('x');
  if (x == 0 || x == std::string_view::npos || x + 1 >= s.size()) return std::nullopt;
  if (x > 2) return std::nullopt;  // widths have one or two digits (a longer run would overflow)
  int w = 0;
  for (char c : s.substr(0, x)) {
    if (c < '0' || c > '9') return std::nullopt;
    w = w * 10 + (c - '0');
  }
  std::string_view sp = s.substr(x + 1);
  if (!is_link_width(w) || lane_gbps(sp) == 0) return std::nullopt;
  return WidthSpeed{static_cast<uint8_t>(w), std::string(sp)};
}

std::string format_width_speed(uint8_t width, std::string_view speed) {
  if (width == 0 && speed.empty()) return "?";
  return (width ? std::to_string(width) : std::string("?")) + "x" + (speed.empty() ? "?" : std::string(speed));
}

uint8_t lanes_of_width_mask(uint64_t mask) {
  switch (mask) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}

double lane_gbps(std::string_view speed) {
  for (const Lane& l : kLanes)
    if (l.name == speed) return l.gbps;
  return 0;
}

std::string guid_hex(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::string markup_escape(std::string_view text) {
  std::string o;
  o.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) o += c;
    }
  }
  return o;
}

}  // namespace ibroute::fabric
