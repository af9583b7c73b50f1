#include "ibroute/schedule/admission.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "ibroute/fabric/error.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

std::string describe_link(const Fabric& f, const LinkIndex& links, int32_t link) {
  const Node& n = f.nodes[links.node(link)];
  int p = links.port(link);
  const Port& port = n.ports[p];
  std::string s = n.desc + "[" + std::to_string(p) + "]";
  if (port.connected()) s += " -> " + f.nodes[port.peer_node].desc + "[" + std::to_string(port.peer_port) + "]";
  return s;
}

namespace {
std::string rate_text(double bytes_per_s) {
  char buf[64];
  // One convention everywhere: Gb/s as links are sold, the bytes in brackets; three significant
  // digits, never in exponent form ("8000 Gb/s (1000 GB/s)", not "1e+03").
  const double gb = bytes_per_s / 1e9;
  std::snprintf(buf, sizeof buf, gb * 8 >= 100 ? "%.0f Gb/s (%.4g GB/s)" : "%.3g Gb/s (%.3g GB/s)", gb * 8, gb);
  return buf;
}
}  // namespace

RateLimit max_rate(const EvalContext& ctx, const LoadReport& load, bool slotted) {
  RateLimit r{std::numeric_limits<double>::infinity(), ""};
  for (size_t l = 0; l < load.link_worst.size(); ++l) {
    if (load.link_worst[l] == 0) continue;
    double carry = ctx.gbps[l] * 1e9 / 8;  // bytes per second the link carries
    double limit = carry / (slotted ? load.link_share[l] : load.link_worst[l]);
    if (limit < r.max_rate) {
      r.max_rate = limit;
      bool host_side = !ctx.switch_link(static_cast<int32_t>(l));
      // The link's own rate only where it differs from the limit (shared by several transfers).
      const bool shared = slotted ? load.link_share[l] > 1 : load.link_worst[l] > 1;
      r.limited_by = describe_link(ctx.fabric, ctx.links, static_cast<int32_t>(l)) +
                     (shared ? " carries " + rate_text(carry) +
                                   (slotted ? "" : " for " + std::to_string(load.link_worst[l]) + " transfers at once")
                             : "") +
                     (host_side ? " (a host link)" : "");
    }
  }
  if (!std::isfinite(r.max_rate)) r.max_rate = 0;
  return r;
}

Timing make_timing(const EvalContext& ctx, const LoadReport& load, uint64_t message_size, double rate, bool slotted) {
  if (message_size == 0) throw InputError("the message size must be more than 0 bytes");
  RateLimit lim = max_rate(ctx, load, slotted);
  if (lim.max_rate <= 0) throw InputError("no transfer of this schedule has a working route: no rate is possible");
  if (rate < 0) throw InputError("the rate must be positive");
  if (rate > lim.max_rate * (1 + 1e-9))
    throw InputError("rate " + rate_text(rate) + " per node is more than the fabric carries: at most " + rate_text(lim.max_rate) +
                     ", because " + lim.limited_by);
  Timing t;
  t.message_size = message_size;
  t.rate = rate > 0 ? rate : lim.max_rate;
  t.slot_s = static_cast<double>(message_size) / t.rate;
  return t;
}

}  // namespace ibroute::schedule
