// Topology from libibnetdisc, converted into the pure fabric model. libibnetdisc logs MAD
// timeouts and still returns a fabric: ports that are LinkUp but whose peer it never reached
// are the trace of that, and are recorded so the scan is marked incomplete.
#include <infiniband/ibnetdisc.h>
#include <infiniband/umad.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "ibroute/fabric/error.hpp"
#include "live_internal.hpp"

namespace ibroute::fabric::live {

namespace {
constexpr int kPhysLinkUp = 5;

std::string speed_name(const ibnd_port_t* p) {
  const uint8_t* info = p->info;
  int ext = mad_get_field(const_cast<uint8_t*>(info), 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
  switch (ext) {
    case 1:
      return "FDR";
    case 2:
      return "EDR";
    case 4:
      return "HDR";
    case 8:
      return "NDR";
    default:
      break;
  }
  if (mad_get_field(const_cast<uint8_t*>(p->ext_info), 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) == 1) return "FDR10";
  switch (mad_get_field(const_cast<uint8_t*>(info), 0, IB_PORT_LINK_SPEED_ACTIVE_F)) {
    case 1:
      return "SDR";
    case 2:
      return "DDR";
    case 4:
      return "QDR";
    default:
      return "";
  }
}

void check_ca(const std::string& ca, int port) {
  if (ca.empty()) return;
  umad_ca_t info{};
  if (umad_get_ca(ca.c_str(), &info) < 0) {
    char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
    int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
    std::string have;
    for (int i = 0; i < n; ++i) have += (i ? ", " : "") + std::string(names[i]);
    throw InputError("no CA named '" + ca + "' (this host has: " + (have.empty() ? "none" : have) + ")");
  }
  int nports = info.numports;
  umad_release_ca(&info);
  if (port < 0 || port > nports)
    throw InputError("CA '" + ca + "' has no port " + std::to_string(port) + " (it has " + std::to_string(nports) +
                     ")");
}
}  // namespace

struct FabricDeleter {
  void operator()(ibnd_fabric_t* f) const { ibnd_destroy_fabric(f); }
};

namespace {
// libibnetdisc's fabric in the pure model, with each node's directed route and LFT top.
Discovered convert(const ibnd_fabric_t* raw) {
  Discovered d;
  std::unordered_map<const ibnd_node_t*, int> index;
  for (ibnd_node_t* n = raw->nodes; n; n = n->next) {
    index[n] = static_cast<int>(d.fabric.nodes.size());
    Node node;
    node.type = n->type == IB_NODE_SWITCH ? NodeType::sw : n->type == IB_NODE_ROUTER ? NodeType::router : NodeType::ca;
    node.guid = n->guid;
    node.sysimg_guid = mad_get_field64(n->info, 0, IB_NODE_SYSTEM_GUID_F);
    node.desc = std::string(n->nodedesc, strnlen(n->nodedesc, sizeof n->nodedesc));
    node.ports.resize(n->numports + 1);
    d.fabric.nodes.push_back(std::move(node));
    d.paths.push_back(n->path_portid);
    d.lft_top.push_back(n->type == IB_NODE_SWITCH ? mad_get_field(n->switchinfo, 0, IB_SW_LINEAR_FDB_TOP_F) : 0);
  }
  for (ibnd_node_t* n = raw->nodes; n; n = n->next) {
    int ni = index[n];
    Node& node = d.fabric.nodes[ni];
    for (int pn = 0; pn <= n->numports; ++pn) {
      ibnd_port_t* p = n->ports ? n->ports[pn] : nullptr;
      if (!p) continue;
      Port& port = node.ports[pn];
      port.guid = p->guid;
      if (!node.is_switch() || pn == 0) {
        port.base_lid = p->base_lid <= kMaxLid ? p->base_lid : 0;
        port.lmc = p->lmc <= 7 ? p->lmc : 0;
      }
      port.state = static_cast<PortState>(std::min(mad_get_field(p->info, 0, IB_PORT_STATE_F) & 7, 4u));
      if (pn == 0) continue;
      port.width = lanes_of_width_mask(mad_get_field(p->info, 0, IB_PORT_LINK_WIDTH_ACTIVE_F));
      port.speed = speed_name(p);
      if (p->remoteport) {
        auto it = index.find(p->remoteport->node);
        if (it != index.end() && p->remoteport->portnum >= 1 &&
            p->remoteport->portnum <= p->remoteport->node->numports) {
          port.peer_node = it->second;
          port.peer_port = static_cast<uint8_t>(p->remoteport->portnum);
        }
      } else if (mad_get_field(p->info, 0, IB_PORT_PHYS_STATE_F) == kPhysLinkUp && node.is_switch()) {
        d.fabric.complete = false;
        d.fabric.problems.push_back(
            {"unanswered_port", node.guid, pn,
             node.desc + " port " + std::to_string(pn) + " is LinkUp but the node behind it did not answer"});
      }
    }
  }
  return d;
}
}  // namespace

Fabric load_cache(const std::string& path) {
  std::string file = path;
  std::unique_ptr<ibnd_fabric_t, FabricDeleter> raw(ibnd_load_fabric(file.c_str(), 0));
  if (!raw)
    throw InputError(path + ": not an ibnetdiscover cache file libibnetdisc can load (damaged, or of another version)");
  Fabric f = convert(raw.get()).fabric;
  if (f.nodes.empty()) throw InputError(path + ": the ibnetdiscover cache holds no nodes");
  return f;
}

Discovered discover(const LiveScanOptions& opt) {
  check_ca(opt.ca, opt.port);
  ibnd_config_t cfg{};
  cfg.timeout_ms = static_cast<unsigned>(opt.timeout_ms);
  cfg.retries = static_cast<unsigned>(opt.retries);
  std::string ca = opt.ca;
  std::unique_ptr<ibnd_fabric_t, FabricDeleter> raw(
      ibnd_discover_fabric(ca.empty() ? nullptr : ca.data(), opt.port, nullptr, &cfg));
  if (!raw)
    throw std::runtime_error("fabric discovery failed from " +
                             (ca.empty() ? std::string("the default CA") : "CA '" + ca + "'") +
                             " (no subnet manager, port down, or no access to umad)");

  return convert(raw.get());
}

}  // namespace ibroute::fabric::live

namespace ibroute::fabric {
Fabric load_ibnd_cache(const std::string& path) { return live::load_cache(path); }
}  // namespace ibroute::fabric
