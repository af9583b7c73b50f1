// Measured against planned, per directed link: what the sending port's own counters say it
// transmitted between two snapshots (PortXmitData, in 4-octet words, so headers included) beside
// the bytes the plan sends over that link by the scanned routes, and how long the port waited
// for credits (PortXmitWait) as a share of the run. Pure: fed by counter deltas and plan loads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/links.hpp"

namespace ibroute::fabric {

struct LinkMeasure {
  int32_t link = -1;  // directed: out of (node, port) of the LinkIndex
  uint64_t planned_bytes = 0, measured_bytes = 0;
  uint64_t xmit_wait = 0;            // ticks
  std::optional<double> wait_share;  // xmit_wait x tick / seconds; empty without a tick or a duration
  uint64_t errors = 0;               // error counters that rose
  // measured / planned; empty where nothing was planned.
  std::optional<double> ratio() const {
    if (!planned_bytes) return std::nullopt;
    return static_cast<double>(measured_bytes) / static_cast<double>(planned_bytes);
  }
};

struct LinkMeasures {
  std::vector<LinkMeasure> rows;  // links that were planned or measured traffic, the worst deviation first
  uint64_t planned_bytes = 0, measured_bytes = 0;  // over the planned links that were read
  size_t planned_links = 0, unread_links = 0;      // planned links; of them, without a counter reading
  size_t off_links = 0;  // planned links whose ratio is outside [1/tolerance, tolerance], or unplanned with traffic
  std::optional<double> worst_wait_share;  // over all rows
};

// `planned`: bytes per directed link (LinkIndex ids) the traffic sends by the scanned routes — a
// plan's transfers per link x message size x rounds, or what a run moved per link. `seconds` and
// `tick_ns` > 0 give each link its wait share. `tolerance` (> 1): how far a ratio may stray before
// the link is counted off. Unplanned links count as off only above `noise_bytes` (MADs, other
// jobs' crumbs).
LinkMeasures measure_links(const std::vector<PortDelta>& deltas, const LinkIndex& links,
                           const std::vector<uint64_t>& planned, double seconds, double tick_ns,
                           double tolerance = 1.25, uint64_t noise_bytes = 1 << 20);
// A plan's bytes per link: transfers per link in one round (LoadReport::link_total) x bytes each x rounds.
std::vector<uint64_t> planned_bytes(const std::vector<uint32_t>& link_total, uint64_t bytes_per_transfer_round);

}  // namespace ibroute::fabric
