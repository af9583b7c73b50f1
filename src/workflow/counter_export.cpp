#include "counter_export.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string_view>

namespace ibroute::workflow {

using namespace ibroute::fabric;

namespace {

// treydock/infiniband_exporter's names, in the order of fabric::Counter (docs/monitoring.md).
constexpr std::array<std::string_view, kCounters> kPromNames{
    "port_transmit_data_bytes_total",
    "port_receive_data_bytes_total",
    "port_transmit_packets_total",
    "port_receive_packets_total",
    "port_transmit_wait_total",
    "port_symbol_error_total",
    "port_link_error_recovery_total",
    "port_link_downed_total",
    "port_receive_errors_total",
    "port_receive_remote_physical_errors_total",
    "port_receive_switch_relay_errors_total",
    "port_transmit_discards_total",
    "port_transmit_constraint_errors_total",
    "port_receive_constraint_errors_total",
    "port_local_link_integrity_errors_total",
    "port_excessive_buffer_overrun_errors_total",
    "port_vl15_dropped_total",
};

// The data counters count 4-octet words; both formats give bytes.
bool in_words(size_t i) {
  return i == static_cast<size_t>(Counter::xmit_data) || i == static_cast<size_t>(Counter::rcv_data);
}

const char* kind_of(const Node& n) { return n.is_switch() ? "switch" : "hca"; }

// Length of the valid UTF-8 sequence at s[i], 0 if there is none.
size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return 0;
  return n;
}

// A name as text either format can carry: control characters and bytes that are no UTF-8 written
// as \xHH (so a description with an escape sequence shows as what it is), then each format's own
// escapes on top.
std::string printable_utf8(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f))) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string prom_label(std::string_view s) {
  std::string out;
  for (char c : printable_utf8(s)) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

std::string influx_tag(std::string_view s) {
  std::string out;
  for (char c : printable_utf8(s)) {
    if (c == ',' || c == '=' || c == ' ') out += '\\';
    out += c;
  }
  return out;
}

uint16_t lid_of(const Node& n) {
  if (n.is_switch()) return n.ports.empty() ? 0 : n.ports[0].base_lid;
  for (const Port& p : n.ports)
    if (p.base_lid) return p.base_lid;
  return 0;
}

double port_rate_bytes(const Port& p) { return p.width * lane_gbps(p.speed) * 1e9 / 8; }

std::string number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// A port's link state in the reading, or null when its PortInfo was not read.
const PortLinkState* state_of(const CounterSnapshot& s, int32_t node, int port) {
  const auto it = std::lower_bound(
      s.states.begin(), s.states.end(), std::pair(node, port),
      [](const PortLinkState& a, const std::pair<int32_t, int>& b) { return std::pair(a.node, a.port) < b; });
  return it != s.states.end() && it->node == node && it->port == port ? &*it : nullptr;
}

// The ports one reading lists: answered (with counters) and unanswered (with their last
// counters where carried), by (node, port), with their link state where PortInfo answered.
struct Listed {
  int32_t node;
  int port;
  const PortSample* sample;  // null: no answer this reading and none carried
  bool answered;
  const PortLinkState* state;  // null: not read
};
std::vector<Listed> listed_ports(const CounterSnapshot& s) {
  std::vector<Listed> out;
  for (const PortSample& p : s.ports) out.push_back({p.node, p.port, &p, true, nullptr});
  for (const std::pair<int32_t, int>& u : s.unanswered) {  // carried is sorted by (node, port)
    const auto c = std::lower_bound(
        s.carried.begin(), s.carried.end(), u,
        [](const PortSample& x, const std::pair<int32_t, int>& k) { return std::pair(x.node, x.port) < k; });
    const bool has = c != s.carried.end() && c->node == u.first && c->port == u.second;
    out.push_back({u.first, u.second, has ? &*c : nullptr, false, nullptr});
  }
  std::sort(out.begin(), out.end(),
            [](const Listed& a, const Listed& b) { return std::pair(a.node, a.port) < std::pair(b.node, b.port); });
  for (Listed& l : out) l.state = state_of(s, l.node, l.port);
  return out;
}

class PromWriter {
 public:
  explicit PromWriter(const Fabric& f) : f_(f) {}
  void family(const std::string& name, const char* type, const std::string& help) {
    out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& name, const std::string& labels, const std::string& value) {
    out_ += name + (labels.empty() ? "" : "{" + labels + "}") + " " + value + "\n";
  }
  std::string port_labels(int32_t node, int port) const {
    return "guid=\"" + guid_hex(f_.nodes[static_cast<size_t>(node)].guid) + "\",port=\"" + std::to_string(port) + "\"";
  }
  std::string text() && { return std::move(out_); }

 private:
  const Fabric& f_;
  std::string out_;
};

void prom_counters(PromWriter& w, const Fabric& f, const std::vector<Listed>& ports, const char* kind) {
  for (size_t i = 0; i < kCounters; ++i) {
    const std::string name = std::string("infiniband_") + kind + "_" + std::string(kPromNames[i]);
    bool any = false;
    for (const Listed& l : ports) {
      if (!l.sample || std::string_view(kind_of(f.nodes[static_cast<size_t>(l.node)])) != kind) continue;
      if (!any)
        w.family(name, "counter",
                 "Infiniband " + std::string(kind) + " port " + std::string(counter_info(i).ib) +
                     (in_words(i) ? " (bytes)" : ""));
      any = true;
      const double v = static_cast<double>(l.sample->v[i]) * (in_words(i) ? 4 : 1);
      w.sample(name, w.port_labels(l.node, l.port), number(v));
    }
  }
}

void prom_port_gauges(PromWriter& w, const Fabric& f, const std::vector<Listed>& ports, const char* kind) {
  struct Gauge {
    const char* suffix;
    const char* help;
  };
  const Gauge gauges[] = {
      {"port_answered",
       "1 if the port's counters were read this time, 0 if it gave no answer (its counters then are the last read, if "
       "any)"},
      {"port_width_lanes", "Active lanes of the port's link as the scan found it"},
      {"port_rate_bytes_per_second", "Data rate of the port's link as the scan found it (after encoding)"},
      {"port_state", "The port's PortState read now: 1 Down, 2 Initialize, 3 Armed, 4 Active (absent: not read)"},
      {"port_physical_state",
       "The port's PortPhysicalState read now: 2 Polling, 3 Disabled, 5 LinkUp, ... (absent: not read)"}};
  for (size_t g = 0; g < 5; ++g) {
    const std::string name = std::string("infiniband_") + kind + "_" + gauges[g].suffix;
    bool any = false;
    for (const Listed& l : ports) {
      const Node& n = f.nodes[static_cast<size_t>(l.node)];
      if (std::string_view(kind_of(n)) != kind || (g >= 3 && !l.state)) continue;
      if (!any) w.family(name, "gauge", gauges[g].help);
      any = true;
      const Port& p = n.ports[static_cast<size_t>(l.port)];
      const double v = g == 0   ? (l.answered ? 1 : 0)
                       : g == 1 ? p.width
                       : g == 2 ? port_rate_bytes(p)
                       : g == 3 ? l.state->state
                                : l.state->physical;
      w.sample(name, w.port_labels(l.node, l.port), number(v));
    }
  }
}

void prom_node_info(PromWriter& w, const Fabric& f, const std::vector<Listed>& ports, const char* kind) {
  std::map<int32_t, std::vector<int>> by_node;
  for (const Listed& l : ports)
    if (std::string_view(kind_of(f.nodes[static_cast<size_t>(l.node)])) == kind) by_node[l.node].push_back(l.port);
  if (by_node.empty()) return;
  const std::string pre = std::string("infiniband_") + kind + "_";
  w.family(pre + "info", "gauge", std::string("Infiniband ") + kind + " information (constant 1)");
  for (const auto& [node, list] : by_node) {
    const Node& n = f.nodes[static_cast<size_t>(node)];
    w.sample(pre + "info",
             "guid=\"" + guid_hex(n.guid) + "\"," + kind + "=\"" + prom_label(n.desc) + "\",lid=\"" +
                 std::to_string(lid_of(n)) + "\"",
             "1");
  }
  w.family(pre + "rate_bytes_per_second", "gauge",
           std::string("Infiniband ") + kind + " rate: its fastest port's data rate");
  for (const auto& [node, list] : by_node) {
    const Node& n = f.nodes[static_cast<size_t>(node)];
    double best = 0;
    for (int p : list) best = std::max(best, port_rate_bytes(n.ports[static_cast<size_t>(p)]));
    w.sample(pre + "rate_bytes_per_second", "guid=\"" + guid_hex(n.guid) + "\"", number(best));
  }
  w.family(pre + "uplink_info", "gauge", std::string("Infiniband ") + kind + " port's far end (constant 1)");
  for (const auto& [node, list] : by_node) {
    const Node& n = f.nodes[static_cast<size_t>(node)];
    for (int p : list) {
      const Port& port = n.ports[static_cast<size_t>(p)];
      if (!port.connected()) continue;
      const Node& far = f.nodes[static_cast<size_t>(port.peer_node)];
      w.sample(pre + "uplink_info",
               w.port_labels(node, p) + "," + kind + "=\"" + prom_label(n.desc) + "\",uplink=\"" +
                   prom_label(far.desc) + "\",uplink_guid=\"" + guid_hex(far.guid) + "\",uplink_type=\"" +
                   (far.is_switch() ? "SW" : "CA") + "\",uplink_port=\"" + std::to_string(port.peer_port) +
                   "\",uplink_lid=\"" +
                   std::to_string(far.is_switch() || port.peer_port >= far.ports.size()
                                      ? lid_of(far)
                                      : far.ports[port.peer_port].base_lid) +
                   "\"",
               "1");
    }
  }
}

}  // namespace

std::string prometheus_text(const Fabric& f, const CounterSnapshot& s, const ReadingMeta& m) {
  PromWriter w(f);
  const std::vector<Listed> ports = listed_ports(s);
  for (const char* kind : {"switch", "hca"}) {
    prom_counters(w, f, ports, kind);
    prom_port_gauges(w, f, ports, kind);
    prom_node_info(w, f, ports, kind);
  }
  w.family("ibroute_counters_ports", "gauge", "Ports of the scan read this time, by whether they answered");
  w.sample("ibroute_counters_ports", "answered=\"yes\"", std::to_string(s.ports.size()));
  w.sample("ibroute_counters_ports", "answered=\"no\"", std::to_string(s.unanswered.size()));
  w.family("ibroute_counters_ports_carried", "gauge",
           "Ports that gave no answer, reported with their last counters read");
  w.sample("ibroute_counters_ports_carried", "", std::to_string(s.carried.size()));
  w.family("ibroute_counters_read_seconds", "gauge", "How long reading every port's counters took");
  w.sample("ibroute_counters_read_seconds", "", number(m.seconds));
  w.family("ibroute_counters_read_timestamp_seconds", "gauge", "When the counters were read (Unix time)");
  w.sample("ibroute_counters_read_timestamp_seconds", "", number(static_cast<double>(m.unix_ns) * 1e-9));
  w.family("ibroute_counters_scan_id", "gauge", "The ibroute scan whose ports and names these are");
  w.sample("ibroute_counters_scan_id", "", std::to_string(m.scan_id));
  return std::move(w).text();
}

std::string influx_lines(const Fabric& f, const CounterSnapshot& s, const ReadingMeta& m,
                         std::vector<std::string>& left_out) {
  std::string out;
  const std::string at = std::to_string(m.unix_ns);
  for (const PortSample& p : s.ports) {
    const Node& n = f.nodes[static_cast<size_t>(p.node)];
    const Port& port = n.ports[static_cast<size_t>(p.port)];
    std::string line = "infiniband_port,kind=" + std::string(kind_of(n)) + ",guid=" + guid_hex(n.guid) +
                       ",port=" + std::to_string(p.port);
    if (!n.desc.empty()) line += ",node=" + influx_tag(n.desc);
    if (port.connected()) {
      const Node& far = f.nodes[static_cast<size_t>(port.peer_node)];
      line += ",remote_kind=" + std::string(kind_of(far)) + ",remote_guid=" + guid_hex(far.guid) +
              ",remote_port=" + std::to_string(port.peer_port);
      if (!far.desc.empty()) line += ",remote_node=" + influx_tag(far.desc);
    }
    line += " width=" + std::to_string(port.width) + "i,rate_bytes_per_second=" + number(port_rate_bytes(port));
    if (const PortLinkState* st = state_of(s, p.node, p.port))
      line += ",port_state=" + std::to_string(st->state) + "i,physical_state=" + std::to_string(st->physical) + "i";
    for (size_t i = 0; i < kCounters; ++i) {
      const uint64_t v = p.v[i];
      const bool fits = in_words(i) ? v <= static_cast<uint64_t>(INT64_MAX) / 4 : v <= static_cast<uint64_t>(INT64_MAX);
      const std::string key =
          in_words(i) ? (i == 0 ? "xmit_data_bytes" : "rcv_data_bytes") : std::string(counter_info(i).name);
      if (!fits) {
        left_out.push_back(guid_hex(n.guid) + "[" + std::to_string(p.port) + "] " + key);
        continue;
      }
      line += "," + key + "=" + std::to_string(in_words(i) ? v * 4 : v) + "i";
    }
    out += line + " " + at + "\n";
  }
  return out;
}

}  // namespace ibroute::workflow
