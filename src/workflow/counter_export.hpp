// One reading of the ports' counters in the formats monitoring systems read (docs/monitoring.md):
// Prometheus' text exposition format, named as treydock/infiniband_exporter names its metrics (so
// that dashboards built on it work), and InfluxDB's line protocol. Both ends of every port's link
// come from the scan the reading was taken on. Pure: the fabric and the snapshot in, text out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/model.hpp"

namespace ibroute::workflow {

// What the reading was: when it was taken (Unix ns), on which scan, and how long it took.
struct ReadingMeta {
  int64_t unix_ns = 0, scan_id = 0;
  double seconds = 0;
};

// Prometheus text format (version 0.0.4), without timestamps (node_exporter's textfile collector
// refuses them): per answered port every counter (`infiniband_switch_port_*_total`,
// `infiniband_hca_port_*_total`, {guid, port}; data in bytes), and per unanswered port its last
// counters where s.carried has them; per port the link's lanes and data rate, whether it answered
// this reading, and its PortState and PortPhysicalState where s.states has them; per node
// `*_info`, per cabled port `*_uplink_info` with the far end; the reading's own gauges
// (`ibroute_counters_*`).
std::string prometheus_text(const fabric::Fabric& f, const fabric::CounterSnapshot& s, const ReadingMeta& m);

// InfluxDB line protocol: one point per answered port (measurement `infiniband_port`, tags for
// both ends, every counter an integer field, data in bytes, the port's state where read), all at
// the reading's time in ns (a port that did not answer has no point: nothing was read). A
// value InfluxDB cannot hold (a signed 64-bit integer) is left out and named in `left_out`.
std::string influx_lines(const fabric::Fabric& f, const fabric::CounterSnapshot& s, const ReadingMeta& m,
                         std::vector<std::string>& left_out);

}  // namespace ibroute::workflow
