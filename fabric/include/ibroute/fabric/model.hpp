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
  uint8_t width = 0;      // active lanes: 1, 2, 4, 8, 12; 0 = unknown
  std::string speed;      // lane speed name: SDR DDR QDR FDR10 FDR EDR HDR NDR; empty = unknown
  int32_t peer_node = -1; // index into Fabric::nodes, -1 = not connected
  uint8_t peer_port = 0;

  bool connected() const { return peer_node >= 0; }
  uint32_t lid_count() const { return 1u << lmc; }
  bool owns_lid(uint32_t lid) const { return base_lid != 0 && lid >= base_lid && lid < base_lid + lid_count(); }
};

struct Node {
  NodeType type = NodeType::ca;
  uint64_t guid = 0;
  std::string desc;
  std::vector<Port> ports;   // indexed by port number; ports[0] is the switch management port
  std::vector<uint8_t> lft;  // switches: out port by DLID (index = LID), kNoRoute where none
  bool lft_read = false;     // switches: false when the LFT could not be read (scan incomplete)

  bool is_switch() const { return type == NodeType::sw; }
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
  struct Conflict { uint16_t lid; LidOwner a, b; };
  const std::vector<Conflict>& conflicts() const { return conflicts_; }

 private:
  std::vector<LidOwner> owners_;
  std::vector<uint16_t> lids_;
  std::vector<Conflict> conflicts_;
};

// "4xEDR" -> width 4, speed "EDR"; nullopt when malformed.
struct WidthSpeed { uint8_t width; std::string speed; };
std::optional<WidthSpeed> parse_width_speed(std::string_view s);
std::string format_width_speed(uint8_t width, std::string_view speed);
// Data rate of one lane in Gb/s (after encoding), 0 for unknown names.
double lane_gbps(std::string_view speed);

std::string guid_hex(uint64_t guid);  // "0x0002c90200421930"

}  // namespace ibroute::fabric
