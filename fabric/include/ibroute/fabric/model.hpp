// The fabric model: nodes, ports, links, LIDs (base LID + LMC) and switch forwarding tables.
// A plain value: built by the live scan, the text import, the database or a test, never by I/O here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibroute::fabric {

enum class NodeType : uint8_t { ca = 1, sw = 2, router = 3 };
// IB PortState values (IBA 14.2.5.6); `unknown` where the source does not say.
enum class PortState : uint8_t { unknown = 0, down = 1, init = 2, armed = 3, active = 4 };

constexpr uint8_t kNoRoute = 0xFF;  // LFT entry "no route" (IBA: port 255 drops the packet)
constexpr int kMaxLid = 0xBFFF;     // last unicast LID

std::string_view to_string(NodeType t);
std::string_view to_string(PortState s);
std::optional<NodeType> node_type_from(std::string_view s);
std::optional<PortState> port_state_from(std::string_view s);

struct Port {
  uint64_t guid = 0;
  uint16_t base_lid = 0;  // CA ports and switch port 0; 0 for switch external ports
  uint8_t lmc = 0;
  PortState state = PortState::unknown;
  uint8_t width = 0;       // active lanes: 1, 2, 4, 8, 12; 0 = unknown
  std::string speed;       // lane speed name: SDR DDR QDR FDR10 FDR EDR HDR NDR; empty = unknown
  int32_t peer_node = -1;  // index into Fabric::nodes, -1 = not connected
  uint8_t peer_port = 0;

  bool connected() const { return peer_node >= 0; }
  uint32_t lid_count() const { return 1u << lmc; }
  bool owns_lid(uint32_t lid) const { return base_lid != 0 && lid >= base_lid && lid < base_lid + lid_count(); }
};

// What a node is for the fabric's users: only hosts take part in traffic patterns and plans.
// SHARP aggregation nodes are CAs to the subnet manager but live inside a switch.
enum class NodeKind : uint8_t { host, switch_asic, router, aggregation };

struct Node {
  NodeType type = NodeType::ca;
  uint64_t guid = 0;
  uint64_t sysimg_guid = 0;  // system image GUID: the ASICs of one chassis share it; 0 = unknown
  std::string desc;          // the name every output uses: node-name map, else the node's description
                             // (switches made unique with their GUID where descriptions repeat)
  std::string node_desc;     // the description the node itself reported; empty = same as desc
  std::vector<Port> ports;   // indexed by port number; ports[0] is the switch management port
  std::vector<uint8_t> lft;  // switches: out port by DLID (index = LID), kNoRoute where none
  bool lft_read = false;     // switches: false when the LFT could not be read (scan incomplete)
  // Switches: the LIDs from here on have no row read (a dump cut after the row of LID
  // lft_rows_to - 1): their routes are unknown, the LIDs below known. kAllRows: every LID.
  static constexpr uint32_t kAllRows = UINT32_MAX;
  uint32_t lft_rows_to = kAllRows;
  // Whether the table says where `lid` goes (a row read, or known to have none).
  bool lft_known(uint32_t lid) const { return lft_read && lid < lft_rows_to; }

  bool is_switch() const { return type == NodeType::sw; }
  const std::string& reported_desc() const { return node_desc.empty() ? desc : node_desc; }
  int num_ports() const { return ports.empty() ? 0 : static_cast<int>(ports.size()) - 1; }
  // The port that carries the node's LID(s): port 0 of a switch; for a CA the caller picks.
  const Port& mgmt_port() const { return ports.at(0); }
};

// Something the scan could not do or found wrong: kept with the scan, so a partial fabric never
// looks complete.
struct Problem {
  std::string kind;  // e.g. "unanswered_port", "lft_read_failed", "lid_conflict"
  uint64_t node_guid = 0;
  int port = -1;
  std::string detail;
};

struct Fabric {
  std::vector<Node> nodes;
  std::vector<Problem> problems;
  bool complete = true;  // false when any part of the fabric was not read
  bool has_lfts = true;  // false for a topology imported without forwarding tables: routes unknown

  // Connect a.pa <-> b.pb in both directions.
  void link(int a, int pa, int b, int pb);
  std::optional<int> find_guid(uint64_t node_or_port_guid) const;
  uint8_t max_lmc() const;
};

// Which (node, port) owns each LID; built once per fabric, O(max LID).
struct LidOwner {
  int32_t node = -1;
  uint8_t port = 0;
};
class LidMap {
 public:
  explicit LidMap(const Fabric& f);
  const LidOwner* owner(uint32_t lid) const {
    return lid < owners_.size() && owners_[lid].node >= 0 ? &owners_[lid] : nullptr;
  }
  // All LIDs owned by some port, ascending.
  const std::vector<uint16_t>& lids() const { return lids_; }
  // LIDs claimed by two ports: (lid, first owner, second owner).
  struct Conflict {
    uint16_t lid;
    LidOwner a, b;
  };
  const std::vector<Conflict>& conflicts() const { return conflicts_; }

 private:
  std::vector<LidOwner> owners_;
  std::vector<uint16_t> lids_;
  std::vector<Conflict> conflicts_;
};

// The node's kind: switches and routers by type; a CA is an aggregation node when it says so
// ("Mellanox Technologies Aggregation Node", SHARP) — they hang off a switch like a host but send
// no traffic of their own.
NodeKind node_kind(const Node& n);
bool is_host(const Node& n);
std::string_view to_string(NodeKind k);

// GUID -> name, as infiniband-diags' node-name map gives it.
using NodeNameMap = std::vector<std::pair<uint64_t, std::string>>;
// Sets every node's display name (desc): the map's name where it has one, else the reported
// description; switches whose names repeat get their GUID appended. Keeps the reported
// description in node_desc where it differs.
void assign_display_names(Fabric& f, const NodeNameMap& names);

// "4xEDR" -> width 4, speed "EDR"; nullopt when malformed.
struct WidthSpeed {
  uint8_t width;
  std::string speed;
};
std::optional<WidthSpeed> parse_width_speed(std::string_view s);
std::string format_width_speed(uint8_t width, std::string_view speed);
// The link widths InfiniBand knows: 1x, 2x (split ports), 4x, 8x, 12x.
constexpr bool is_link_width(int64_t lanes) {
  return lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 12;
}
// Data rate of one lane in Gb/s (after encoding), 0 for unknown names.
double lane_gbps(std::string_view speed);
// PortInfo's LinkWidthActive (one bit per width: 1 1x, 2 4x, 4 8x, 8 12x, 16 2x) as lanes; 0 unknown.
uint8_t lanes_of_width_mask(uint64_t mask);

std::string guid_hex(uint64_t guid);  // "0x0002c90200421930"
// Text for HTML and SVG (the acceptance report, the link matrix): & < > " ' as entities, control
// characters dropped (XML allows none of them in text).
std::string markup_escape(std::string_view text);
// Names in the order people count: digit runs as numbers ("ibswitch2" before "ibswitch10").
bool natural_less(const std::string& a, const std::string& b);

}  // namespace ibroute::fabric
