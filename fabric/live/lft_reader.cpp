// Linear forwarding tables by SubnGet(LinearForwardingTable) over directed routes, with a
// window of SMPs in flight (libibmad's own smp_query_via waits for each answer in turn).
// libibmad builds the packets and owns the port; libibumad sends and receives them.
#include <infiniband/umad.h>

#include <cerrno>
#include <cstring>
#include <deque>
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
  std::deque<Request> todo;
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
  const int fd = mad_rpc_portid(port.get());
  const int agent = mad_rpc_class_agent(port.get(), IB_SMI_DIRECT_CLASS);
  const int timeout = opt.timeout_ms > 0 ? opt.timeout_ms : 200;
  const int retries = opt.retries > 0 ? opt.retries : 3;
  const size_t window = static_cast<size_t>(std::max(1, opt.mads_in_flight));

  const size_t bufsz = umad_size() + IB_MAD_SIZE;
  std::vector<uint8_t> sbuf(bufsz), rbuf(bufsz);
  std::unordered_map<uint32_t, Request> in_flight;
  std::unordered_map<int, int> failed_blocks;  // node -> count
  size_t done = 0;

  auto send = [&](const Request& r) {
    ib_rpc_t rpc{};
    rpc.mgtclass = IB_SMI_DIRECT_CLASS;
    rpc.method = IB_MAD_METHOD_GET;
    rpc.attr.id = IB_ATTR_LINEARFORWTBL;
    rpc.attr.mod = static_cast<unsigned>(r.block);
    rpc.timeout = timeout;
    rpc.datasz = IB_SMP_DATA_SIZE;
    rpc.dataoffs = IB_SMP_DATA_OFFS;
    rpc.trid = mad_trid();
    ib_portid_t dest = d.paths[r.node];
    dest.lid = 0;  // directed route from this port, independent of the LFTs being read
    dest.sl = 0;
    dest.qp = 0;
    std::memset(sbuf.data(), 0, bufsz);
    int len = mad_build_pkt(sbuf.data(), &rpc, &dest, nullptr, nullptr);
    if (len < 0 || umad_send(fd, agent, sbuf.data(), IB_MAD_SIZE, timeout, retries) < 0) {
      ++failed_blocks[r.node];
      ++done;
      return;
    }
    in_flight.emplace(static_cast<uint32_t>(rpc.trid), r);
  };

  while (!todo.empty() || !in_flight.empty()) {
    while (in_flight.size() < window && !todo.empty()) {
      Request r = todo.front();
      todo.pop_front();
      send(r);
    }
    if (in_flight.empty()) continue;
    int len = IB_MAD_SIZE;
    int rc = umad_recv(fd, rbuf.data(), &len, timeout * (retries + 1) + 1000);
    if (rc < 0) {  // nothing came back at all: every request in flight is lost
      for (auto& [tid, r] : in_flight) ++failed_blocks[r.node], ++done;
      in_flight.clear();
      continue;
    }
    uint8_t* mad = static_cast<uint8_t*>(umad_get_mad(rbuf.data()));
    auto tid = static_cast<uint32_t>(mad_get_field64(mad, 0, IB_MAD_TRID_F));
    auto it = in_flight.find(tid);
    if (it == in_flight.end()) continue;  // a late answer to something already given up
    Request r = it->second;
    in_flight.erase(it);
    ++done;
    if (umad_status(rbuf.data()) != 0 || mad_get_field(mad, 0, IB_DRSMP_STATUS_F) != 0) {
      ++failed_blocks[r.node];
    } else {
      Node& n = f.nodes[r.node];
      const uint8_t* data = mad + IB_SMP_DATA_OFFS;
      size_t first = static_cast<size_t>(r.block) * kLidsPerBlock;
      for (size_t i = 0; i < kLidsPerBlock && first + i < n.lft.size(); ++i) n.lft[first + i] = data[i];
    }
    if (opt.progress && (done % 256 == 0 || done == total)) opt.progress("lft", done, total);
  }

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
