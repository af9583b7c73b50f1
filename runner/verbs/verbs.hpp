// libibverbs objects owned by RAII (declare them in creation order: they are destroyed in
// reverse, QPs before CQs before MRs before the PD before the device), and the few steps every
// connection takes: open a port, create a QP (RC, or UC for the data of `run --transport uc`),
// move it INIT -> RTR -> RTS towards a peer.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace ibroute::runner::verbs {

struct VerbsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T, auto Destroy>
struct Destroyer {
  void operator()(T* p) const {
    if (p) Destroy(p);
  }
};
using Context = std::unique_ptr<ibv_context, Destroyer<ibv_context, ibv_close_device>>;
using Pd = std::unique_ptr<ibv_pd, Destroyer<ibv_pd, ibv_dealloc_pd>>;
using Mr = std::unique_ptr<ibv_mr, Destroyer<ibv_mr, ibv_dereg_mr>>;
using Cq = std::unique_ptr<ibv_cq, Destroyer<ibv_cq, ibv_destroy_cq>>;
using Qp = std::unique_ptr<ibv_qp, Destroyer<ibv_qp, ibv_destroy_qp>>;

// Memory for verbs: page-aligned, freed after its MR (declare before the Mr).
struct Buffer {
  explicit Buffer(size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  uint8_t* data = nullptr;
  size_t size = 0;
};

// Where a peer's port is: LID on InfiniBand, GID on RoCE (Ethernet has no LIDs).
struct PortAddress {
  uint16_t lid = 0;
  uint8_t gid[16] = {};
  uint8_t ethernet = 0;
  uint8_t mtu = 0;  // ibv_mtu of the active MTU
};

struct OpenPort {
  Context ctx;
  ibv_device_attr device{};
  ibv_port_attr port{};
  std::string device_name;
  uint8_t port_num = 0;
  int gid_index = 0;
  uint64_t port_guid = 0;  // host order; from GID 0's interface id
  PortAddress address;
};

// device "" = the first device with an active port; port 0 = its first active port;
// gid_index < 0 = on RoCE the IPv4-mapped RoCE v2 GID (routable), on InfiniBand 0.
OpenPort open_port(const std::string& device, int port, int gid_index);

Cq create_cq(ibv_context* ctx, int entries, const ibv_device_attr& limits, const char* what);
// `unreliable`: a UC queue pair (no acknowledgements: a write completes when sent, a lost one is
// gone); else RC.
Qp create_qp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, uint32_t send_depth, uint32_t recv_depth,
             const ibv_device_attr& limits, bool unreliable = false);

// INIT -> RTR -> RTS towards (peer, remote_qpn); a UC queue pair takes only the attributes UC has
// (no retries, timeouts or read credits). dlid is used on InfiniBand (base LID + path
// offset), the peer's GID on RoCE.
// `sl`: the service level of the queue pair's path; on InfiniBand checked back from the QP (a
// device that drops it fails here, not silently). RoCE has none: set, not checked.
void connect_qp(ibv_qp* qp, const OpenPort& local, const PortAddress& peer, uint16_t dlid, uint32_t remote_qpn,
                uint8_t sl = 0);

}  // namespace ibroute::runner::verbs
