// A schedule: hosts in rank order and, per phase, each rank's transfer (destination rank and the
// DLID that picks its path). Plain values; the planner makes them, the formats read and write them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ibroute::schedule {

struct Host {
  int32_t node;  // index into Fabric::nodes
  uint8_t port;
  std::string name;
  bool operator==(const Host&) const = default;
};

// Transfers of one phase, indexed by source rank: rank i sends to dst[i] over DLID dlid[i].
// dst[i] == -1: rank i sends nothing in this phase.
struct Phase {
  std::vector<int32_t> dst;
  std::vector<uint16_t> dlid;
  bool operator==(const Phase&) const = default;
};

struct Timing {
  uint64_t message_size = 0;  // bytes per transfer
  double rate = 0;            // bytes per second each node sends
  double slot_s = 0;          // time from one phase's start to the next's
  bool operator==(const Timing&) const = default;
};

struct Schedule {
  std::string name;
  std::vector<Host> hosts;
  std::vector<Phase> phases;
  std::string method;  // which planner made it ("structure", "free", or a pattern name)
  int bound = 0;       // concurrent transfers a regular link direction may carry
  Timing timing;
};

// How a schedule file names a host: by port GUID, with the LIDs it was planned for.
struct HostIdentity {
  std::string name;
  uint64_t node_guid = 0, port_guid = 0;
  uint16_t base_lid = 0;
  uint8_t lmc = 0;
  bool operator==(const HostIdentity&) const = default;
};

// The fabric a schedule was planned for.
struct FabricRef {
  int64_t scan_id = 0;
  std::string scan_started_at;
  uint8_t lmc = 0;
  bool operator==(const FabricRef&) const = default;
};

// A schedule as exchanged with peers: hosts by identity, not by index into some scan.
struct ScheduleDoc {
  Schedule schedule;  // hosts[].node/port are -1 until resolved against a fabric
  std::vector<HostIdentity> identities;
  FabricRef fabric;
  std::string created_at;
};

// Phase k (k = 1 .. N-1): rank i sends to rank (i + k) mod N. Every ordered pair once, every
// phase a permutation. DLIDs are left 0.
std::vector<Phase> shift_phases(size_t n);

}  // namespace ibroute::schedule
