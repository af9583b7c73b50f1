// A transfer's path from the sender's own link on: read from the table of (ingress switch, DLID)
// paths where there is one and it holds the sender's switch (one memory access, which prefetch
// asks for ahead), else walked through the LFTs. One per thread: the walker keeps scratch space.
// What the diagnosis and the simulation of 10^8 pairs at 10 000 hosts spend most of their time on.
// Internal to schedule/core.
#pragma once

#include <cstdint>
#include <vector>

#include "ibroute/fabric/links.hpp"
#include "ibroute/schedule/evaluate.hpp"

namespace ibroute::schedule {

class PathOf {
 public:
  PathOf(const EvalContext& ctx, const std::vector<Host>& hosts, const fabric::SwitchPaths* table)
      : ctx_(ctx), hosts_(hosts), table_(table), finder_(ctx.fabric, ctx.links) {}
  // `path` cleared, then the path of rank `src`'s transfer to `dlid`; true where it arrives.
  bool operator()(size_t src, uint16_t dlid, std::vector<int32_t>& path) {
    path.clear();
    const Host& h = hosts_[src];
    if (h.node < 0) return false;
    if (table_ && from_table(h)) {
      path.push_back(ctx_.links.id(h.node, h.port));
      return table_->append(port(h).peer_node, dlid, path) == fabric::RouteStatus::ok;
    }
    return finder_.path(h.node, h.port, dlid, path) == fabric::RouteStatus::ok;
  }
  void prefetch(size_t src, uint16_t dlid) const {
    const Host& h = hosts_[src];
    if (table_ && h.node >= 0 && from_table(h)) table_->prefetch(port(h).peer_node, dlid);
  }

 private:
  const fabric::Port& port(const Host& h) const { return ctx_.fabric.nodes[h.node].ports[h.port]; }
  bool from_table(const Host& h) const {
    const fabric::Port& p = port(h);
    return p.connected() && fabric::port_usable(p) && table_->has(p.peer_node);
  }
  const EvalContext& ctx_;
  const std::vector<Host>& hosts_;
  const fabric::SwitchPaths* table_;
  fabric::PathFinder finder_;
};

// How many transfers ahead the table is prefetched (evaluate's measure: 8 to 32 alike at 10 000 hosts).
constexpr size_t kPathsAhead = 8;

}  // namespace ibroute::schedule
