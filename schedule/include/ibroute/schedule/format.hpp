// The schedule exchange format (docs/schedule-format.md): JSON that carries the fabric it was
// planned for, the hosts in rank order, the timing and every phase's transfers; CSV for
// spreadsheets; per-node slices for peers that need only their own part.
#pragma once

#include <string>
#include <string_view>

#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

constexpr int kFormatVersion = 1;

std::string to_json(const ScheduleDoc& doc);
// Throws InputError naming what is wrong (not JSON, another format or version, missing fields,
// ranks out of range, truncated).
ScheduleDoc from_json(std::string_view text);

std::string to_csv(const ScheduleDoc& doc);

// One host's part: its sends and receives per phase, with every host's identity (to connect).
std::string node_slice_json(const ScheduleDoc& doc, size_t rank);

}  // namespace ibroute::schedule
