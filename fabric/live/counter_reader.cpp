// Performance counters of every switch port and host port by PerfMgt Get over LID routes (GSI,
// QP1), with a window of MADs in flight as the LFT reader keeps (perfquery asks port by port and
// waits for each answer). First ClassPortInfo of each PMA (a switch's, or each host port's) for
// whether it has PortCountersExtended, then PortCounters of every port and, where it has them,
// PortCountersExtended. Never resets a counter: the monitoring owns them. The window of queries
// in flight is mad_window.cpp's, as for the LFTs.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "ibroute/fabric/counters.hpp"
#include "live_internal.hpp"

namespace ibroute::fabric {

namespace {

struct MadPortCloser {
  void operator()(ibmad_port* p) const { mad_rpc_close_port(p); }
};

// CapabilityMask bits of the PerfMgt ClassPortInfo (IBA 16.1.3.1; perfquery's IB_PM_*).
constexpr uint16_t kExtWidth = 1u << 9, kExtWidthNoIetf = 1u << 10;

struct Ask {
  int32_t node;
  int port;      // the port counted (PortSelect); for ClassPortInfo the port whose LID is asked
  uint16_t lid;  // where the PMA answers: a switch's LID, a host port's own
  unsigned attr;
};

// Sends every request of `todo` (mad_window.cpp); `answer(ask, data)` gets the data of each good
// answer; requests without one are left out.
template <typename Answer>
void windowed(ibmad_port* port, const std::vector<Ask>& todo, const LiveScanOptions& opt, Answer answer) {
  live::send_windowed(
      port, IB_PERFORMANCE_CLASS, IB_MAD_STATUS_F, todo.size(), opt, "counters",
      [&](size_t i, ib_rpc_t& rpc, ib_portid_t& dest, uint8_t* payload) {
        const Ask& a = todo[i];
        rpc.attr.id = a.attr;
        rpc.datasz = IB_PC_DATA_SZ;
        rpc.dataoffs = IB_PC_DATA_OFFS;
        dest.lid = a.lid;
        dest.qp = 1;
        dest.qkey = IB_DEFAULT_QP1_QKEY;
        if (a.attr == IB_GSI_PORT_COUNTERS) mad_set_field(payload, 0, IB_PC_PORT_SELECT_F, static_cast<uint32_t>(a.port));
        if (a.attr == IB_GSI_PORT_COUNTERS_EXT) mad_set_field(payload, 0, IB_PC_EXT_PORT_SELECT_F, static_cast<uint32_t>(a.port));
      },
      [&](size_t i, uint8_t* mad) { answer(todo[i], mad + IB_PC_DATA_OFFS); }, [](size_t) {});
}

// PortCountersExtended's 64-bit data and packet counts into the sample.
void extended_counts(PortSample& s, uint8_t* d) {
  auto put = [&](Counter c, uint64_t v) { s.v[static_cast<size_t>(c)] = v; };
  put(Counter::xmit_data, mad_get_field64(d, 0, IB_PC_EXT_XMT_BYTES_F));
  put(Counter::rcv_data, mad_get_field64(d, 0, IB_PC_EXT_RCV_BYTES_F));
  put(Counter::xmit_pkts, mad_get_field64(d, 0, IB_PC_EXT_XMT_PKTS_F));
  put(Counter::rcv_pkts, mad_get_field64(d, 0, IB_PC_EXT_RCV_PKTS_F));
}

// PortCounters into the sample: the wait and error counters, and the 32-bit data and packet
// counts when `counts` (no extended ones for this port).
void port_counters(PortSample& s, uint8_t* d, bool counts) {
  auto put = [&](Counter c, uint64_t v) { s.v[static_cast<size_t>(c)] = v; };
  if (counts) {
    put(Counter::xmit_data, mad_get_field(d, 0, IB_PC_XMT_BYTES_F));
    put(Counter::rcv_data, mad_get_field(d, 0, IB_PC_RCV_BYTES_F));
    put(Counter::xmit_pkts, mad_get_field(d, 0, IB_PC_XMT_PKTS_F));
    put(Counter::rcv_pkts, mad_get_field(d, 0, IB_PC_RCV_PKTS_F));
  }
  put(Counter::xmit_wait, mad_get_field(d, 0, IB_PC_XMT_WAIT_F));
  put(Counter::symbol_errors, mad_get_field(d, 0, IB_PC_ERR_SYM_F));
  put(Counter::link_recovers, mad_get_field(d, 0, IB_PC_LINK_RECOVERS_F));
  put(Counter::link_downed, mad_get_field(d, 0, IB_PC_LINK_DOWNED_F));
  put(Counter::rcv_errors, mad_get_field(d, 0, IB_PC_ERR_RCV_F));
  put(Counter::rcv_remote_phys_errors, mad_get_field(d, 0, IB_PC_ERR_PHYSRCV_F));
  put(Counter::rcv_switch_relay_errors, mad_get_field(d, 0, IB_PC_ERR_SWITCH_REL_F));
  put(Counter::xmit_discards, mad_get_field(d, 0, IB_PC_XMT_DISCARDS_F));
  put(Counter::xmit_constraint_errors, mad_get_field(d, 0, IB_PC_ERR_XMTCONSTR_F));
  put(Counter::rcv_constraint_errors, mad_get_field(d, 0, IB_PC_ERR_RCVCONSTR_F));
  put(Counter::local_link_integrity_errors, mad_get_field(d, 0, IB_PC_ERR_LOCALINTEG_F));
  put(Counter::excessive_buffer_overrun_errors, mad_get_field(d, 0, IB_PC_ERR_EXCESS_OVR_F));
  put(Counter::vl15_dropped, mad_get_field(d, 0, IB_PC_VL15_DROPPED_F));
}

// Each port's PortInfo by a LID-routed SMP (a switch's at its LID, a host port's at its own; the
// attribute modifier names the port): its state and physical state.
std::vector<PortLinkState> read_port_states(ibmad_port* port, const std::vector<Ask>& todo, const LiveScanOptions& opt) {
  std::vector<PortLinkState> out;
  live::send_windowed(
      port, IB_SMI_CLASS, IB_MAD_STATUS_F, todo.size(), opt, "port states",
      [&](size_t i, ib_rpc_t& rpc, ib_portid_t& dest, uint8_t*) {
        rpc.attr.id = IB_ATTR_PORT_INFO;
        rpc.attr.mod = static_cast<unsigned>(todo[i].port);
        rpc.datasz = IB_SMP_DATA_SIZE;
        rpc.dataoffs = IB_SMP_DATA_OFFS;
        dest.lid = todo[i].lid;
        dest.qp = 0;
      },
      [&](size_t i, uint8_t* mad) {
        uint8_t* d = mad + IB_SMP_DATA_OFFS;
        out.push_back({todo[i].node, todo[i].port, static_cast<uint8_t>(mad_get_field(d, 0, IB_PORT_STATE_F)),
                       static_cast<uint8_t>(mad_get_field(d, 0, IB_PORT_PHYS_STATE_F))});
      },
      [](size_t) {});
  std::sort(out.begin(), out.end(), [](const PortLinkState& a, const PortLinkState& b) { return std::pair(a.node, a.port) < std::pair(b.node, b.port); });
  return out;
}

}  // namespace

CounterSnapshot read_counters(const Fabric& f, const LiveScanOptions& opt, bool port_states) {
  // The ports counted: every connected port of a switch (asked at the switch's LID) and of a CA.
  struct Target {
    int32_t node;
    int port;
    uint16_t lid;
    int32_t pma;  // key of the PMA that answers for it: the switch, or the CA port itself
  };
  std::vector<Target> targets;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    for (int p = 1; p <= n.num_ports(); ++p) {
      const Port& port = n.ports[p];
      if (!port.connected()) continue;
      const uint16_t lid = n.is_switch() ? n.ports[0].base_lid : port.base_lid;
      if (lid == 0) continue;
      targets.push_back({static_cast<int32_t>(i), p, lid, n.is_switch() ? static_cast<int32_t>(i) : -static_cast<int32_t>(lid)});
    }
  }
  CounterSnapshot snap;
  if (targets.empty()) return snap;
  int classes[] = {IB_PERFORMANCE_CLASS, IB_SMI_CLASS};
  std::string ca = opt.ca;
  std::unique_ptr<ibmad_port, MadPortCloser> port(mad_rpc_open_port(ca.empty() ? nullptr : ca.data(), opt.port, classes, port_states ? 2 : 1));
  if (!port) throw std::runtime_error("cannot open the MAD port for performance counters: " + std::string(std::strerror(errno)));

  // Which PMAs have PortCountersExtended.
  std::map<int32_t, bool> extended;  // by PMA key; absent: ClassPortInfo unanswered (PortCounters still asked)
  std::vector<Ask> todo;
  std::map<int32_t, Ask> pmas;
  for (const Target& t : targets) pmas.emplace(t.pma, Ask{t.node, t.port, t.lid, CLASS_PORT_INFO});
  for (auto& [key, a] : pmas) todo.push_back(a);
  auto pma_of = [&](const Ask& a) { return f.nodes[a.node].is_switch() ? a.node : -static_cast<int32_t>(a.lid); };
  windowed(port.get(), todo, opt, [&](const Ask& a, uint8_t* data) {
        uint16_t cap = 0;
        std::memcpy(&cap, data + 2, sizeof cap);  // CapabilityMask, big-endian
        cap = static_cast<uint16_t>((cap >> 8) | (cap << 8));
        extended[pma_of(a)] = (cap & (kExtWidth | kExtWidthNoIetf)) != 0;
      });
  todo.clear();

  std::map<std::pair<int32_t, int>, PortSample> got;
  std::set<std::pair<int32_t, int>> pc_ok, ext_ok;  // answered PortCounters, PortCountersExtended
  for (const Target& t : targets) {
    todo.push_back({t.node, t.port, t.lid, IB_GSI_PORT_COUNTERS});
    if (extended[t.pma]) todo.push_back({t.node, t.port, t.lid, IB_GSI_PORT_COUNTERS_EXT});
  }
  windowed(port.get(), todo, opt, [&](const Ask& a, uint8_t* d) {
        PortSample& s = got[{a.node, a.port}];
        s.node = a.node, s.port = a.port;
        if (a.attr == IB_GSI_PORT_COUNTERS_EXT) {
          ext_ok.emplace(a.node, a.port);
          extended_counts(s, d);
          return;
        }
        pc_ok.emplace(a.node, a.port);
        port_counters(s, d, !ext_ok.count({a.node, a.port}));  // the 32-bit counts stand unless extended ones came (or come)
      });
  for (const Target& t : targets) {
    const std::pair key(t.node, t.port);
    // Only an answered PortCounters makes a sample: the error counters come from it alone.
    if (!pc_ok.count(key)) {
      snap.unanswered.push_back(key);
      continue;
    }
    PortSample& s = got[key];
    s.extended = ext_ok.count(key) > 0;
    if (!s.extended) snap.no_extended.push_back(key);
    snap.ports.push_back(s);
  }
  std::sort(snap.ports.begin(), snap.ports.end(), [](const PortSample& a, const PortSample& b) {
    return std::pair(a.node, a.port) < std::pair(b.node, b.port);
  });
  if (port_states) {
    todo.clear();
    for (const Target& t : targets) todo.push_back({t.node, t.port, t.lid, IB_ATTR_PORT_INFO});
    snap.states = read_port_states(port.get(), todo, opt);
  }
  return snap;
}

}  // namespace ibroute::fabric
