// libibroute-peer: what a node (or the DAQ software on it) needs from an ibroute schedule — its own
// transfers in order, each with the DLID that picks its path and its planned start. Reads a whole
// schedule file or a per-node slice (`ibroute export --per-node`), every format version
// (docs/schedule-format.md). Only standard C++ types cross this interface.
//
//   find_package(ibroute REQUIRED)
//   target_link_libraries(daq PRIVATE ibroute::peer)
//
//   auto s = ibroute::peer::Schedule::load("rank00005-node1-006.json");
//   for (const ibroute::peer::Transfer& t : s.sends(s.own_rank().value()))
//     post_write(s.hosts()[t.peer], t.dlid, t0 + t.offset_s, t.size);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ibroute::peer {

// A file that is not a readable schedule: one line naming the file and the JSON pointer of what is
// wrong, e.g. "a.json: /hosts/3/base_lid: 60000 is not a unicast LID (1..49151)".
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A rank's host: the port it uses, named as the fabric names it.
struct Host {
  std::uint32_t rank = 0;
  std::string name;  // node description
  std::uint64_t node_guid = 0, port_guid = 0;
  std::uint16_t base_lid = 0;  // the port's LIDs are base_lid .. base_lid + 2^lmc - 1
  std::uint8_t lmc = 0;
};

// One transfer of a rank. For a send, `peer` is the destination rank and `dlid` the destination LID
// to address (it picks the path); for a receive, `peer` is the source and `dlid` the one of our
// LIDs it addresses. The transfer starts `offset_s` seconds after the common start t0 (phase ×
// slot; from format version 3, where phases differ in length, the slots of the phases before it ×
// slot) and moves `size` bytes.
struct Transfer {
  std::uint32_t phase = 0;
  std::uint32_t peer = 0;
  std::uint16_t dlid = 0;
  double offset_s = 0;
  std::uint64_t size = 0;
};

struct Epoch;

class Schedule {
 public:
  // Reads a schedule file or a per-node slice; throws Error (unreadable file, not JSON, another
  // format, a value out of range). A slice of version 4 names its peers only by rank: their
  // identities come from the host table export wrote beside it (hosts.json), read here too; an
  // absent table leaves them unnamed (see parse), a table of another schedule is an Error.
  static Schedule load(const std::string& path);
  // The same from text; `source` names it in errors. A version-4 slice read this way knows only
  // its own host: the others in hosts() have their rank, no name and GUID 0.
  static Schedule parse(std::string_view text, const std::string& source = "schedule");

  const std::string& name() const;        // the schedule's name in the database that planned it
  const std::string& method() const;      // "structure", "free", ...
  const std::string& created_at() const;  // UTC, ISO 8601
  int format_version() const;             // of the file read (1, 2 or 3; slices 1 to 4)
  bool is_slice() const;
  // The rank a slice is for; empty for a whole schedule (which answers for every rank).
  std::optional<std::uint32_t> own_rank() const;

  std::uint64_t message_size() const;  // bytes per transfer
  double rate() const;                 // bytes per second each node sends
  double slot_s() const;               // seconds of a slot: a phase lasts one (version 3: its timing.phase_slots)
  int bound() const;                   // transfers a regular link direction may carry at once
  std::int64_t scan_id() const;        // the scan it was planned on
  // An epoch of `ibroute watch` (docs/epochs.md): its number (0: the file is no epoch) and the time
  // from which it holds, in Unix nanoseconds on the nodes' common clock (handover_round).
  std::uint64_t epoch() const;
  std::int64_t epoch_from_unix_ns() const;

  const std::vector<Host>& hosts() const;  // every rank, in rank order
  // The rank using this port GUID, or named so: a hostname ("h0001" for "h0001 HCA-1"), a node
  // description, host/HCA-2, a GUID or LID, as every ibroute command takes them; empty when none
  // does (Error when several do: name them by port GUID).
  std::optional<std::uint32_t> rank_of_port_guid(std::uint64_t port_guid) const;
  std::optional<std::uint32_t> rank_of_name(std::string_view name) const;
  // The ranks a host list names, in its order: "a,b,c" or Slurm's "node[0001-0100,0200]", each
  // as rank_of_name takes it; Error naming the first that no rank has (or that several have).
  std::vector<std::uint32_t> ranks_of_names(std::string_view hosts) const;

  // A rank's transfers in the order it makes them (by phase). A slice answers only for its own
  // rank (Error for another); a whole schedule for any rank below hosts().size().
  std::vector<Transfer> sends(std::uint32_t rank) const;
  std::vector<Transfer> receives(std::uint32_t rank) const;

  ~Schedule();
  Schedule(Schedule&&) noexcept;
  Schedule& operator=(Schedule&&) noexcept;

 private:
  friend std::optional<Schedule> load_epoch(const Epoch& e, std::uint64_t port_guid);
  struct Impl;
  explicit Schedule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `ibroute watch --export DIR` publishes a schedule that follows the fabric as epochs: DIR/current
// names the newest (docs/epochs.md). A node polls newest_epoch, loads its own part of a newer one
// with load_epoch, and switches at handover_round — every node computes the same round from the
// same file and the common clock, so no two nodes follow different epochs in one round.
struct Epoch {
  std::uint64_t number = 0;
  std::string dir;  // DIR/epoch-NNNNNN: schedule.json, hosts.json and the slices
};
// The newest epoch published in `dir`; empty while there is none (watch not started yet).
std::optional<Epoch> newest_epoch(const std::string& dir);
// The slice of the host with this port GUID in epoch `e` (found through its host table); empty
// when the epoch has no such host (it was dropped: gone from the fabric). Error for damaged files.
std::optional<Schedule> load_epoch(const Epoch& e, std::uint64_t port_guid);
// The first round that starts at or after `from_unix_ns` on a timeline whose round k starts at
// start_unix_ns + k x round_s (0 when `from` is not after the start). Error where round_s is not
// a finite 1 ns or more, or the round is beyond 2^64.
std::uint64_t handover_round(std::int64_t from_unix_ns, std::int64_t start_unix_ns, double round_s);

// The version of the library (that of the ibroute it came with), e.g. "0.1.0".
const char* version();

}  // namespace ibroute::peer
