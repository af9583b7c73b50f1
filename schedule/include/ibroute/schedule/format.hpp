// The schedule exchange format (docs/schedule-format.md): JSON that carries the fabric it was
// planned for, the hosts in rank order, the timing and every phase's transfers; CSV for
// spreadsheets; per-node slices for peers that need only their own part.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

// 2: two groups ("groups"), and phases as shifts plus one DLID offset per sender (O(N) values
// per phase instead of N objects). 3: phases of different lengths (timing.phase_slots) and more
// phases than the shifts (transfers that waited, packed into phases of their own). A schedule that
// needs neither is written as version 2, which older readers take. Versions 1 and 2 are still read.
constexpr int kFormatVersion = 3;
// The version a schedule is written in: 3 only where it needs what 3 adds.
int format_version_for(const Schedule& s);

std::string to_json(const ScheduleDoc& doc);
// Throws InputError naming what is wrong (not JSON, another format or version, missing fields,
// ranks out of range, truncated).
ScheduleDoc from_json(std::string_view text);

// One transfer per line, written as it goes (an all-to-all of 10 000 hosts has 10^8 lines).
void write_csv(std::ostream& out, const ScheduleDoc& doc);
std::string to_csv(const ScheduleDoc& doc);

// One host's part: its sends and receives per phase, with every host's identity (to connect).
// Built once per schedule: each slice then costs O(phases), not O(phases x hosts).
class SliceWriter {
 public:
  explicit SliceWriter(const ScheduleDoc& doc);
  std::string slice(size_t rank) const;

 private:
  const ScheduleDoc& doc_;
  size_t n_;
  std::vector<int32_t> src_of_;  // per (phase, rank): the rank sending to it, or -1
  nlohmann::json base_;          // what every slice repeats
};
std::string node_slice_json(const ScheduleDoc& doc, size_t rank);

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
  ScheduleDoc doc;
  size_t rank = 0;
  std::vector<SliceTransfer> sends, receives;
};
// Versions 1 and 2; throws InputError naming the JSON pointer of what is wrong.
SliceDoc slice_from_json(std::string_view text);

// Either document, as its "format" says, and the version it was written in.
struct AnyScheduleDoc {
  std::optional<ScheduleDoc> whole;
  std::optional<SliceDoc> slice;
  int version = 0;
};
AnyScheduleDoc any_from_json(std::string_view text);

}  // namespace ibroute::schedule
