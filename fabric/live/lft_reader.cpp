// Linear forwarding tables by SubnGet(LinearForwardingTable) over directed routes, with a
// window of SMPs in flight (mad_window.cpp; libibmad's own smp_query_via waits for each answer).

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "live_internal.hpp"

namespace ibroute::fabric::live {

namespace {
constexpr int kLidsPerBlock = 64;

struct MadPortCloser {
  void operator()(ibmad_port* p) const { mad_rpc_close_port(p); }
};

struct Request {
  int node;
  int block;
};
}  // namespace

void read_lfts(Discovered& d, const LiveScanOptions& opt) {
  Fabric& f = d.fabric;
  std::vector<Request> todo;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    Node& n = f.nodes[i];
    if (!n.is_switch()) continue;
    int top = d.lft_top[i];
    n.lft.assign(top + 1, kNoRoute);
    n.lft_read = true;
    for (int b = 0; b * kLidsPerBlock <= top; ++b) todo.push_back({static_cast<int>(i), b});
  }
  const size_t total = todo.size();
  if (total == 0) return;

  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
  std::string ca = opt.ca;
  std::unique_ptr<ibmad_port, MadPortCloser> port(
      mad_rpc_open_port(ca.empty() ? nullptr : ca.data(), opt.port, classes, 2));
  if (!port) throw std::runtime_error("cannot open the MAD port for LFT reads: " + std::string(std::strerror(errno)));
  std::unordered_map<int, int> failed_blocks;  // node -> count
  send_windowed(
      port.get(), IB_SMI_DIRECT_CLASS, IB_DRSMP_STATUS_F, total, opt, "lft",
      [&](size_t i, ib_rpc_t& rpc, ib_portid_t& dest, uint8_t*) {
        rpc.attr.id = IB_ATTR_LINEARFORWTBL;
        rpc.attr.mod = static_cast<unsigned>(todo[i].block);
        rpc.datasz = IB_SMP_DATA_SIZE;
        rpc.dataoffs = IB_SMP_DATA_OFFS;
        dest = d.paths[todo[i].node];
        dest.lid = 0;  // directed route from this port, independent of the LFTs being read
        dest.sl = 0;
        dest.qp = 0;
      },
      [&](size_t i, uint8_t* mad) {
        Node& n = f.nodes[todo[i].node];
        const uint8_t* data = mad + IB_SMP_DATA_OFFS;
        const size_t first = static_cast<size_t>(todo[i].block) * kLidsPerBlock;
        for (size_t k = 0; k < kLidsPerBlock && first + k < n.lft.size(); ++k) n.lft[first + k] = data[k];
      },
      [&](size_t i) { ++failed_blocks[todo[i].node]; });

  for (auto& [ni, count] : failed_blocks) {
    Node& n = f.nodes[ni];
    n.lft_read = false;
    n.lft.clear();
    f.complete = false;
    f.problems.push_back({"lft_read_failed", n.guid, -1,
                          "forwarding table of " + n.desc + ": " + std::to_string(count) + " block(s) unanswered"});
  }
}

}  // namespace ibroute::fabric::live

namespace ibroute::fabric {

Fabric scan_live(const LiveScanOptions& opt) {
  if (opt.progress) opt.progress("discover", 0, 1);
  live::Discovered d = live::discover(opt);
  if (opt.progress) opt.progress("discover", 1, 1);
  live::read_lfts(d, opt);
  return std::move(d.fabric);
}

}  // namespace ibroute::fabric
