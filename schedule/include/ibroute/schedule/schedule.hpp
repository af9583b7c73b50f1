// A schedule: hosts in rank order and, per phase, each rank's transfer (destination rank and the
// DLID that picks its path). Plain values; the planner makes them, the formats read and write them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibroute::schedule {

struct Host {
  int32_t node;  // index into Fabric::nodes
  uint8_t port;
  std::string name;
  bool operator==(const Host&) const = default;
};

// Transfers of one phase, indexed by source rank: rank i sends to dst[i] over DLID dlid[i].
// dst[i] == -1: rank i sends nothing in this phase.
struct Phase {
  std::vector<int32_t> dst;
  std::vector<uint16_t> dlid;
  bool operator==(const Phase&) const = default;
};

struct Timing {
  uint64_t message_size = 0;  // bytes per transfer
  double rate = 0;            // bytes per second each node sends
  double slot_s = 0;          // time from one phase's start to the next's
  bool operator==(const Timing&) const = default;
};

struct Schedule {
  std::string name;
  std::vector<Host> hosts;
  std::vector<Phase> phases;
  std::string method;  // which planner made it ("structure", "free", or a pattern name)
  int bound = 0;       // concurrent transfers a regular link direction may carry
  Timing timing;
  // Two groups: the ranks that send and those that receive, each in rank order (they may overlap).
  // Both empty: all-to-all, every rank sends to every other.
  std::vector<int32_t> senders, receivers;
  // Phases of different lengths: phase p lasts slots[p] times timing.slot_s (its worst link load,
  // so that a phase that can run at full rate is not timed for the worst one). Empty: one slot each.
  std::vector<uint32_t> slots;
  bool all_to_all() const { return senders.empty() && receivers.empty(); }
};

// The most slots a phase may last, and the most a whole schedule may take (a reader refuses more).
constexpr uint32_t kMaxPhaseSlots = 1u << 16;
// The longest slot a schedule file holds (seconds): a rate so slow that a phase lasts longer is a typo.
constexpr double kMaxSlotSeconds = 1e6;
// How many slots a phase of `time` message-times (at the rate of one slot) takes: at least one.
uint32_t phase_slot_count(double time);
// Where each phase starts, in slots from the schedule's start, and (last element) the total:
// phases.size() + 1 values.
std::vector<uint64_t> slot_starts(const Schedule& s);

// The senders (receivers) of a schedule: its groups, or every rank for an all-to-all.
std::vector<int32_t> sender_ranks(const Schedule& s);
std::vector<int32_t> receiver_ranks(const Schedule& s);

// How a schedule file names a host: by port GUID, with the LIDs it was planned for.
struct HostIdentity {
  std::string name;
  uint64_t node_guid = 0, port_guid = 0;
  uint16_t base_lid = 0;
  uint8_t lmc = 0;
  bool operator==(const HostIdentity&) const = default;
};

// The fabric a schedule was planned for.
struct FabricRef {
  int64_t scan_id = 0;
  std::string scan_started_at;
  uint8_t lmc = 0;
  bool operator==(const FabricRef&) const = default;
};

// A schedule as exchanged with peers: hosts by identity, not by index into some scan.
struct ScheduleDoc {
  Schedule schedule;  // hosts[].node/port are -1 until resolved against a fabric
  std::vector<HostIdentity> identities;
  FabricRef fabric;
  std::string created_at;
  // An epoch of `ibroute watch` (docs/epochs.md): its number (1, 2, ...; 0: not an epoch) and the
  // time on the nodes' common clock (Unix ns) from which it holds: peers switch at the first round
  // that starts at or after it.
  uint64_t epoch = 0;
  int64_t epoch_from_unix_ns = 0;
};

// Phase k (k = 1 .. N-1): rank i sends to rank (i + k) mod N. Every ordered pair once, every
// phase a permutation. DLIDs are left 0.
std::vector<Phase> shift_phases(size_t n);
// Shift k alone (1 <= k < n): shift_phases(n)[k - 1].
Phase shift_phase(size_t n, size_t k);

// Two groups S and R over n ranks, M = max(|S|, |R|): in shift k (0 .. M-1) the sender at position
// i sends to the receiver at position (i + k) mod M, where there is one and it is not the sender
// itself. Every (sender, receiver) pair once, each phase a partial matching, M phases (a shift with
// no transfer, shift 0 of equal groups, is left out). S = R = all ranks gives shift_phases(n).
std::vector<Phase> group_phases(size_t n, const std::vector<int32_t>& senders, const std::vector<int32_t>& receivers);

// The shift of every phase when the phases are group_phases of the schedule's groups in some
// order (what the compact formats store); empty when they are not.
std::vector<int32_t> shifts_of(const Schedule& s);
// The phase of shift k, DLIDs 0.
Phase group_shift_phase(size_t n, const std::vector<int32_t>& senders, const std::vector<int32_t>& receivers,
                        int32_t k);

// An all-to-all's shifts over a ring of `size` >= N places (schedule/core/rings.hpp says why):
// rank r holds place[r]; in shift k (1 .. size-1) the rank at place q sends to the rank at place
// (q + k) mod size, where a rank holds it. Every ordered pair once over all shifts. A ring of N
// places in rank order is shift_phases(n).
struct Ring {
  std::vector<uint32_t> place;  // per rank, distinct, each < size
  size_t size = 0;
};
// Per place, the rank holding it (-1: empty).
std::vector<int32_t> ranks_at(const Ring& r);
// The phase of shift k, DLIDs 0 (`at` = ranks_at(r)).
Phase ring_phase(const Ring& r, const std::vector<int32_t>& at, size_t k);
// The ring and the shift of every phase when an all-to-all's phases are its ring's shifts 1, 2, ...
// in order (what the planner makes: the compact format can store them); nullopt otherwise.
std::optional<std::pair<Ring, std::vector<int32_t>>> ring_of(const Schedule& s);

}  // namespace ibroute::schedule
