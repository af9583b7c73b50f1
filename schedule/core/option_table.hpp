// The distinct paths (options) of every transfer: what the planner chooses among and what the
// lower bound reasons about. Internal to schedule/core.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"

namespace ibroute::schedule {

// The distinct paths (options) from each ingress switch to each destination rank, one per
// distinct link set, computed once: every host behind a switch shares them.
class OptionTable {
 public:
  struct Option {
    uint32_t begin;   // into links()
    uint16_t dlid;
    uint16_t len;
  };

  OptionTable(const EvalContext& ctx, const std::vector<Host>& hosts) : n_(hosts.size()) {
    using namespace ibroute::fabric;
    PathFinder finder(ctx.fabric, ctx.links);
    std::unordered_map<int32_t, int> slot;
    for (size_t i = 0; i < n_; ++i) {
      const Port& p = ctx.fabric.nodes[hosts[i].node].ports[hosts[i].port];
      int32_t ingress = p.connected() ? p.peer_node : -1;
      auto [it, fresh] = slot.emplace(ingress, static_cast<int>(rep_.size()));
      if (fresh) rep_.push_back(static_cast<int32_t>(i));
      group_.push_back(it->second);
      src_link_.push_back(ctx.links.id(hosts[i].node, hosts[i].port));
    }
    // Destination-major: the walks towards one destination's LIDs from every ingress switch
    // read the same few LFT cache lines, instead of streaming all LFTs once per ingress switch.
    begin_.reserve(rep_.size() * n_ + 1);
    std::vector<int32_t> path;
    std::vector<char> via_switch(rep_.size());
    for (size_t g = 0; g < rep_.size(); ++g) {
      const Port& sp = ctx.fabric.nodes[hosts[rep_[g]].node].ports[hosts[rep_[g]].port];
      via_switch[g] = sp.connected() && ctx.fabric.nodes[sp.peer_node].is_switch();
    }
    for (size_t j = 0; j < n_; ++j) {
      const Port& d = ctx.fabric.nodes[hosts[j].node].ports[hosts[j].port];
      for (size_t g = 0; g < rep_.size(); ++g) {
        begin_.push_back(static_cast<uint32_t>(opts_.size()));
        if (d.base_lid == 0 || !via_switch[g]) continue;
        const int32_t ingress = ctx.fabric.nodes[hosts[rep_[g]].node].ports[hosts[rep_[g]].port].peer_node;
        const uint32_t first = static_cast<uint32_t>(opts_.size());
        for (uint32_t o = 0; o < d.lid_count(); ++o) {
          uint16_t dlid = static_cast<uint16_t>(d.base_lid + o);
          // From the ingress switch on: every host behind it shares these links.
          path.clear();
          if (finder.from_switch(ingress, dlid, path) != RouteStatus::ok || path.empty()) continue;
          bool dup = false;
          for (uint32_t k = first; k < opts_.size() && !dup; ++k)
            dup = opts_[k].len == path.size() && std::equal(path.begin(), path.end(), links_.begin() + opts_[k].begin);
          if (dup) continue;
          opts_.push_back({static_cast<uint32_t>(links_.size()), dlid, static_cast<uint16_t>(path.size())});
          links_.insert(links_.end(), path.begin(), path.end());
        }
      }
    }
    begin_.push_back(static_cast<uint32_t>(opts_.size()));
  }

  // Options of the transfer src -> dst: [first, last) indices.
  std::pair<uint32_t, uint32_t> range(size_t src, size_t dst) const {
    size_t k = dst * rep_.size() + group_[src];
    return {begin_[k], begin_[k + 1]};
  }
  const Option& opt(uint32_t k) const { return opts_[k]; }
  int group(size_t rank) const { return group_[rank]; }  // the rank's ingress switch, numbered
  const int32_t* links(uint32_t k) const { return links_.data() + opts_[k].begin; }
  int32_t src_link(size_t src) const { return src_link_[src]; }

 private:
  size_t n_;
  std::vector<int32_t> rep_;   // a representative rank per ingress group
  std::vector<int> group_;     // per rank: its ingress group
  std::vector<int32_t> src_link_;
  std::vector<uint32_t> begin_;
  std::vector<Option> opts_;
  std::vector<int32_t> links_;
};

}  // namespace ibroute::schedule
