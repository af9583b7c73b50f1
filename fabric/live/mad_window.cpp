// MADs with a window in flight: libibmad builds the packets, libibumad sends and receives them;
// answers are matched to requests by transaction ID. (libibmad's own *_query_via calls wait for
// each answer in turn: ~0.1 ms per MAD on ibsim, minutes on a real fabric of 10 000 ports.)
#include <infiniband/umad.h>

#include <cstring>
#include <deque>
#include <unordered_map>

#include "live_internal.hpp"

namespace ibroute::fabric::live {

void send_windowed(ibmad_port* port, int mgtclass, enum MAD_FIELDS status_field, size_t count,
                   const LiveScanOptions& opt, const char* stage, const MadMaker& make, const MadAnswer& answered,
                   const MadLost& lost) {
  const int fd = mad_rpc_portid(port);
  const int agent = mad_rpc_class_agent(port, mgtclass);
  const int timeout = opt.timeout_ms > 0 ? opt.timeout_ms : 200;
  const int retries = opt.retries > 0 ? opt.retries : 3;
  const size_t window = static_cast<size_t>(std::max(1, opt.mads_in_flight));
  const size_t bufsz = umad_size() + IB_MAD_SIZE;
  std::vector<uint8_t> sbuf(bufsz), rbuf(bufsz);
  std::unordered_map<uint32_t, size_t> in_flight;  // transaction ID -> request
  size_t next = 0, done = 0;
  auto send = [&](size_t i) {
    ib_rpc_t rpc{};
    rpc.mgtclass = mgtclass;
    rpc.method = IB_MAD_METHOD_GET;
    rpc.timeout = timeout;
    rpc.trid = mad_trid();
    ib_portid_t dest{};
    uint8_t payload[IB_MAD_SIZE] = {};
    make(i, rpc, dest, payload);
    std::memset(sbuf.data(), 0, bufsz);
    if (mad_build_pkt(sbuf.data(), &rpc, &dest, nullptr, payload) < 0 ||
        umad_send(fd, agent, sbuf.data(), IB_MAD_SIZE, timeout, retries) < 0) {
      lost(i);
      ++done;
      return;
    }
    in_flight.emplace(static_cast<uint32_t>(rpc.trid), i);
  };
  while (next < count || !in_flight.empty()) {
    while (in_flight.size() < window && next < count) send(next++);
    if (in_flight.empty()) continue;
    int len = IB_MAD_SIZE;
    if (umad_recv(fd, rbuf.data(), &len, timeout * (retries + 1) + 1000) <
        0) {  // nothing came back: every request in flight is lost
      for (auto& [tid, i] : in_flight) lost(i), ++done;
      in_flight.clear();
      continue;
    }
    auto* mad = static_cast<uint8_t*>(umad_get_mad(rbuf.data()));
    auto it = in_flight.find(static_cast<uint32_t>(mad_get_field64(mad, 0, IB_MAD_TRID_F)));
    if (it == in_flight.end()) continue;  // a late answer to something already given up
    const size_t i = it->second;
    in_flight.erase(it);
    ++done;
    if (umad_status(rbuf.data()) != 0 || mad_get_field(mad, 0, status_field) != 0)
      lost(i);
    else
      answered(i, mad);
    if (opt.progress && (done % 256 == 0 || done == count)) opt.progress(stage, done, count);
  }
}

}  // namespace ibroute::fabric::live
