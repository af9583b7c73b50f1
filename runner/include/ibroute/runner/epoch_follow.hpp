// `ibroute run --follow DIR` (docs/epochs.md): the run switches to each new epoch of DIR at a round
// every rank agrees on. Connections cannot change mid-run, so a following run connects every path
// an epoch may choose up front (every ordered pair of ranks, every DLID of the destination's LMC
// range), and an epoch is followed only when all its transfers fit those connections. Pure: the
// epochs come in as values, translated onto the run's ranks by port GUID.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/runner/run_plan.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::runner {

// The connections of a following run: every (source, destination, DLID) with source !=
// destination and DLID one of base_lids[dst] .. base_lids[dst] + 2^lmc - 1 (up to 0xffff), sorted;
// a channel's id is its place in that order. Rank 0 holds them all (it merges every path's counts);
// every other rank only its own, 2 x ranks x 2^lmc of them, with their ids computed, not looked
// up, so that its memory does not grow with ranks^2.
class FollowChannels {
 public:
  FollowChannels(std::vector<uint16_t> base_lids, uint8_t lmc);
  uint64_t size() const { return total_; }  // all channels of the run
  std::vector<Channel> all() const;         // size() of them, sorted
  // Rank `me`'s channels (those it sends or receives on), sorted, and each one's id.
  void own(int32_t me, std::vector<Channel>& channels, std::vector<uint32_t>& ids) const;
  // Empty when `s`'s every transfer is a channel, else one line naming the first that is not.
  std::string off_channels(const schedule::Schedule& s) const;

 private:
  uint32_t paths(size_t d) const;  // destination d's DLIDs
  uint64_t id(int32_t s, int32_t d, uint32_t o) const;
  std::vector<uint16_t> base_;
  uint32_t paths_ = 1;
  std::vector<uint64_t> before_;  // before_[d]: DLIDs of destinations 0 .. d-1
  uint64_t total_ = 0;
};

// An epoch's schedule on the run's ranks: host h of the epoch is run rank r where their port GUIDs
// match; transfers from or to a host that is not a rank of the run are left out (not planned),
// and so are those of the `dropped` run ranks (dead). The result has the run's hosts. Returns
// false and `why` (one line) when a transfer's (source, destination, DLID) is not a connection.
struct EpochOnRun {
  schedule::Schedule schedule;
  size_t outside = 0;  // transfers per round left out: a host not in the run, or dropped
};
bool epoch_on_run(const schedule::Schedule& epoch, const std::vector<uint64_t>& epoch_guids,
                  const schedule::Schedule& run, const std::vector<uint64_t>& run_guids,
                  const std::vector<char>& dropped, const std::vector<Channel>& channels, EpochOnRun& out,
                  std::string& why);

// What a rank other than 0 reads of an epoch (docs/epochs.md): the host table's port GUIDs and its
// own slice — O(hosts + its sends), never the epoch's phases x hosts. Rank 0 reads the whole epoch
// (it checks every transfer and counts what the dead planned) and orders the round's length.
struct OwnEpoch {
  std::vector<uint64_t> guids;  // by epoch rank
  bool has_slice = false;       // false: the epoch has no host of this rank's port (it is gone)
  RankRound round;              // its sends, destinations as epoch ranks
};
// That slice on the run's ranks, as epoch_on_run gives rank `me`'s row: sends to hosts not in the
// run or dropped left out; none when `me` itself is dropped or has no slice (then one phase of
// `round_slots`). False and `why` when a send is on no connection or the slice's round is not the
// `round_slots` rank 0 ordered (another epoch's slice).
bool own_on_run(const OwnEpoch& e, const std::vector<uint64_t>& run_guids, const std::vector<char>& dropped,
                const std::vector<Channel>& channels, int32_t me, uint64_t round_slots, RankRound& out,
                std::string& why);

// One stretch of a following run under one epoch (and one set of dropped ranks): its counts as
// one rank saw them, or summed over the ranks at rank 0. Trivially copyable (sent as bytes).
struct EpochCounts {
  uint64_t epoch = 0;                                     // 0: the run is not following
  uint64_t from_round = 0;                                // the round this rank switched at
  uint64_t planned = 0, ok = 0, skipped = 0, failed = 0;  // failed: failed or timed out
  uint64_t bytes = 0;
  uint64_t dropped = 0;  // ranks dropped so far (dead)
  int64_t round_ns = 0;  // a round's length in this stretch
};

}  // namespace ibroute::runner
