#include "ibroute/fabric/links.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>

#include "ibroute/fabric/parallel.hpp"

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

SwitchPaths::SwitchPaths(const Fabric& f, const LinkIndex& links, const std::vector<int32_t>& switches, unsigned threads,
                         size_t max_bytes)
    : row_of_(f.nodes.size(), -1) {
  for (const Node& n : f.nodes) cols_ = std::max(cols_, n.lft.size());
  for (const Node& n : f.nodes)
    for (const Port& p : n.ports)
      if (p.base_lid) cols_ = std::max<size_t>(cols_, p.base_lid + p.lid_count());
  cols_ = std::min<size_t>(cols_, kMaxLid + 1);
  if (switches.empty() || !may_fit(switches.size(), cols_, max_bytes)) return;
  // Each switch's row is walked into scratch space and kept at its exact size (headers, then the
  // links back to back); the cell width is the longest path, known only once all are walked.
  struct Row {
    std::vector<uint32_t> head;  // (status << 16 | length) per LID
    std::vector<int32_t> links;
  };
  std::vector<Row> rows(switches.size());
  std::atomic<size_t> next{0};
  run_parallel(std::max(1u, threads), [&](unsigned) {
    PathFinder finder(f, links);
    std::vector<int32_t> path, all;
    for (size_t r; (r = next.fetch_add(1)) < switches.size();) {
      Row& row = rows[r];
      row.head.resize(cols_);
      all.clear();
      for (size_t lid = 0; lid < cols_; ++lid) {
        path.clear();
        const RouteStatus s = finder.from_switch(switches[r], static_cast<uint16_t>(lid), path);
        row.head[lid] = (static_cast<uint32_t>(s) << 16) | static_cast<uint32_t>(std::min<size_t>(path.size(), 0xffff));
        all.insert(all.end(), path.begin(), path.end());
      }
      row.links.assign(all.begin(), all.end());
    }
  });
  size_t longest = 0;
  for (const Row& r : rows)
    for (uint32_t h : r.head) longest = std::max<size_t>(longest, h & 0xffff);
  stride_ = longest + 1;
  // Paths this long (loops, odd fabrics), or a table this big: walking is cheaper than the memory.
  if (stride_ > 9 || switches.size() * cols_ * stride_ * sizeof(int32_t) > max_bytes) return;
  cells_.resize(switches.size() * cols_ * stride_);  // not zeroed: pages are touched as rows land
  for (size_t r = 0; r < switches.size(); ++r) row_of_[switches[r]] = static_cast<int32_t>(r);
  next = 0;
  run_parallel(std::max(1u, threads), [&](unsigned) {  // hundreds of MB first touched: shared out too
    for (size_t r; (r = next.fetch_add(1)) < switches.size();) {
      const int32_t* from = rows[r].links.data();
      for (size_t lid = 0; lid < cols_; ++lid) {
        int32_t* cell = &cells_[(r * cols_ + lid) * stride_];
        const uint32_t h = rows[r].head[lid];
        cell[0] = static_cast<int32_t>(h);
        std::copy_n(from, h & 0xffff, cell + 1);
        from += h & 0xffff;
      }
      rows[r] = Row{};
    }
  });
}

std::vector<double> max_min_rates(const std::vector<std::vector<int32_t>>& flows, const std::vector<double>& capacity) {
  MaxMinFill fill(capacity);
  return fill.rates(flows, flows.size());
}

const std::vector<double>& MaxMinFill::rates(const std::vector<std::vector<int32_t>>& flows, size_t count) {
  // Progressive filling: raise all unfrozen flows together; the link that fills first freezes
  // its flows at its fair share; repeat with what is left. A link one flow alone crosses (a
  // host's own link: most of them) holds back only that flow, at its rate: it is kept as the
  // flow's own ceiling, flows grouped by ceiling, instead of being scanned at every level. A link
  // several flows cross lists them (counting sort), so that when it fills it freezes its own: a
  // phase whose links fill at many levels (minhop tables: 1 to 16 transfers on a link) is not
  // scanned whole per level.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  rate_.assign(count, 0);
  frozen_.assign(count, 0);
  for (size_t i = 0; i < count; ++i)
    for (int32_t l : flows[i])
      if (users_[l]++ == 0) touched_.push_back(l), left_[l] = capacity_[l];
  shared_.clear();
  first_.assign(1, 0);
  for (int32_t l : touched_)
    if (users_[l] > 1) {
      slot_of(l) = static_cast<int32_t>(shared_.size());
      shared_.push_back(l);
      first_.push_back(first_.back() + static_cast<uint32_t>(users_[l]));
    }
  member_.resize(first_.back());
  fill_.assign(shared_.size(), 0);
  ceiling_.assign(count, kInf);
  caps_.clear();
  for (size_t i = 0; i < count; ++i)
    for (int32_t l : flows[i]) {
      if (users_[l] == 1) {
        ceiling_[i] = std::min(ceiling_[i], capacity_[l]);
        continue;
      }
      const auto x = static_cast<size_t>(slot_of(l));
      member_[first_[x] + fill_[x]++] = static_cast<uint32_t>(i);
    }
  // The flows by ceiling: a few distinct rates (host links of one or two kinds).
  for (size_t i = 0; i < count; ++i)
    if (ceiling_[i] < kInf && std::find(caps_.begin(), caps_.end(), ceiling_[i]) == caps_.end()) caps_.push_back(ceiling_[i]);
  std::sort(caps_.begin(), caps_.end());
  group_.assign(count, -1);
  group_first_.assign(caps_.size() + 1, 0);  // then the flows of each ceiling, ceiling after ceiling (counting sort)
  size_t active = 0;
  for (size_t i = 0; i < count; ++i) {
    if (flows[i].empty()) {
      frozen_[i] = 1;  // no link crossed: not limited by the fabric
      continue;
    }
    ++active;
    if (ceiling_[i] < kInf) {
      group_[i] = static_cast<int32_t>(std::lower_bound(caps_.begin(), caps_.end(), ceiling_[i]) - caps_.begin());
      ++group_first_[static_cast<size_t>(group_[i]) + 1];
    }
  }
  group_left_.assign(caps_.size(), 0);
  for (size_t g = 0; g < caps_.size(); ++g) group_left_[g] = group_first_[g + 1], group_first_[g + 1] += group_first_[g];
  grouped_.resize(group_first_.back());
  fill_.assign(caps_.size(), 0);
  for (size_t i = 0; i < count; ++i)
    if (group_[i] >= 0) {
      const auto g = static_cast<size_t>(group_[i]);
      grouped_[group_first_[g] + fill_[g]++] = static_cast<uint32_t>(i);
    }
  double level = 0;
  auto freeze = [&](size_t i) {
    frozen_[i] = 1;
    rate_[i] = level;
    --active;
    for (int32_t m : flows[i]) --users_[m];
    if (group_[i] >= 0) --group_left_[static_cast<size_t>(group_[i])];
  };
  live_.assign(shared_.begin(), shared_.end());
  size_t next = 0;  // the lowest ceiling some unfrozen flow still has
  while (active > 0) {
    double step = kInf;
    for (int32_t l : live_) step = std::min(step, left_[l] / users_[l]);
    while (next < caps_.size() && group_left_[next] == 0) ++next;
    if (next < caps_.size()) step = std::min(step, caps_[next] - level);
    if (!(step < kInf)) break;  // nothing left that limits a flow (not reached: every flow crosses a link)
    level += step;
    for (int32_t l : live_) left_[l] -= step * users_[l];
    // Every flow on a link now full freezes at this level (the order does not matter: each is
    // frozen once, at the same level); then every flow at its own ceiling.
    for (int32_t l : live_) {
      if (users_[l] == 0 || left_[l] > 1e-9 * (capacity_[l] + 1)) continue;
      const auto x = static_cast<size_t>(slot_of(l));
      for (uint32_t k = first_[x]; k < first_[x + 1]; ++k)
        if (!frozen_[member_[k]]) freeze(member_[k]);
    }
    for (size_t g = next; g < caps_.size() && caps_[g] - level <= 1e-9 * (caps_[g] + 1); ++g)
      for (size_t k = group_first_[g]; k < group_first_[g + 1]; ++k)
        if (!frozen_[grouped_[k]]) freeze(grouped_[k]);
    std::erase_if(live_, [&](int32_t l) { return users_[l] == 0; });
  }
  for (int32_t l : touched_) users_[l] = 0;  // for the next call (0 already where every flow froze)
  touched_.clear();
  return rate_;
}

}  // namespace ibroute::fabric
