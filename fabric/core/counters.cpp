#include "ibroute/fabric/counters.hpp"

#include <algorithm>

namespace ibroute::fabric {

namespace {
// Names and widths as IBA vol. 1, 16.1.3.5 (PortCounters) gives them.
constexpr CounterInfo kInfo[kCounters] = {
    {"xmit_data", "PortXmitData", 32, false},
    {"rcv_data", "PortRcvData", 32, false},
    {"xmit_pkts", "PortXmitPkts", 32, false},
    {"rcv_pkts", "PortRcvPkts", 32, false},
    {"xmit_wait", "PortXmitWait", 32, false},
    {"symbol_errors", "SymbolErrorCounter", 16, true},
    {"link_recovers", "LinkErrorRecoveryCounter", 8, true},
    {"link_downed", "LinkDownedCounter", 8, true},
    {"rcv_errors", "PortRcvErrors", 16, true},
    {"rcv_remote_phys_errors", "PortRcvRemotePhysicalErrors", 16, true},
    {"rcv_switch_relay_errors", "PortRcvSwitchRelayErrors", 16, true},
    {"xmit_discards", "PortXmitDiscards", 16, true},
    {"xmit_constraint_errors", "PortXmitConstraintErrors", 8, true},
    {"rcv_constraint_errors", "PortRcvConstraintErrors", 8, true},
    {"local_link_integrity_errors", "LocalLinkIntegrityErrors", 4, true},
    {"excessive_buffer_overrun_errors", "ExcessiveBufferOverrunErrors", 4, true},
    {"vl15_dropped", "VL15Dropped", 16, true},
};
}  // namespace

const CounterInfo& counter_info(size_t i) { return kInfo[i]; }
const CounterInfo& counter_info(Counter c) { return kInfo[static_cast<size_t>(c)]; }

int counter_bits(Counter c, bool extended) {
  const bool wide =
      c == Counter::xmit_data || c == Counter::rcv_data || c == Counter::xmit_pkts || c == Counter::rcv_pkts;
  return wide && extended ? 64 : counter_info(c).bits;
}

CounterChange counter_change(uint64_t before, uint64_t after, int bits) {
  const uint64_t max = bits >= 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  CounterChange c;
  c.delta = (after - before) & max;  // modulo 2^bits: also right across a wrap
  c.wrapped = after < before;
  c.saturated = after == max && bits < 64;
  return c;
}

uint64_t PortDelta::errors() const {
  uint64_t sum = 0;
  for (size_t i = 0; i < kCounters; ++i)
    if (kInfo[i].error) sum += delta[i];
  return sum;
}

std::vector<PortDelta> counter_deltas(const CounterSnapshot& before, const CounterSnapshot& after) {
  std::vector<PortDelta> out;
  auto key = [](const PortSample& s) { return std::pair(s.node, s.port); };
  for (const PortSample& a : after.ports) {
    auto it = std::lower_bound(before.ports.begin(), before.ports.end(), key(a),
                               [&](const PortSample& s, const std::pair<int32_t, int>& k) { return key(s) < k; });
    if (it == before.ports.end() || key(*it) != key(a)) continue;
    PortDelta d;
    d.node = a.node, d.port = a.port, d.now = a.v;
    // A port that gained or lost extended counters between the two: compare at the narrower width.
    const bool extended = a.extended && it->extended;
    for (size_t i = 0; i < kCounters; ++i) {
      const int bits = counter_bits(static_cast<Counter>(i), extended);
      const uint64_t mask = bits >= 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
      const CounterChange c = counter_change(it->v[i] & mask, a.v[i] & mask, bits);
      d.delta[i] = c.delta;
      if (c.wrapped) d.wrapped |= 1u << i;
      if (c.saturated) d.saturated |= 1u << i;
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace ibroute::fabric
