#include "ibroute/runner/run_plan.hpp"

#include <algorithm>

namespace ibroute::runner {

std::vector<Channel> channels_of(const schedule::Schedule& s) {
  std::vector<Channel> ch;
  for (const schedule::Phase& ph : s.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] >= 0) ch.push_back({static_cast<int32_t>(i), ph.dst[i], ph.dlid[i]});
  std::sort(ch.begin(), ch.end());
  ch.erase(std::unique(ch.begin(), ch.end()), ch.end());
  return ch;
}

SendPlan::SendPlan(const schedule::Schedule& s, const std::vector<Channel>& channels, int32_t rank, int64_t slot_ns)
    : phases_(static_cast<uint32_t>(s.phases.size())), slot_ns_(slot_ns) {
  const std::vector<uint64_t> start = schedule::slot_starts(s);
  slots_ = start.back();
  for (uint32_t k = 0; k < phases_; ++k) {
    const schedule::Phase& ph = s.phases[k];
    int32_t dst = ph.dst[static_cast<size_t>(rank)];
    if (dst < 0) continue;
    Channel want{rank, dst, ph.dlid[static_cast<size_t>(rank)]};
    auto it = std::lower_bound(channels.begin(), channels.end(), want);
    entries_.push_back({k, start[k], dst, want.dlid, static_cast<uint32_t>(it - channels.begin())});
  }
}

TimedSend SendPlan::at(uint64_t k) const {
  const Entry& e = entries_[k % entries_.size()];
  const uint64_t round = k / entries_.size();
  const uint64_t seq = round * phases_ + e.phase;
  return {seq, e.dst, e.dlid, e.channel, static_cast<int64_t>(round * slots_ + e.start) * slot_ns_};
}

}  // namespace ibroute::runner
