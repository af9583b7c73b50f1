#include "ibroute/runner/epoch_follow.hpp"

#include <algorithm>
#include <unordered_map>

namespace ibroute::runner {

FollowChannels::FollowChannels(std::vector<uint16_t> base_lids, uint8_t lmc)
    : base_(std::move(base_lids)), paths_(1u << std::min<uint8_t>(lmc, 7)), before_(base_.size() + 1, 0) {
  for (size_t d = 0; d < base_.size(); ++d) before_[d + 1] = before_[d] + paths(d);
  // Source s reaches every destination's DLIDs but its own.
  for (size_t s = 0; s < base_.size(); ++s) total_ += before_.back() - paths(s);
}

uint32_t FollowChannels::paths(size_t d) const { return std::min<uint32_t>(paths_, 0x10000u - base_[d]); }

uint64_t FollowChannels::id(int32_t s, int32_t d, uint32_t o) const {
  const auto su = static_cast<size_t>(s), du = static_cast<size_t>(d);
  // Sources before s: each all DLIDs but its own; then s's destinations before d, s itself skipped.
  return static_cast<uint64_t>(su) * before_.back() - before_[su] + before_[du] - (su < du ? paths(su) : 0) + o;
}

std::vector<Channel> FollowChannels::all() const {
  std::vector<Channel> ch;
  ch.reserve(total_);
  const auto n = static_cast<int32_t>(base_.size());
  for (int32_t s = 0; s < n; ++s)
    for (int32_t d = 0; d < n; ++d)
      for (uint32_t o = 0; s != d && o < paths(static_cast<size_t>(d)); ++o)
        ch.push_back({s, d, static_cast<uint16_t>(base_[static_cast<size_t>(d)] + o)});
  return ch;
}

void FollowChannels::own(int32_t me, std::vector<Channel>& channels, std::vector<uint32_t>& ids) const {
  channels.clear(), ids.clear();
  const auto n = static_cast<int32_t>(base_.size());
  auto add = [&](int32_t s, int32_t d) {
    for (uint32_t o = 0; o < paths(static_cast<size_t>(d)); ++o)
      channels.push_back({s, d, static_cast<uint16_t>(base_[static_cast<size_t>(d)] + o)}),
          ids.push_back(static_cast<uint32_t>(id(s, d, o)));
  };
  // In channel order: what the lower ranks send me, what I send, what the higher ranks send me.
  for (int32_t s = 0; s < me; ++s) add(s, me);
  for (int32_t d = 0; d < n; ++d)
    if (d != me) add(me, d);
  for (int32_t s = me + 1; s < n; ++s) add(s, me);
}

std::string FollowChannels::off_channels(const schedule::Schedule& s) const {
  for (size_t p = 0; p < s.phases.size(); ++p)
    for (size_t i = 0; i < s.phases[p].dst.size(); ++i) {
      const int32_t d = s.phases[p].dst[i];
      if (d < 0) continue;
      const uint16_t dlid = s.phases[p].dlid[i];
      const auto du = static_cast<size_t>(d);
      const bool known = du < base_.size() && i < base_.size();
      if (known && dlid >= base_[du] && static_cast<uint32_t>(dlid - base_[du]) < paths(du)) continue;
      const std::string what =
          "phase " + std::to_string(p) + ": transfer " + std::to_string(i) + " -> " + std::to_string(d);
      if (!known) return what + ": a host the run has no LIDs of";
      return what + " over DLID " + std::to_string(dlid) + ", which is not one of its destination's LIDs " +
             std::to_string(base_[du]) + ".." + std::to_string(base_[du] + paths(du) - 1);
    }
  return "";
}

bool epoch_on_run(const schedule::Schedule& epoch, const std::vector<uint64_t>& epoch_guids,
                  const schedule::Schedule& run, const std::vector<uint64_t>& run_guids,
                  const std::vector<char>& dropped, const std::vector<Channel>& channels, EpochOnRun& out,
                  std::string& why) {
  std::unordered_map<uint64_t, int32_t> rank_of;
  for (size_t r = 0; r < run_guids.size(); ++r) rank_of.emplace(run_guids[r], static_cast<int32_t>(r));
  std::vector<int32_t> to_run(epoch.hosts.size(), -1);
  for (size_t h = 0; h < epoch.hosts.size() && h < epoch_guids.size(); ++h)
    if (auto it = rank_of.find(epoch_guids[h]);
        it != rank_of.end() &&
        !(static_cast<size_t>(it->second) < dropped.size() && dropped[static_cast<size_t>(it->second)]))
      to_run[h] = it->second;
  out = {};
  out.schedule.name = epoch.name;
  out.schedule.hosts = run.hosts;
  out.schedule.method = epoch.method;
  out.schedule.bound = epoch.bound;
  out.schedule.timing = epoch.timing;
  out.schedule.slots = epoch.slots;
  const size_t n = run.hosts.size();
  for (const schedule::Phase& ph : epoch.phases) {
    schedule::Phase p{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)};
    for (size_t i = 0; i < ph.dst.size() && i < to_run.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      const int32_t s = to_run[i];
      const int32_t d = static_cast<size_t>(ph.dst[i]) < to_run.size() ? to_run[static_cast<size_t>(ph.dst[i])] : -1;
      if (s < 0 || d < 0) {
        ++out.outside;
        continue;
      }
      const Channel want{s, d, ph.dlid[i]};
      if (!std::binary_search(channels.begin(), channels.end(), want)) {
        why = "its transfer " + epoch.hosts[i].name + " -> " + epoch.hosts[static_cast<size_t>(ph.dst[i])].name +
              " over DLID " + std::to_string(ph.dlid[i]) +
              " is on no connection of the run (the host's LIDs changed since the run started?)";
        return false;
      }
      p.dst[static_cast<size_t>(s)] = d, p.dlid[static_cast<size_t>(s)] = ph.dlid[i];
    }
    out.schedule.phases.push_back(std::move(p));
  }
  // Groups: the epoch's senders and receivers that are ranks of the run.
  for (int32_t h : epoch.senders)
    if (h >= 0 && static_cast<size_t>(h) < to_run.size() && to_run[static_cast<size_t>(h)] >= 0)
      out.schedule.senders.push_back(to_run[static_cast<size_t>(h)]);
  for (int32_t h : epoch.receivers)
    if (h >= 0 && static_cast<size_t>(h) < to_run.size() && to_run[static_cast<size_t>(h)] >= 0)
      out.schedule.receivers.push_back(to_run[static_cast<size_t>(h)]);
  std::sort(out.schedule.senders.begin(), out.schedule.senders.end());
  std::sort(out.schedule.receivers.begin(), out.schedule.receivers.end());
  if (out.schedule.phases.empty()) {
    why = "it has no phases";
    return false;
  }
  return true;
}

bool own_on_run(const OwnEpoch& e, const std::vector<uint64_t>& run_guids, const std::vector<char>& dropped,
                const std::vector<Channel>& channels, int32_t me, uint64_t round_slots, RankRound& out,
                std::string& why) {
  const auto is_dropped = [&](size_t r) { return r < dropped.size() && dropped[r]; };
  out = {{0, round_slots}, {}};
  if (!e.has_slice || is_dropped(static_cast<size_t>(me))) return true;
  if (e.round.starts.empty() || e.round.starts.back() != round_slots) {
    why = "its slice's round is " + std::to_string(e.round.starts.empty() ? 0 : e.round.starts.back()) +
          " slots, rank 0's " + std::to_string(round_slots) + " (the slice of another epoch?)";
    return false;
  }
  std::unordered_map<uint64_t, int32_t> rank_of;
  for (size_t r = 0; r < run_guids.size(); ++r) rank_of.emplace(run_guids[r], static_cast<int32_t>(r));
  out.starts = e.round.starts;
  for (const PlannedSend& x : e.round.sends) {
    const auto it = x.dst >= 0 && static_cast<size_t>(x.dst) < e.guids.size()
                        ? rank_of.find(e.guids[static_cast<size_t>(x.dst)])
                        : rank_of.end();
    if (it == rank_of.end() || is_dropped(static_cast<size_t>(it->second))) continue;
    if (static_cast<size_t>(x.phase) + 1 >= out.starts.size()) {
      why = "its send in phase " + std::to_string(x.phase) + " of " + std::to_string(out.starts.size() - 1);
      return false;
    }
    if (!std::binary_search(channels.begin(), channels.end(), Channel{me, it->second, x.dlid})) {
      why = "its send to rank " + std::to_string(it->second) + " in phase " + std::to_string(x.phase) + " over DLID " +
            std::to_string(x.dlid) + " is on no connection of the run (the host's LIDs changed since the run started?)";
      return false;
    }
    out.sends.push_back({x.phase, it->second, x.dlid});
  }
  return true;
}

}  // namespace ibroute::runner
