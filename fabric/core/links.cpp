#include "ibroute/fabric/links.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>

namespace ibroute::fabric {

LinkIndex::LinkIndex(const Fabric& f) {
  base_.reserve(f.nodes.size());
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    base_.push_back(static_cast<int32_t>(node_of_.size()));
    const Node& n = f.nodes[i];
    for (size_t p = 0; p < n.ports.size(); ++p) {
      node_of_.push_back(static_cast<int32_t>(i));
      const Port& port = n.ports[p];
      double rate = 0;
      if (port.connected()) {
        const Port& far = f.nodes[port.peer_node].ports[port.peer_port];
        auto lanes = [](const Port& x) { return x.width ? x.width : 4; };  // unknown width: nominal 4x
        auto lane = [](const Port& x) { return lane_gbps(x.speed); };
        double a = lanes(port) * lane(port), b = lanes(far) * lane(far);
        rate = a && b ? std::min(a, b) : std::max(a, b);
      }
      gbps_.push_back(rate);
    }
  }
}

RouteStatus PathFinder::path(int32_t src_node, int src_port, uint16_t dlid, std::vector<int32_t>& out) {
  out.clear();
  const Port& src = f_.nodes[src_node].ports[src_port];
  if (src.owns_lid(dlid)) return RouteStatus::ok;  // to itself: no link crossed
  out.push_back(links_.id(src_node, src_port));
  if (!port_usable(src)) return RouteStatus::dead_end;
  const Node& peer = f_.nodes[src.peer_node];
  if (!peer.is_switch()) return peer.ports[src.peer_port].owns_lid(dlid) ? RouteStatus::ok : RouteStatus::misdelivered;
  return from_switch(src.peer_node, dlid, out);
}

RouteStatus PathFinder::from_switch(int32_t sw, uint16_t dlid, std::vector<int32_t>& out) {
  hops_.clear();
  RouteStatus s = walker_.walk(sw, dlid, hops_);
  for (const Hop& h : hops_)
    if (h.out_port != 0 && h.out_port != kNoRoute && h.out_port <= f_.nodes[h.node].num_ports())
      out.push_back(links_.id(h.node, h.out_port));
  return s;
}

SwitchPaths::SwitchPaths(const Fabric& f, const LinkIndex& links, const std::vector<int32_t>& switches, unsigned threads)
    : row_of_(f.nodes.size(), -1) {
  for (const Node& n : f.nodes) cols_ = std::max(cols_, n.lft.size());
  for (const Node& n : f.nodes)
    for (const Port& p : n.ports)
      if (p.base_lid) cols_ = std::max<size_t>(cols_, p.base_lid + p.lid_count());
  cols_ = std::min<size_t>(cols_, kMaxLid + 1);
  struct Row {
    std::vector<uint32_t> len;
    std::vector<int32_t> links;
    std::vector<RouteStatus> status;
  };
  std::vector<Row> rows(switches.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    PathFinder finder(f, links);
    std::vector<int32_t> path;
    for (size_t r; (r = next.fetch_add(1)) < switches.size();) {
      Row& row = rows[r];
      row.len.resize(cols_);
      row.status.resize(cols_);
      for (size_t lid = 0; lid < cols_; ++lid) {
        path.clear();
        row.status[lid] = finder.from_switch(switches[r], static_cast<uint16_t>(lid), path);
        row.len[lid] = static_cast<uint32_t>(path.size());
        row.links.insert(row.links.end(), path.begin(), path.end());
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(1u, threads); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  size_t longest = 0;
  for (const Row& r : rows)
    for (uint32_t n : r.len) longest = std::max<size_t>(longest, n);
  stride_ = longest + 1;
  if (stride_ > 9) {  // paths this long (loops, odd fabrics): walking is cheaper than the memory
    std::fill(row_of_.begin(), row_of_.end(), -1);
    return;
  }
  cells_.assign(switches.size() * cols_ * stride_, 0);
  for (size_t r = 0; r < switches.size(); ++r) {
    row_of_[switches[r]] = static_cast<int32_t>(r);
    size_t at = 0;
    for (size_t lid = 0; lid < cols_; ++lid) {
      int32_t* cell = &cells_[(r * cols_ + lid) * stride_];
      const uint32_t n = rows[r].len[lid];
      cell[0] = static_cast<int32_t>((static_cast<uint32_t>(rows[r].status[lid]) << 16) | n);
      std::copy_n(rows[r].links.begin() + at, n, cell + 1);
      at += n;
    }
    rows[r] = Row{};
  }
}

std::vector<double> max_min_rates(const std::vector<std::vector<int32_t>>& flows, const std::vector<double>& capacity) {
  // Progressive filling: raise all unfrozen flows together; the link that fills first freezes
  // its flows at its fair share; repeat with what is left.
  std::vector<double> rate(flows.size(), 0), left = capacity;
  std::vector<int32_t> users(capacity.size(), 0), touched;
  std::vector<char> frozen(flows.size(), 0);
  for (const auto& fl : flows)
    for (int32_t l : fl) {
      if (users[l]++ == 0) touched.push_back(l);
    }
  size_t active = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    if (flows[i].empty()) frozen[i] = 1;  // no link crossed: not limited by the fabric
    else ++active;
  }
  double level = 0;
  while (active > 0) {
    double step = std::numeric_limits<double>::infinity();
    for (int32_t l : touched)
      if (users[l] > 0) step = std::min(step, left[l] / users[l]);
    level += step;
    for (int32_t l : touched)
      if (users[l] > 0) left[l] -= step * users[l];
    for (size_t i = 0; i < flows.size(); ++i) {
      if (frozen[i]) continue;
      bool full = false;
      for (int32_t l : flows[i]) full |= left[l] <= 1e-9 * (capacity[l] + 1);
      if (!full) continue;
      frozen[i] = 1;
      rate[i] = level;
      --active;
      for (int32_t l : flows[i]) --users[l];
    }
  }
  return rate;
}

}  // namespace ibroute::fabric
