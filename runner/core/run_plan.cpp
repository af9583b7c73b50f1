#include "ibroute/runner/run_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

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

RankRound rank_round(const schedule::Schedule& s, int32_t rank) {
  RankRound r{schedule::slot_starts(s), {}};
  for (uint32_t k = 0; k < s.phases.size(); ++k) {
    const schedule::Phase& ph = s.phases[k];
    if (const int32_t dst = ph.dst[static_cast<size_t>(rank)]; dst >= 0)
      r.sends.push_back({k, dst, ph.dlid[static_cast<size_t>(rank)]});
  }
  return r;
}

SendPlan::SendPlan(const RankRound& r, const std::vector<Channel>& channels, int32_t rank, int64_t slot_ns)
    : phases_(static_cast<uint32_t>(r.starts.empty() ? 0 : r.starts.size() - 1)),
      slots_(r.starts.empty() ? 0 : r.starts.back()),
      slot_ns_(slot_ns) {
  entries_.reserve(r.sends.size());
  for (const PlannedSend& x : r.sends) {
    const Channel want{rank, x.dst, x.dlid};
    auto it = std::lower_bound(channels.begin(), channels.end(), want);
    if (it == channels.end() ||
        *it != want)  // the callers check first; a silent wrong channel would count on another path
      throw std::invalid_argument("a send to rank " + std::to_string(x.dst) + " over DLID " + std::to_string(x.dlid) +
                                  " is on no channel of the run");
    entries_.push_back({x.phase, r.starts[x.phase], x.dst, x.dlid, static_cast<uint32_t>(it - channels.begin())});
  }
}

TimedSend SendPlan::at(uint64_t k) const {
  const Entry& e = entries_[k % entries_.size()];
  const uint64_t round = k / entries_.size();
  const uint64_t seq = round * phases_ + e.phase;
  return {seq, e.dst, e.dlid, e.channel, static_cast<int64_t>(round * slots_ + e.start) * slot_ns_};
}

}  // namespace ibroute::runner
