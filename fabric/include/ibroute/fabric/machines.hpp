// Machines and rails: a DGX-class machine carries several HCAs, each on its own rail, and admins
// count machines, not HCAs. A host CA belongs to the machine its description names when the
// description is "MACHINE DEVICE" (two words, the device a name ending in a digit: "HCA-3",
// "mlx5_7", "ibp24s0"), as the kernel's default node description writes it, or one word (a
// machine's name from a node-name map). Anything else — the adapter's own default ("MT4129
// ConnectX7   Mellanox Technologies"), "localhost HCA-6" — names no machine: such an HCA is counted apart ("machine not
// known"), never guessed into one. A machine's rails are its HCAs in the natural order of their device names (HCA-2
// before HCA-10).
#pragma once

#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

struct Machine {
  std::string name;
  std::vector<int32_t> hcas;  // node indices, rail 0 first
};

struct Machines {
  std::vector<Machine> machines;  // in natural order of their names
  std::vector<int32_t> unnamed;   // host CAs whose description names no machine
  // Per node: the machine's index and the rail, -1 for nodes that are not a named machine's HCA.
  std::vector<int32_t> machine_of, rail_of;
  int max_rails() const;
  // How many machines have k HCAs, for k = 1 .. max_rails().
  std::vector<int> machines_by_hcas() const;
};

// The machine and device a host's description names, or false (see above).
bool split_machine_name(std::string_view desc, std::string& machine, std::string& device);

// The machines of the fabric's hosts (node_kind host: SHARP nodes, switches, routers are none).
Machines group_machines(const Fabric& f);

// A rail-optimised leaf group (DGX SuperPOD style): leaf k carries rail k of every one of the
// group's machines. Found from the cabling alone: machines whose HCAs sit on the same set of
// switches, one HCA to a switch, at least two machines alike, no switch shared with another such
// set. The rail order is the one most of the group's machines follow; the others are "crossed"
// (their HCAs in device order reach the leaves in another order: rail-aligned traffic crosses).
struct RailGroup {
  std::vector<int32_t> leaves;    // the switch of rail 0, rail 1, ...
  std::vector<int32_t> machines;  // indices into Machines::machines
  int crossed = 0;                // machines whose rails reach the leaves in another order
};
std::vector<RailGroup> rail_groups(const Fabric& f, const Machines& m);

// "32 machines with 8 HCAs each (8 rails)" or "30 machines: 28 with 8 HCAs, 2 with 7", then
// "; 69 HCAs name no machine (e.g. 'MT4129 ConnectX7 ...')" where some do; "" with no hosts.
std::string describe_machines(const Fabric& f, const Machines& m);

}  // namespace ibroute::fabric
