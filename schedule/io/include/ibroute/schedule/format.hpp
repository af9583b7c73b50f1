// The schedule exchange format (docs/schedule-format.md): JSON that carries the fabric it was
// planned for, the hosts in rank order, the timing and every phase's transfers; CSV for
// spreadsheets; per-node slices for peers that need only their own part.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

// 2: two groups ("groups"), and phases as shifts plus one DLID offset per sender (O(N) values
// per phase instead of N objects). 3: phases of different lengths (timing.phase_slots) and more
// phases than the shifts (transfers that waited, packed into phases of their own). A schedule that
// needs neither is written as version 2, which older readers take. Versions 1 and 2 are still read.
constexpr int kFormatVersion = 3;
// Slices: 4 is compact — the node's own identity and its transfers as columns; the peers'
// identities are in the folder's host table (kHostsFile), once. Slices of versions 1..3 (every
// host in every slice) are still read.
constexpr int kSliceVersion = 4;
inline constexpr const char* kHostsFile = "hosts.json";
// The version a schedule is written in: 3 only where it needs what 3 adds.
int format_version_for(const Schedule& s);

std::string to_json(const ScheduleDoc& doc);
// Throws InputError naming what is wrong (not JSON, another format or version, missing fields,
// ranks out of range, truncated).
ScheduleDoc from_json(std::string_view text);

// One transfer per line, written as it goes (an all-to-all of 10 000 hosts has 10^8 lines).
void write_csv(std::ostream& out, const ScheduleDoc& doc);
std::string to_csv(const ScheduleDoc& doc);

// One host's part: its sends and receives per phase and its own identity (version 4); the others'
// identities go once into the host table beside the slices (hosts_file_json).
// Built once per schedule: each slice then costs O(phases), not O(phases x hosts).
class SliceWriter {
 public:
  explicit SliceWriter(const ScheduleDoc& doc);
  std::string slice(size_t rank) const;
  // The slices of ranks [first, last), gathered in one pass over the phases: a rank's column of a
  // 10 000-host schedule read alone is a cache miss per phase; a block's is a few cache lines.
  std::vector<std::string> slices(size_t first, size_t last) const;

 private:
  const ScheduleDoc& doc_;
  size_t n_;
  std::vector<int32_t> src_of_;  // per (phase, rank): the rank sending to it, or -1
  nlohmann::json base_;          // what every slice repeats
};
std::string node_slice_json(const ScheduleDoc& doc, size_t rank);
// The slices' host table ("ibroute-schedule-hosts", version 1): name, created_at, fabric, groups,
// hosts — one per line. Read back with hosts_file_from_json (the identities and groups).
std::string hosts_file_json(const ScheduleDoc& doc);
ScheduleDoc hosts_file_from_json(std::string_view text);

// A slice as read back: the schedule's header, hosts and groups (doc.schedule.phases stays empty),
// the rank it is for, and that rank's transfers in phase order. `peer` is the destination of a
// send and the source of a receive; `dlid` is the DLID the sender uses (a receive's is one of ours).
struct SliceTransfer {
  uint32_t phase = 0;
  int32_t peer = 0;
  uint16_t dlid = 0;
  bool operator==(const SliceTransfer&) const = default;
};
struct SliceDoc {
  ScheduleDoc doc;  // version 4: every host but the slice's own a placeholder (no name, GUID 0)
  size_t rank = 0;
  size_t phases =
      0;  // the schedule's phases (a round); 0 where the file does not say (versions 1 to 3 without phase_slots)
  std::vector<SliceTransfer> sends, receives;
  std::string hosts_file;  // version 4: the host table's file name, in the slice's folder
};
// Versions 1 to 4; throws InputError naming the JSON pointer of what is wrong.
SliceDoc slice_from_json(std::string_view text);

// A slice read through a host table (an epoch's hosts.json, docs/epochs.md) is the one the table
// promises rank r: its own rank r, as many hosts as the table, every identity it gives (a
// version-4 slice gives its own only) the table's, each send to a LID of its destination, no
// destination twice. Anything else is another host's or a damaged slice, which no node may send
// on: InputError, one line without the file's name.
void check_slice_on_table(const SliceDoc& slice, const std::vector<HostIdentity>& slice_hosts,
                          const std::vector<HostIdentity>& table, size_t r);

// Either document, as its "format" says, and the version it was written in.
struct AnyScheduleDoc {
  std::optional<ScheduleDoc> whole;
  std::optional<SliceDoc> slice;
  int version = 0;
};
AnyScheduleDoc any_from_json(std::string_view text);

}  // namespace ibroute::schedule
