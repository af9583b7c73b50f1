// What one rank does in a run, derived from the schedule alone so that every rank derives the
// same connections without asking the others: the channels (one queue pair per distinct
// (source, destination, DLID) of the schedule: RC, or UC with --transport uc) and its timed sends.
#pragma once

#include <cstdint>
#include <vector>

#include "ibroute/schedule/schedule.hpp"

namespace ibroute::runner {

struct Channel {
  int32_t src = 0, dst = 0;  // schedule ranks
  uint16_t dlid = 0;         // 0 on RoCE-only schedules is fine: the DLID is then only recorded
  auto operator<=>(const Channel&) const = default;
};

// Distinct (src, dst, DLID) of all phases, sorted.
std::vector<Channel> channels_of(const schedule::Schedule& s);

// A rank's sends of one round, in phase order, and where each phase starts (slot_starts: phases + 1
// values, the last the round's slots). What a SendPlan is made of: from a whole schedule's row
// (rank_round) or from the rank's slice alone (epoch_follow.hpp, own_on_run).
struct PlannedSend {
  uint32_t phase = 0;
  int32_t dst = 0;
  uint16_t dlid = 0;
  bool operator==(const PlannedSend&) const = default;
};
struct RankRound {
  std::vector<uint64_t> starts;
  std::vector<PlannedSend> sends;
};
RankRound rank_round(const schedule::Schedule& s, int32_t rank);

struct TimedSend {
  uint64_t seq = 0;  // round * phases + phase: the transfer's number (its low 32 bits travel as immediate data)
  int32_t dst = 0;
  uint16_t dlid = 0;
  uint32_t channel = 0;  // index into channels_of()
  int64_t at_ns = 0;     // planned start after t0
};

// A rank's sends: one entry per phase it sends in. Send k of the run is entry k % per_round()
// of round k / per_round(), phase p of round r starting at (r * slots + start(p)) * slot_ns, where
// a round lasts `slots` slots and phase p starts start(p) slots into it (one slot per phase unless
// the schedule's phases differ in length), so nothing grows with the number of rounds.
class SendPlan {
 public:
  SendPlan() = default;
  SendPlan(const schedule::Schedule& s, const std::vector<Channel>& channels, int32_t rank, int64_t slot_ns)
      : SendPlan(rank_round(s, rank), channels, rank, slot_ns) {}
  // Every send's (rank, dst, dlid) must be one of `channels` (sorted).
  SendPlan(const RankRound& r, const std::vector<Channel>& channels, int32_t rank, int64_t slot_ns);
  size_t per_round() const { return entries_.size(); }
  uint64_t count(uint32_t rounds) const { return static_cast<uint64_t>(entries_.size()) * rounds; }
  TimedSend at(uint64_t k) const;
  int64_t slot_ns() const { return slot_ns_; }
  uint32_t phases() const { return phases_; }
  uint64_t slots() const { return slots_; }  // per round

 private:
  struct Entry {
    uint32_t phase = 0;
    uint64_t start = 0;  // slots into the round
    int32_t dst = 0;
    uint16_t dlid = 0;
    uint32_t channel = 0;
  };
  std::vector<Entry> entries_;
  uint32_t phases_ = 0;
  uint64_t slots_ = 0;
  int64_t slot_ns_ = 0;
};

// Skip rule (docs/background.md#the-skip-rule): a destination with `limit` unfinished transfers gets no more until some
// finish; the transfers that would have gone are counted as skipped.
class SkipRule {
 public:
  SkipRule(size_t ranks, uint32_t limit) : open_(ranks, 0), limit_(limit) {}
  bool admit(int32_t dst) const { return open_[static_cast<size_t>(dst)] < limit_; }
  void posted(int32_t dst) { ++open_[static_cast<size_t>(dst)]; }
  void finished(int32_t dst) { --open_[static_cast<size_t>(dst)]; }
  uint32_t open(int32_t dst) const { return open_[static_cast<size_t>(dst)]; }

 private:
  std::vector<uint32_t> open_;
  uint32_t limit_;
};

}  // namespace ibroute::runner
