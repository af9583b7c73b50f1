// The distinct paths (options) of every transfer: what the planner chooses among and what the
// lower bound reasons about. Internal to schedule/core.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ibroute/fabric/huge_pages.hpp"
#include "ibroute/fabric/parallel.hpp"
#include "ibroute/fabric/prefetch.hpp"
#include "ibroute/schedule/evaluate.hpp"

namespace ibroute::schedule {

// Hundreds of MB read at random, one transfer after another: in 2 MiB pages (huge_pages.hpp),
// a quarter of the planning time on a 3 000-host three-level tree.
using ibroute::fabric::HugeVector;

// The distinct paths (options) from each ingress switch to each destination rank, one per
// distinct link set, computed once: every host behind a switch shares them.
class OptionTable {
 public:
  struct Option {
    uint32_t begin;  // into links()
    uint16_t dlid;
    uint16_t len;
  };

  // `threads`: 0 for every core. The destinations are cut into one run per thread, each built
  // apart and then appended in order: the table is the same for any number of threads.
  // `max_lids`: each destination's first LIDs alone (1: its base LID, as at LMC 0).
  OptionTable(const EvalContext& ctx, const std::vector<Host>& hosts, unsigned threads = 0,
              uint32_t max_lids = UINT32_MAX)
      : n_(hosts.size()), max_lids_(max_lids) {
    using namespace ibroute::fabric;
    std::unordered_map<int32_t, int> slot;
    for (size_t i = 0; i < n_; ++i) {
      const Port& p = ctx.fabric.nodes[hosts[i].node].ports[hosts[i].port];
      int32_t ingress = p.connected() ? p.peer_node : -1;
      auto [it, fresh] = slot.emplace(ingress, static_cast<int>(rep_.size()));
      if (fresh) rep_.push_back(static_cast<int32_t>(i));
      group_.push_back(it->second);
      src_link_.push_back(ctx.links.id(hosts[i].node, hosts[i].port));
    }
    std::vector<int32_t> ingress(rep_.size(), -1);  // per group: its switch, or -1 (no switch there)
    for (size_t g = 0; g < rep_.size(); ++g) {
      const Port& sp = ctx.fabric.nodes[hosts[rep_[g]].node].ports[hosts[rep_[g]].port];
      if (sp.connected() && ctx.fabric.nodes[sp.peer_node].is_switch()) ingress[g] = sp.peer_node;
    }
    // Where the hosts are most of the fabric's, their paths are the switch table's (built once,
    // then read by every evaluation): walking them here again cost as much as building it.
    const fabric::SwitchPaths* paths = ctx.switch_paths_for(n_);
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::clamp<size_t>(n_ / 256, 1, threads));
    std::vector<Part> parts(threads);
    ibroute::fabric::run_parallel(threads, [&](unsigned t) {
      build(ctx, paths, hosts, ingress, n_ * t / threads, n_ * (t + 1) / threads, parts[t]);
    });
    size_t nb = 1, no = 0, nl = 0;
    for (const Part& p : parts) nb += p.begin.size(), no += p.opts.size(), nl += p.links.size();
    if (no > UINT32_MAX || nl > UINT32_MAX) throw std::length_error("the option table is beyond 2^32 paths or links");
    // Each part copied into its place by its own thread, its offsets shifted, and freed: the copy
    // and the first touch of hundreds of MB shared out instead of done one part after another.
    begin_.resize(nb), opts_.resize(no), links_.resize(nl);  // not zeroed (HugeVector)
    std::vector<size_t> b0(threads + 1, 0), o0(threads + 1, 0), l0(threads + 1, 0);
    for (unsigned t = 0; t < threads; ++t)
      b0[t + 1] = b0[t] + parts[t].begin.size(), o0[t + 1] = o0[t] + parts[t].opts.size(),
             l0[t + 1] = l0[t] + parts[t].links.size();
    ibroute::fabric::run_parallel(threads, [&](unsigned t) {
      Part& p = parts[t];
      const auto oo = static_cast<uint32_t>(o0[t]), lo = static_cast<uint32_t>(l0[t]);
      for (size_t k = 0; k < p.begin.size(); ++k) begin_[b0[t] + k] = p.begin[k] + oo;
      for (size_t k = 0; k < p.opts.size(); ++k) {
        Option o = p.opts[k];
        o.begin += lo;
        opts_[o0[t] + k] = o;
      }
      std::copy(p.links.begin(), p.links.end(), links_.begin() + static_cast<std::ptrdiff_t>(l0[t]));
      p = Part{};
    });
    begin_[nb - 1] = static_cast<uint32_t>(no);
  }

  // Options of the transfer src -> dst: [first, last) indices.
  std::pair<uint32_t, uint32_t> range(size_t src, size_t dst) const {
    size_t k = dst * rep_.size() + group_[src];
    return {begin_[k], begin_[k + 1]};
  }
  const Option& opt(uint32_t k) const { return opts_[k]; }
  int group(size_t rank) const { return group_[rank]; }  // the rank's ingress switch, numbered
  const int32_t* links(uint32_t k) const { return links_.data() + opts_[k].begin; }
  // The links of options [first, last) of one transfer (one range()) lie together, in option
  // order, as build() appends them: [begin, end) into the links of links(first).
  std::pair<uint32_t, uint32_t> cell_links(uint32_t first, uint32_t last) const {
    return {opts_[first].begin, opts_[last - 1].begin + opts_[last - 1].len};
  }
  // Ask the memory ahead for what range(src, dst) reads, then for the options it names, then for
  // their links (each step reads what the one before fetched): the solver walks transfers in a
  // known order, and the table is too large for the caches.
  void prefetch_range(size_t src, size_t dst) const { fabric::prefetch_read(&begin_[dst * rep_.size() + group_[src]]); }
  void prefetch_options(uint32_t first) const { fabric::prefetch_read(opts_.data() + first); }
  void prefetch_links(uint32_t first, uint32_t last) const {
    if (first == last) return;
    const int32_t* p = links_.data() + opts_[first].begin;
    fabric::prefetch_read(p);
    fabric::prefetch_read(p + 16);  // four options of five links: 80 bytes, often two lines
  }
  int32_t src_link(size_t src) const { return src_link_[src]; }
  // Options per transfer on average (over every ingress group and destination; 1 at LMC 0).
  double mean_options() const {
    const size_t cells = n_ * rep_.size();
    return cells ? static_cast<double>(opts_.size()) / static_cast<double>(cells) : 0.0;
  }

 private:
  struct Part {  // the table rows of a run of destinations, offsets from the part's start
    HugeVector<uint32_t> begin;
    HugeVector<Option> opts;
    HugeVector<int32_t> links;
  };
  // Destination-major: the walks towards one destination's LIDs from every ingress switch read
  // the same few LFT cache lines, instead of streaming all LFTs once per ingress switch.
  void build(const EvalContext& ctx, const fabric::SwitchPaths* paths, const std::vector<Host>& hosts,
             const std::vector<int32_t>& ingress, size_t from, size_t to, Part& out) const {
    using namespace ibroute::fabric;
    PathFinder finder(ctx.fabric, ctx.links);
    std::vector<int32_t> path;
    out.begin.reserve((to - from) * rep_.size());
    for (size_t j = from; j < to; ++j) {
      const Port& d = ctx.fabric.nodes[hosts[j].node].ports[hosts[j].port];
      for (size_t g = 0; g < rep_.size(); ++g) {
        if (paths && g + 8 < rep_.size() && paths->has(ingress[g + 8]))  // each group's cell is in another row
          for (uint32_t o = 0; o < std::min(d.lid_count(), max_lids_); ++o)
            paths->prefetch(ingress[g + 8], static_cast<uint16_t>(d.base_lid + o));
        out.begin.push_back(static_cast<uint32_t>(out.opts.size()));
        if (d.base_lid == 0 || ingress[g] < 0) continue;
        const auto first = static_cast<uint32_t>(out.opts.size());
        for (uint32_t o = 0; o < std::min(d.lid_count(), max_lids_); ++o) {
          const auto dlid = static_cast<uint16_t>(d.base_lid + o);
          // From the ingress switch on: every host behind it shares these links.
          path.clear();
          if (switch_path(paths, finder, ingress[g], dlid, path) != RouteStatus::ok || path.empty()) continue;
          bool dup = false;
          for (uint32_t k = first; k < out.opts.size() && !dup; ++k)
            dup = out.opts[k].len == path.size() &&
                  std::equal(path.begin(), path.end(), out.links.begin() + out.opts[k].begin);
          if (dup) continue;
          out.opts.push_back({static_cast<uint32_t>(out.links.size()), dlid, static_cast<uint16_t>(path.size())});
          out.links.insert(out.links.end(), path.begin(), path.end());
        }
      }
    }
  }

  size_t n_;
  uint32_t max_lids_;
  std::vector<int32_t> rep_;  // a representative rank per ingress group
  std::vector<int> group_;    // per rank: its ingress group
  std::vector<int32_t> src_link_;
  HugeVector<uint32_t> begin_;
  HugeVector<Option> opts_;
  HugeVector<int32_t> links_;
};

// The option table of `hosts`, shared with the last caller that asked for the same hosts on
// this context (the planner's, read again by its plan's lower bound). Built with `threads`
// (0: every core); the table does not depend on them.
std::shared_ptr<const OptionTable> option_table_of(const EvalContext& ctx, const std::vector<Host>& hosts,
                                                   unsigned threads = 0);

}  // namespace ibroute::schedule
