// Directed links and the paths of transfers over them, for load analysis and planning.
// A directed link is named by the port it leaves from: id = first id of its node + port number.
#pragma once

#include <cstdint>
#include <vector>

#include "ibroute/fabric/huge_pages.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/prefetch.hpp"
#include "ibroute/fabric/routes.hpp"

namespace ibroute::fabric {

class LinkIndex {
 public:
  explicit LinkIndex(const Fabric& f);
  int32_t id(int32_t node, int port) const { return base_[node] + port; }
  size_t size() const { return node_of_.size(); }
  int32_t node(int32_t link) const { return node_of_[link]; }
  int port(int32_t link) const { return link - base_[node_of_[link]]; }
  // Data rate of the link in Gb/s: the slower end's width x lane rate; 0 if not cabled.
  double gbps(int32_t link) const { return gbps_[link]; }

 private:
  std::vector<int32_t> base_, node_of_;
  std::vector<double> gbps_;
};

// The directed links a transfer from a CA port to a DLID crosses: the CA's own link, then every
// switch out-port on the way (the last one leads into the destination). From the LFTs.
class PathFinder {
 public:
  PathFinder(const Fabric& f, const LinkIndex& links) : f_(f), links_(links), walker_(f) {}
  RouteStatus path(int32_t src_node, int src_port, uint16_t dlid, std::vector<int32_t>& out);
  // The same from a switch on: its out-ports and those after it (appended to `out`).
  RouteStatus from_switch(int32_t sw, uint16_t dlid, std::vector<int32_t>& out);

 private:
  const Fabric& f_;
  const LinkIndex& links_;
  LftWalker walker_;
  std::vector<Hop> hops_;
};

// The path of every DLID from each of a set of switches (the ones hosts attach to), walked once
// and kept flat: an all-to-all evaluates the same (ingress switch, DLID) paths in every phase.
// Built on `threads` threads; switches outside the set are answered by walking, and so is every
// switch when the table would take more than `max_bytes` (has() is false then).
class SwitchPaths {
 public:
  // 10 000 hosts on three levels at LMC 2 take ~0.6 GiB; beyond this, walking costs less than
  // the memory (the build holds the walked rows and the table, never both whole).
  static constexpr size_t kMaxBytes = size_t{3} << 29;
  SwitchPaths(const Fabric& f, const LinkIndex& links, const std::vector<int32_t>& switches, unsigned threads,
              size_t max_bytes = kMaxBytes);
  // Whether a table of `switches` x `lids` cells can fit at all: the shortest cell a route
  // between two switches takes (its header and three links) times the cells.
  static bool may_fit(size_t switches, size_t lids, size_t max_bytes = kMaxBytes) {
    return switches * lids <= max_bytes / (4 * sizeof(int32_t));
  }
  bool has(int32_t sw) const { return sw >= 0 && static_cast<size_t>(sw) < row_of_.size() && row_of_[sw] >= 0; }
  size_t bytes() const { return cells_.size() * sizeof(int32_t); }
  // Appends the links from `sw` (has(sw)) towards `dlid` to `out`; returns the route's status.
  RouteStatus append(int32_t sw, uint16_t dlid, std::vector<int32_t>& out) const {
    if (dlid >= cols_) return RouteStatus::unknown;
    // One cell holds the whole path (a cache line for trees of up to 7 switch hops): one memory
    // access per transfer, which is what an all-to-all evaluation is bound by.
    const int32_t* cell = cell_of(sw, dlid);
    const auto n = static_cast<uint32_t>(cell[0]) & 0xffff;
    out.insert(out.end(), cell + 1, cell + 1 + n);
    return static_cast<RouteStatus>(static_cast<uint32_t>(cell[0]) >> 16);
  }
  // Asks the cache for what append(sw, dlid) will read: a phase's transfers are known in advance,
  // and on a big fabric every cell is a miss.
  void prefetch(int32_t sw, uint16_t dlid) const {
    if (dlid >= cols_) return;
    const int32_t* cell = cell_of(sw, dlid);
    prefetch_read(cell);
    prefetch_read(cell + stride_ - 1);
  }

 private:
  const int32_t* cell_of(int32_t sw, uint16_t dlid) const {
    return &cells_[(static_cast<size_t>(row_of_[sw]) * cols_ + dlid) * stride_];
  }
  std::vector<int32_t> row_of_;
  size_t cols_ = 0, stride_ = 1;
  HugeVector<int32_t> cells_;  // per (row, LID): (status << 16 | length), then the links
};

// The links from switch `sw` towards `dlid`, appended to `out`: read from `table` where it holds
// the switch (what walking gives), else walked.
inline RouteStatus switch_path(const SwitchPaths* table, PathFinder& finder, int32_t sw, uint16_t dlid,
                               std::vector<int32_t>& out) {
  return table && table->has(sw) ? table->append(sw, dlid, out) : finder.from_switch(sw, dlid, out);
}

// Max-min fair rates (progressive filling) of flows over directed links with capacities.
// flows[i] lists flow i's links; returns each flow's rate in the capacities' unit.
std::vector<double> max_min_rates(const std::vector<std::vector<int32_t>>& flows, const std::vector<double>& capacity);

// The same with its work arrays kept from one call to the next (a simulation's every phase: the
// arrays span every link of the fabric, the phase touches a few), each call the rates of
// flows[0..count).
class MaxMinFill {
 public:
  explicit MaxMinFill(const std::vector<double>& capacity)
      : capacity_(capacity), left_(capacity.size()), users_(capacity.size(), 0), slot_(capacity.size(), 0) {}
  const std::vector<double>& rates(const std::vector<std::vector<int32_t>>& flows, size_t count);

 private:
  int32_t& slot_of(int32_t l) { return slot_[static_cast<size_t>(l)]; }
  const std::vector<double>& capacity_;
  std::vector<double> left_, rate_;
  std::vector<int32_t> users_, touched_, live_, shared_;  // shared_: the links two or more flows cross
  std::vector<int32_t> slot_;                             // per link: its place in shared_ (valid while listed)
  std::vector<uint32_t> first_,
      fill_;  // per shared link: where its flows start in member_; how many listed so far (then per ceiling)
  std::vector<uint32_t> member_;  // the flows of each shared link, link after link
  std::vector<double> ceiling_,
      caps_;                    // per flow: the lowest rate of the links it alone crosses; their distinct values
  std::vector<int32_t> group_;  // per flow: its ceiling's place in caps_ (-1: none)
  std::vector<size_t> group_left_,
      group_first_;                // per ceiling: flows not frozen yet; where its flows start in grouped_
  std::vector<uint32_t> grouped_;  // the flows of each ceiling, ceiling after ceiling
  std::vector<char> frozen_;
};

}  // namespace ibroute::fabric
