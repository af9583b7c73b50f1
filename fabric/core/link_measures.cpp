#include "ibroute/fabric/link_measures.hpp"

#include <algorithm>
#include <cmath>

namespace ibroute::fabric {

std::vector<uint64_t> planned_bytes(const std::vector<uint32_t>& link_total, uint64_t bytes_per_transfer_round) {
  std::vector<uint64_t> out(link_total.size());
  for (size_t l = 0; l < link_total.size(); ++l) out[l] = link_total[l] * bytes_per_transfer_round;
  return out;
}

LinkMeasures measure_links(const std::vector<PortDelta>& deltas, const LinkIndex& links,
                           const std::vector<uint64_t>& planned_per_link, double seconds, double tick_ns,
                           double tolerance, uint64_t noise_bytes) {
  LinkMeasures out;
  std::vector<const PortDelta*> read(links.size(), nullptr);
  for (const PortDelta& d : deltas) {
    const int32_t l = links.id(d.node, d.port);
    if (l >= 0 && static_cast<size_t>(l) < links.size() && links.node(l) == d.node) read[static_cast<size_t>(l)] = &d;
  }
  const auto xmit_data = static_cast<size_t>(Counter::xmit_data), xmit_wait = static_cast<size_t>(Counter::xmit_wait);
  for (size_t l = 0; l < links.size(); ++l) {
    const uint64_t planned = l < planned_per_link.size() ? planned_per_link[l] : 0;
    const PortDelta* d = read[l];
    if (planned) {
      ++out.planned_links;
      if (d)
        out.planned_bytes += planned;  // the totals compare links read on both sides
      else
        ++out.unread_links;
    }
    if (!d) continue;
    LinkMeasure m;
    m.link = static_cast<int32_t>(l);
    m.planned_bytes = planned;
    m.measured_bytes = d->delta[xmit_data] * 4;  // PortXmitData counts 4-octet words
    m.xmit_wait = d->delta[xmit_wait];
    m.errors = d->errors();
    if (seconds > 0 && tick_ns > 0) {
      m.wait_share = std::min(1.0, static_cast<double>(m.xmit_wait) * tick_ns * 1e-9 / seconds);
      out.worst_wait_share = std::max(out.worst_wait_share.value_or(0), *m.wait_share);
    }
    if (!planned && !m.measured_bytes && !m.xmit_wait && !m.errors) continue;
    if (planned) out.measured_bytes += m.measured_bytes;
    const std::optional<double> r = m.ratio();
    if (r ? (*r > tolerance || *r < 1 / tolerance) : m.measured_bytes > noise_bytes) ++out.off_links;
    out.rows.push_back(m);
  }
  // The worst deviation first: bytes measured apart from the plan, either way.
  auto gap = [](const LinkMeasure& m) {
    return m.measured_bytes > m.planned_bytes ? m.measured_bytes - m.planned_bytes : m.planned_bytes - m.measured_bytes;
  };
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [&](const LinkMeasure& a, const LinkMeasure& b) { return gap(a) > gap(b); });
  return out;
}

}  // namespace ibroute::fabric
