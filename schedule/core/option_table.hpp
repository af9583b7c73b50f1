// The distinct paths (options) of every transfer: what the planner chooses among and what the
// lower bound reasons about. Internal to schedule/core.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"

namespace ibroute::schedule {

// Memory for the option table: hundreds of MB read at random, one transfer after another. In
// 2 MiB pages (where the kernel grants them, madvise mode), so that the reads do not also miss
// the TLB on every transfer: a quarter of the planning time on a 3 000-host three-level tree.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  static constexpr size_t kHuge = size_t{2} << 20;
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
    void* p = std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge);
    if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, (bytes + kHuge - 1) / kHuge * kHuge, MADV_HUGEPAGE);  // advice only: no error to handle
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kHuge) ::operator delete(p);
    else std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
};
template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

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
  // Ask the memory ahead for what range(src, dst) reads, then for the options it names, then for
  // their links (each step reads what the one before fetched): the solver walks transfers in a
  // known order, and the table is too large for the caches.
  void prefetch_range(size_t src, size_t dst) const { __builtin_prefetch(&begin_[dst * rep_.size() + group_[src]]); }
  void prefetch_options(uint32_t first) const { __builtin_prefetch(opts_.data() + first); }
  void prefetch_links(uint32_t first, uint32_t last) const {
    if (first == last) return;
    const int32_t* p = links_.data() + opts_[first].begin;
    __builtin_prefetch(p);
    __builtin_prefetch(p + 16);  // four options of five links: 80 bytes, often two lines
  }
  int32_t src_link(size_t src) const { return src_link_[src]; }

 private:
  size_t n_;
  std::vector<int32_t> rep_;   // a representative rank per ingress group
  std::vector<int> group_;     // per rank: its ingress group
  std::vector<int32_t> src_link_;
  HugeVector<uint32_t> begin_;
  HugeVector<Option> opts_;
  HugeVector<int32_t> links_;
};

}  // namespace ibroute::schedule
