#include "ibroute/runner/run_report.hpp"

#include <algorithm>
#include <climits>

namespace ibroute::runner {

RunSummary summarise(const schedule::Schedule& s, const RunMerge& m, const std::vector<int32_t>& missing_ranks,
                     const fabric::Fabric* fabric, const fabric::LinkIndex* links) {
  RunSummary r;
  r.missing_ranks = missing_ranks;
  const size_t n = s.hosts.size();
  r.nodes.resize(n);
  int64_t t_first = INT64_MAX, t_last = INT64_MIN;
  for (size_t i = 0; i < n; ++i) {
    const NodeTotals& t = m.nodes[i];
    NodeStat& ns = r.nodes[i];
    ns.rank = static_cast<int32_t>(i);
    ns.bytes_sent = t.bytes_sent, ns.bytes_received = t.bytes_received;
    ns.ok = t.ok, ns.skipped = t.skipped, ns.failed = t.failed;
    if (t.last_completion_ns > t.first_post_ns && t.first_post_ns != 0) {
      ns.send_gbps =
          static_cast<double>(t.bytes_sent) * 8 / static_cast<double>(t.last_completion_ns - t.first_post_ns);
      t_first = std::min(t_first, t.first_post_ns), t_last = std::max(t_last, t.last_completion_ns);
    }
    ns.late_p99_ns = t.late.quantile(0.99), ns.completion_p99_ns = t.completion.quantile(0.99);
    ns.completion_in_p99_ns = t.completion_in.quantile(0.99);
  }
  for (const PathCounters& p : m.paths) {
    r.planned += p.planned, r.ok += p.ok, r.skipped += p.skipped, r.timeout += p.timeout, r.failed += p.failed,
        r.lost += p.lost;
    r.corrupt += p.corrupt, r.bytes_ok += p.bytes;
  }
  if (t_last > t_first) {
    r.seconds = static_cast<double>(t_last - t_first) * 1e-9;
    r.aggregate_gbps = static_cast<double>(r.bytes_ok) * 8 / static_cast<double>(t_last - t_first);
  }
  r.late_median_ns = m.late.quantile(0.5), r.late_p99_ns = m.late.quantile(0.99), r.late_max_ns = m.late.max();
  r.completion_median_ns = m.completion.quantile(0.5), r.completion_p99_ns = m.completion.quantile(0.99);
  r.completion_max_ns = m.completion.max();
  if (!fabric || !links) return r;
  std::vector<LinkStat> per_link(links->size());
  std::vector<int32_t> path;
  fabric::PathFinder finder(*fabric, *links);
  for (size_t c = 0; c < m.channels.size(); ++c) {
    const PathCounters& p = m.paths[c];
    if (p.planned == 0) continue;
    const schedule::Host& h = s.hosts[static_cast<size_t>(m.channels[c].src)];
    path.clear();
    if (h.node < 0 || finder.path(h.node, h.port, m.channels[c].dlid, path) != fabric::RouteStatus::ok) continue;
    for (int32_t l : path) {
      LinkStat& ls = per_link[static_cast<size_t>(l)];
      ls.link = l;
      ls.bytes += p.bytes, ls.transfers += p.ok, ls.skipped += p.skipped, ls.failed += p.timeout + p.failed + p.lost;
    }
  }
  for (const LinkStat& ls : per_link)
    if (ls.link >= 0) r.links.push_back(ls);
  return r;
}

}  // namespace ibroute::runner
