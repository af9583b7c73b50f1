#include "verbs.hpp"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ibroute::runner::verbs {

Buffer::Buffer(size_t bytes) : size(bytes) {
  if (bytes == 0) return;
  if (posix_memalign(reinterpret_cast<void**>(&data), 4096, bytes) != 0)
    throw VerbsError("cannot allocate " + std::to_string(bytes) + " bytes");
  std::memset(data, 0, bytes);
}
Buffer::~Buffer() { std::free(data); }

namespace {

std::string err(const std::string& what) { return what + ": " + std::strerror(errno); }

bool is_ipv4_mapped(const ibv_gid& g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.raw, prefix, 12) == 0;
}

}  // namespace

OpenPort open_port(const std::string& device, int port, int gid_index) {
  int n = 0;
  std::unique_ptr<ibv_device*, Destroyer<ibv_device*, ibv_free_device_list>> list(ibv_get_device_list(&n));
  if (!list || n == 0) throw VerbsError("no RDMA device found (is the driver loaded? ibv_devices lists none)");
  OpenPort p;
  std::string seen;
  for (int d = 0; d < n; ++d) {
    std::string name = ibv_get_device_name(list.get()[d]);
    seen += (seen.empty() ? "" : ", ") + name;
    if (!device.empty() && name != device) continue;
    Context ctx(ibv_open_device(list.get()[d]));
    if (!ctx) throw VerbsError(err("cannot open " + name));
    ibv_device_attr da{};
    if (ibv_query_device(ctx.get(), &da)) throw VerbsError(err("ibv_query_device " + name));
    for (int pn = 1; pn <= da.phys_port_cnt; ++pn) {
      if (port && pn != port) continue;
      ibv_port_attr pa{};
      if (ibv_query_port(ctx.get(), static_cast<uint8_t>(pn), &pa)) continue;
      if (pa.state != IBV_PORT_ACTIVE) {
        if (port) throw VerbsError(name + " port " + std::to_string(pn) + " is not active");
        continue;
      }
      p.ctx = std::move(ctx);
      p.device = da;
      p.port = pa;
      p.device_name = name;
      p.port_num = static_cast<uint8_t>(pn);
      p.address.ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
      p.address.lid = pa.lid;
      p.address.mtu = static_cast<uint8_t>(pa.active_mtu);
      ibv_gid g0{};
      if (ibv_query_gid(p.ctx.get(), p.port_num, 0, &g0) == 0) {
        uint64_t guid_be;
        std::memcpy(&guid_be, g0.raw + 8, 8);
        p.port_guid = be64toh(guid_be);
      }
      int gi = gid_index;
      if (gi < 0) {
        gi = 0;
        if (p.address.ethernet)
          for (int k = 0; k < pa.gid_tbl_len; ++k) {
            ibv_gid g{};
            if (ibv_query_gid(p.ctx.get(), p.port_num, k, &g) == 0 && is_ipv4_mapped(g)) {
              gi = k;
              break;
            }
          }
      }
      ibv_gid g{};
      if (ibv_query_gid(p.ctx.get(), p.port_num, gi, &g)) throw VerbsError(err("ibv_query_gid " + std::to_string(gi)));
      p.gid_index = gi;
      std::memcpy(p.address.gid, g.raw, 16);
      return p;
    }
    if (!device.empty())
      throw VerbsError("device " + name + " has no active port" + (port ? " " + std::to_string(port) : ""));
  }
  if (!device.empty()) throw VerbsError("no RDMA device named " + device + " (found: " + seen + ")");
  throw VerbsError("no RDMA device with an active port (found: " + seen + ")");
}

Cq create_cq(ibv_context* ctx, int entries, const ibv_device_attr& limits, const char* what) {
  if (entries > limits.max_cqe)
    throw VerbsError(std::string(what) + " completion queue needs " + std::to_string(entries) +
                     " entries, the device allows " + std::to_string(limits.max_cqe) +
                     ": lower --skip-after or use fewer ranks per node");
  Cq cq(ibv_create_cq(ctx, std::max(entries, 1), nullptr, nullptr, 0));
  if (!cq) throw VerbsError(err(std::string("ibv_create_cq (") + what + ", " + std::to_string(entries) + " entries)"));
  return cq;
}

Qp create_qp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, uint32_t send_depth, uint32_t recv_depth,
             const ibv_device_attr& limits, bool unreliable) {
  if (send_depth > static_cast<uint32_t>(limits.max_qp_wr) || recv_depth > static_cast<uint32_t>(limits.max_qp_wr))
    throw VerbsError("queue pair depth " + std::to_string(std::max(send_depth, recv_depth)) + " above the device's " +
                     std::to_string(limits.max_qp_wr));
  ibv_qp_init_attr a{};
  a.send_cq = send_cq;
  a.recv_cq = recv_cq;
  a.qp_type = unreliable ? IBV_QPT_UC : IBV_QPT_RC;
  a.cap.max_send_wr = std::max(send_depth, 1u);
  a.cap.max_recv_wr = std::max(recv_depth, 1u);
  a.cap.max_send_sge = 1;
  a.cap.max_recv_sge = 1;
  a.cap.max_inline_data = 64;  // the clock ping-pong's messages go inline
  Qp qp(ibv_create_qp(pd, &a));
  if (!qp)
    throw VerbsError(
        err(unreliable ? "ibv_create_qp (UC: does the device support unreliable connections?)" : "ibv_create_qp"));
  return qp;
}

void connect_qp(ibv_qp* qp, const OpenPort& local, const PortAddress& peer, uint16_t dlid, uint32_t remote_qpn,
                uint8_t sl) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = local.port_num;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    throw VerbsError(err("QP to INIT"));

  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = static_cast<ibv_mtu>(std::min(local.address.mtu, peer.mtu));
  a.dest_qp_num = remote_qpn;
  a.rq_psn = 0;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;  // 0.64 ms: a receiver short of receive requests is retried soon
  a.ah_attr.port_num = local.port_num;
  a.ah_attr.sl = sl;
  if (local.address.ethernet) {
    a.ah_attr.is_global = 1;
    std::memcpy(a.ah_attr.grh.dgid.raw, peer.gid, 16);
    a.ah_attr.grh.sgid_index = static_cast<uint8_t>(local.gid_index);
    a.ah_attr.grh.hop_limit = 64;
  } else {
    a.ah_attr.dlid = dlid ? dlid : peer.lid;
  }
  const bool uc = qp->qp_type == IBV_QPT_UC;
  const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  if (ibv_modify_qp(qp, &a, uc ? rtr : rtr | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    throw VerbsError(err("QP to RTR"));
  if (sl && !local.address.ethernet) {  // RoCE has no service levels (rxe keeps none): nothing to check there
    ibv_qp_attr got{};
    ibv_qp_init_attr init{};
    if (ibv_query_qp(qp, &got, IBV_QP_AV, &init)) throw VerbsError(err("ibv_query_qp"));
    if (got.ah_attr.sl != sl)
      throw VerbsError("the device set service level " + std::to_string(got.ah_attr.sl) + ", not " +
                       std::to_string(sl) + " (--sl)");
  }

  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;  // 67 ms per try, 7 tries: a dead peer fails its transfers in about 0.5 s
  a.retry_cnt = 7;
  a.rnr_retry = 7;  // a busy receiver is retried forever; the skip rule bounds what piles up
  a.sq_psn = 0;
  a.max_rd_atomic = 1;
  const int rts = IBV_QP_STATE | IBV_QP_SQ_PSN;
  if (ibv_modify_qp(qp, &a,
                    uc ? rts : rts | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
    throw VerbsError(err("QP to RTS"));
}

}  // namespace ibroute::runner::verbs
