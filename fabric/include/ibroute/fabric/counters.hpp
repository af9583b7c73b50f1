// The ports' own performance counters (PerfMgt class: PortCounters, PortCountersExtended): what a
// port sent and received, how long it waited for credits (PortXmitWait: congestion, measured) and
// its error counters. Snapshots are read live (live_scan.hpp: read_counters) and kept in the
// database; what a run or an acceptance test reports is the change between two of them. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ibroute::fabric {

enum class Counter : uint8_t {
  xmit_data,
  rcv_data,
  xmit_pkts,
  rcv_pkts,
  xmit_wait,  // data in units of 4 octets, wait in ticks
  symbol_errors,
  link_recovers,
  link_downed,
  rcv_errors,
  rcv_remote_phys_errors,
  rcv_switch_relay_errors,
  xmit_discards,
  xmit_constraint_errors,
  rcv_constraint_errors,
  local_link_integrity_errors,
  excessive_buffer_overrun_errors,
  vl15_dropped,
};
constexpr size_t kCounters = 17;

struct CounterInfo {
  std::string_view name;  // as the database column and --json name it: "symbol_errors"
  std::string_view ib;    // as the specification (and perfquery) names it: "SymbolErrorCounter"
  int bits;               // width in PortCounters (the data and packet counts: 64 in PortCountersExtended)
  bool error;             // an error counter (any rise is a fault)
};
const CounterInfo& counter_info(Counter c);
const CounterInfo& counter_info(size_t i);

// One port's counters at one moment. `extended`: the data and packet counts came from
// PortCountersExtended (64 bits), else from PortCounters (32 bits, saturating).
struct PortSample {
  int32_t node = -1;  // node index in the scan
  int port = 0;
  bool extended = false;
  std::array<uint64_t, kCounters> v{};
  bool operator==(const PortSample&) const = default;
};

// A port's link as its PortInfo told at the reading (SubnGet, LID-routed). PortState: 1 Down,
// 2 Initialize, 3 Armed, 4 Active. PortPhysicalState: 1 Sleep, 2 Polling, 3 Disabled,
// 4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest.
struct PortLinkState {
  int32_t node = -1;
  int port = 0;
  uint8_t state = 0, physical = 0;
  bool operator==(const PortLinkState&) const = default;
};

// The counters of one snapshot, and the ports that did not answer or lack extended counters.
// `states` and `carried` are for the monitoring formats and never stored.
struct CounterSnapshot {
  std::vector<PortSample> ports;                     // ordered by (node, port)
  std::vector<std::pair<int32_t, int>> unanswered;   // (node, port) that gave no PortCounters
  std::vector<std::pair<int32_t, int>> no_extended;  // (node, port) whose counters are 32 bits only
  std::vector<PortLinkState> states;                 // ports whose PortInfo answered (when asked), by (node, port)
  std::vector<PortSample> carried;  // unanswered ports: their counters as last read before, by (node, port)
};

// Width of counter c of a sample (the data and packet counts are 64 bits where extended).
int counter_bits(Counter c, bool extended);

// The change of one counter between two readings of `bits` width. A reading that went back
// wrapped (or was reset by another tool): the change is taken modulo 2^bits and `wrapped` set. A
// reading at the counter's maximum has stopped counting (PortCounters saturate): the change is at
// least the value given, `saturated` set.
struct CounterChange {
  uint64_t delta = 0;
  bool wrapped = false, saturated = false;
};
CounterChange counter_change(uint64_t before, uint64_t after, int bits);

// The change of every counter of a port present in both snapshots (by node and port).
struct PortDelta {
  int32_t node = -1;
  int port = 0;
  std::array<uint64_t, kCounters> delta{};
  std::array<uint64_t, kCounters> now{};  // the absolute value in `after`
  uint32_t wrapped = 0, saturated = 0;    // bit per Counter
  uint64_t errors() const;                // sum of the error counters' changes
};
std::vector<PortDelta> counter_deltas(const CounterSnapshot& before, const CounterSnapshot& after);

}  // namespace ibroute::fabric
