// What one run is: its settings (rates, rounds, the skip rule, clock sync, following epochs) and
// how MPI ranks map to the schedule's hosts. Values only: the workflow builds them from a request
// and the verbs runner (data_plane.hpp) executes them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ibroute/runner/epoch_follow.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::runner {

struct RunConfig {
  std::string device;       // "" = the first with an active port
  int port = 0;             // 0 = its first active port
  int gid_index = -1;       // RoCE: -1 picks the IPv4-mapped GID
  uint8_t sl = 0;           // service level of every queue pair (0..15; docs/adaptive-routing.md)
  bool unreliable = false;  // data over UC (--transport uc): writes never hang, a lost one is counted as lost
  uint64_t message_size = 0;
  int64_t slot_ns = 0;
  // Slots per message-time at the per-node rate: slot_ns = slot_per_message x message_size / rate
  // (the schedule's slot_s x rate / message_size; phases of several slots make it less than 1).
  double slot_per_message = 1;
  // The slot of a per-node rate (bytes/s), and back.
  int64_t slot_at(double rate) const {
    return std::max<int64_t>(1,
                             static_cast<int64_t>(slot_per_message * static_cast<double>(message_size) / rate * 1e9));
  }
  double rate_at(int64_t slot) const {
    return slot_per_message * static_cast<double>(message_size) / (static_cast<double>(slot) * 1e-9);
  }
  uint32_t rounds = 1;
  uint32_t skip_after = 2;                     // unfinished transfers to one destination before the next is skipped
  int64_t drain_ns = 2'000'000'000;            // after the last planned start: wait this long for completions
  int64_t finish_timeout_ns = 30'000'000'000;  // rank 0 waits this long for every rank's end
  int64_t start_delay_ns = 200'000'000;        // t0 after the clock sync
  int sync_samples = 200;
  bool verify = true;                          // receivers check every byte of what arrived
  int64_t resync_interval_ns = 1'000'000'000;  // each rank re-measures its clock this often; 0: never
  int resync_samples = 16;
  int64_t progress_interval_ns = 5'000'000'000;  // rank 0 prints a progress line this often; 0: never
  size_t anomaly_cap = 1000;                     // single records kept per rank (skipped, failed, late, corrupt)
  int64_t late_threshold_ns = 0;                 // a post later than this is an anomaly; 0: one slot
  std::string trace_dir;                         // "": no trace files
  std::string schedule_name;                     // for the trace files' first line
  bool find_rate = false;                        // a rate search (rate_search.hpp) starting at slot_ns
  double max_skipped_share = 0;
  int find_rate_steps = 10;
  int64_t find_rate_step_ns = 2'000'000'000;
  // --follow DIR (epoch_follow.hpp): the run switches to each newer epoch at a round rank 0 names.
  // `newest` says which epoch is newest now (0: none readable); `load` reads one whole with its
  // hosts' port GUIDs (rank 0), `load_own` a rank's part of it (false and `why` when it cannot).
  // A rank silent for `dead_after_ns` is dropped.
  struct Follow {
    bool on = false;
    uint64_t first_epoch = 0;
    uint8_t lmc = 0;  // the fabric's: which DLIDs an epoch may choose
    int64_t poll_ns = 500'000'000;
    int64_t dead_after_ns = 5'000'000'000;
    std::function<uint64_t()> newest;
    std::function<bool(uint64_t epoch, schedule::Schedule& out, std::vector<uint64_t>& guids, std::string& why)> load;
    // Ranks other than 0: the host table and the own slice of the port with this GUID, checked
    // against the table (schedule::check_slice_on_table).
    std::function<bool(uint64_t epoch, uint64_t port_guid, OwnEpoch& out, std::string& why)> load_own;
    // Ranks other than 0: their part of the first epoch (the schedule run_schedule gets has its
    // hosts and timing, no phases).
    std::optional<OwnEpoch> first_own;
  } follow;
  // Tests only: per MPI rank an artificial clock offset and rate error; a rank that stops
  // taking receives; a rank that dies at its k-th send.
  std::vector<int64_t> test_clock_skew_ns;
  std::vector<double> test_clock_ppm;
  int test_stall_rank = -1;
  int test_die_rank = -1;
  uint32_t test_die_at = 0;
  int test_bad_rkey_rank = -1;  // writes with a wrong remote key: a completion error
};

// Rank-to-host mapping inputs: the schedule's hosts by port GUID (to match the local port), or
// an explicit placement (schedule rank per MPI rank).
struct RankMapping {
  std::vector<uint64_t> port_guids;  // per schedule rank
  std::vector<uint16_t> base_lids;   // per schedule rank (DLID = base + path offset on IB)
  std::vector<int32_t> placement;    // per MPI rank; empty: by port GUID
};

}  // namespace ibroute::runner
