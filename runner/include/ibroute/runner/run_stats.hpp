// A run's results in bounded memory. Every rank aggregates as it goes (per path it sends on,
// per destination, a throughput series) and keeps single records only of anomalies, capped;
// rank 0 merges the ranks' aggregates one at a time. Memory and report grow with ranks x peers,
// never with the run's duration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/runner/epoch_follow.hpp"
#include "ibroute/runner/histogram.hpp"
#include "ibroute/runner/run_plan.hpp"

namespace ibroute::runner {

enum class Status : uint8_t { ok, skipped, timeout, failed, lost };
const char* to_string(Status s);

// One transfer, as an anomaly report: skipped, failed, timed out, lost, corrupt or late. Times
// are on the reference clock (rank 0's) in ns; 0 where it did not happen. Trivially copyable.
struct TransferRecord {
  uint64_t seq = 0;
  int32_t src = 0, dst = 0;  // schedule ranks
  uint16_t dlid = 0;
  Status status = Status::lost;
  uint8_t verified = 0;    // 1: the receiver found the expected bytes; 2: it found others
  int32_t wc_status = -1;  // the verbs completion status of a failed transfer
  uint64_t bytes = 0;
  int64_t planned_ns = 0, posted_ns = 0, completed_ns = 0, arrived_ns = 0;
};

// The transfers of one path (channel: source, destination, DLID).
struct PathCounters {
  uint64_t planned = 0, ok = 0, skipped = 0, timeout = 0, failed = 0, lost = 0;
  uint64_t bytes = 0, busy_ns = 0;    // of the ok transfers: bytes, and the sum of completion - post
  uint64_t arrived = 0, corrupt = 0;  // as the receiver counted them
  uint64_t not_ok() const { return skipped + timeout + failed + lost; }
  void merge(const PathCounters& o);
};

// Bytes completed per interval since t0. The interval is fixed at the start from the planned
// length (at most kMax intervals, at least one second each), so the series stays small.
class ThroughputSeries {
 public:
  static constexpr size_t kMax = 512;
  ThroughputSeries() = default;
  explicit ThroughputSeries(int64_t planned_ns);
  void add(int64_t since_t0_ns, uint64_t bytes);
  void merge(const ThroughputSeries& o);  // same interval expected; else the coarser one wins
  int64_t interval_ns() const { return interval_ns_; }
  const std::vector<uint64_t>& bytes() const { return bytes_; }
  static bool make(int64_t interval_ns, std::vector<uint64_t> bytes, ThroughputSeries& out);

 private:
  int64_t interval_ns_ = 1'000'000'000;
  std::vector<uint64_t> bytes_;
};

// A rank's clock as it tracked it during the run: its latest offset to the reference, the
// drift fitted to its re-synchronisations, and how far each new measurement was from what the
// model had predicted (the error the posts had just before it).
struct ClockTrack {
  int64_t offset_ns = 0, uncertainty_ns = 0;
  double drift_ppm = 0;
  uint32_t resyncs = 0, resync_failures = 0;
  int64_t residual_max_ns = 0;
  double residual_rms_ns = 0;
};

// Tests only: posts against the planned times on the true common clock (the ranks share one
// clock in the VM; the injected offsets and rate errors are known).
struct TruthTrack {
  bool measured = false;
  int64_t min_ns = 0, max_ns = 0;  // signed: early posts are negative
  LogHistogram abs_ns;             // |post - planned|
  void add(int64_t err);
  void merge(const TruthTrack& o);
};

struct RankStats {
  int32_t rank = -1;                           // schedule rank
  std::vector<uint32_t> send_channels;         // global channel ids (channels_of) this rank sends on
  std::vector<PathCounters> send;              // per send channel: the sender's counts
  std::vector<uint32_t> recv_channels;         // channels this rank receives on
  std::vector<uint64_t> arrived, corrupt;      // per receive channel
  std::vector<int32_t> dests;                  // this rank's destinations (schedule ranks), sorted
  std::vector<LogHistogram> late, completion;  // per destination: post - planned, completion - post
  ThroughputSeries sent;
  uint64_t bytes_sent = 0;
  int64_t first_post_ns = 0, last_completion_ns = 0;  // reference clock; 0: none
  std::vector<TransferRecord> anomalies;
  uint64_t anomalies_dropped = 0;
  ClockTrack clock;
  TruthTrack truth;
  uint32_t rounds_run = 0;
  std::vector<EpochCounts> epochs;  // a following run: one per stretch this rank switched to, in order

  // Not sent: per send channel, its destination's index into dests.
  std::vector<uint32_t> dest_of_send;

  // The aggregates of `rank` in a run of these channels, empty, ready to count. `ids`: each
  // channel's id when `channels` are only some of the run's (empty: its index).
  static RankStats shaped(const std::vector<Channel>& channels, int32_t rank, int64_t planned_ns) {
    return shaped(channels, {}, rank, planned_ns);
  }
  static RankStats shaped(const std::vector<Channel>& channels, const std::vector<uint32_t>& ids, int32_t rank,
                          int64_t planned_ns);
  size_t dest_index(int32_t dst) const;  // index into dests; SIZE_MAX if not one
  // What the data plane records per transfer (bench/run_aggregation times exactly these):
  // a post `late_ns` after its planned start, and an ok completion `busy_ns` after its post.
  void posted(size_t send, size_t dest, int64_t late_ns) {
    ++this->send[send].planned;
    late[dest].add(late_ns);
  }
  void completed(size_t send, size_t dest, int64_t busy_ns, uint64_t bytes, int64_t since_t0_ns);
  // Keeps the record if fewer than `cap` are kept, else counts it as dropped.
  void anomaly(const TransferRecord& t, size_t cap);
};

// The byte form ranks send to rank 0. `decode` checks everything against the channels and the
// rank count and throws std::runtime_error naming what is wrong: rank 0 trusts no peer blindly.
std::vector<uint8_t> encode(const RankStats& s);
RankStats decode(const std::vector<uint8_t>& bytes, const std::vector<Channel>& channels, size_t ranks);

struct NodeTotals {
  bool reported = false;
  uint64_t bytes_sent = 0, bytes_received = 0;
  uint64_t ok = 0, skipped = 0, failed = 0;  // as sender; failed: timeout, failed or lost
  int64_t first_post_ns = 0, last_completion_ns = 0;
  LogHistogram late, completion, completion_in;  // as sender; completion_in: transfers to it
  ClockTrack clock;
  uint32_t rounds_run = 0;
  uint64_t anomalies_dropped = 0;
};

// Rank 0's merge: per channel, per node, the whole run. add() each rank's stats as they
// arrive; then lost() for each rank that never reported.
class RunMerge {
 public:
  RunMerge(const std::vector<Channel>& channels, size_t ranks, int64_t planned_ns, size_t anomaly_cap);
  void add(const RankStats& s);
  // `planned`: the rank's transfers per send channel (planned_per_channel); what its receivers
  // counted as arrived is taken as delivered, the rest as lost.
  void lost(int32_t rank, const std::vector<uint64_t>& planned, uint64_t message_size);
  // Unreliable transport (UC): a sender's completion says only that the write left. After every
  // add(), what a receiver did not count as arrived is moved from ok to lost, per path.
  void settle_unreliable(uint64_t message_size);

  std::vector<Channel> channels;    // its own copy: the merge outlives the run that made it
  std::vector<PathCounters> paths;  // per channel
  std::vector<NodeTotals> nodes;    // per schedule rank
  LogHistogram late, completion;
  ThroughputSeries throughput;
  TruthTrack truth;
  std::vector<TransferRecord> anomalies;
  uint64_t anomalies_dropped = 0;
  size_t anomaly_cap;
  // A following run: per stretch, the ranks' counts summed (epoch and from_round: the first
  // rank's, rank 0's), and how many ranks reported it at that round (the others switched elsewhere).
  std::vector<EpochCounts> epochs;
  std::vector<uint32_t> epoch_ranks_agreeing;
};

// Transfers per channel of `rounds` repetitions of the schedule (indexed like `channels`).
std::vector<uint64_t> planned_per_channel(const schedule::Schedule& s, const std::vector<Channel>& channels,
                                          uint32_t rounds);

}  // namespace ibroute::runner
