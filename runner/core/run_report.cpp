#include "ibroute/runner/run_report.hpp"

#include <algorithm>
#include <climits>

namespace ibroute::runner {

const char* to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::skipped: return "skipped";
    case Status::timeout: return "timeout";
    case Status::failed: return "failed";
    case Status::lost: return "lost";
  }
  return "?";
}

RunSummary summarise(const schedule::Schedule& s, const std::vector<TransferRecord>& records,
                     const std::vector<int32_t>& missing_ranks, const fabric::Fabric* fabric,
                     const fabric::LinkIndex* links) {
  RunSummary r;
  r.missing_ranks = missing_ranks;
  const size_t n = s.hosts.size();
  r.nodes.resize(n);
  std::vector<int64_t> first(n, INT64_MAX), last(n, INT64_MIN);
  for (size_t i = 0; i < n; ++i) r.nodes[i].rank = static_cast<int32_t>(i);
  std::vector<int64_t> late;
  int64_t t_first = INT64_MAX, t_last = INT64_MIN;
  std::vector<LinkStat> per_link(links ? links->size() : 0);
  std::vector<int32_t> path;
  std::optional<fabric::PathFinder> finder;
  if (fabric && links) finder.emplace(*fabric, *links);
  for (const TransferRecord& t : records) {
    ++r.planned;
    NodeStat& src = r.nodes[static_cast<size_t>(t.src)];
    switch (t.status) {
      case Status::ok: ++r.ok, ++src.ok; break;
      case Status::skipped: ++r.skipped, ++src.skipped; break;
      case Status::timeout: ++r.timeout, ++src.failed; break;
      case Status::failed: ++r.failed, ++src.failed; break;
      case Status::lost: ++r.lost, ++src.failed; break;
    }
    if (t.verified == 2) ++r.corrupt;
    if (t.posted_ns) late.push_back(t.posted_ns - t.planned_ns);
    if (t.status == Status::ok) {
      r.bytes_ok += t.bytes;
      src.bytes_sent += t.bytes;
      r.nodes[static_cast<size_t>(t.dst)].bytes_received += t.bytes;
      first[static_cast<size_t>(t.src)] = std::min(first[static_cast<size_t>(t.src)], t.posted_ns);
      last[static_cast<size_t>(t.src)] = std::max(last[static_cast<size_t>(t.src)], t.completed_ns);
      t_first = std::min(t_first, t.posted_ns), t_last = std::max(t_last, t.completed_ns);
    }
    if (!finder) continue;
    const schedule::Host& h = s.hosts[static_cast<size_t>(t.src)];
    path.clear();
    if (h.node < 0 || finder->path(h.node, h.port, t.dlid, path) != fabric::RouteStatus::ok) continue;
    for (int32_t l : path) {
      LinkStat& ls = per_link[static_cast<size_t>(l)];
      ls.link = l;
      if (t.status == Status::ok) ls.bytes += t.bytes, ++ls.transfers;
      else if (t.status == Status::skipped) ++ls.skipped;
      else ++ls.failed;
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (last[i] > first[i]) r.nodes[i].send_gbps = static_cast<double>(r.nodes[i].bytes_sent) * 8 / static_cast<double>(last[i] - first[i]);
  if (t_last > t_first) {
    r.seconds = static_cast<double>(t_last - t_first) * 1e-9;
    r.aggregate_gbps = static_cast<double>(r.bytes_ok) * 8 / static_cast<double>(t_last - t_first);
  }
  if (!late.empty()) {
    std::sort(late.begin(), late.end());
    r.late_median_ns = late[late.size() / 2];
    r.late_p99_ns = late[std::min(late.size() - 1, late.size() * 99 / 100)];
    r.late_max_ns = late.back();
  }
  for (const LinkStat& ls : per_link)
    if (ls.link >= 0) r.links.push_back(ls);
  return r;
}

}  // namespace ibroute::runner
