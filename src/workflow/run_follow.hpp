// `ibroute run --follow DIR`'s files (docs/epochs.md): the epoch a run starts on and those it
// switches to, as each rank reads them — rank 0 the whole epoch (it checks every transfer and counts
// what the dead planned), every other rank the host table and its own slice only, so that what a
// rank holds grows with the hosts, not with hosts x phases.
#pragma once

#include <cstdint>
#include <string>

#include "ibroute/runner/run_config.hpp"
#include "ibroute/schedule/format.hpp"

namespace ibroute::workflow {

// The epoch DIR/current names now; InputError when there is none.
uint64_t current_epoch_of(const std::string& dir);

// Rank 0's first epoch: DIR/epoch-K/schedule.json, whole, with its host table beside it (the other
// ranks read through it) and every transfer on a connection a following run makes.
schedule::ScheduleDoc read_first_epoch(const std::string& dir, uint64_t epoch);

// Another rank's first epoch: the host table (hosts, identities, groups; no phases). The rank's
// own slice, and with it the timing, comes with read_own_epoch once it knows its port.
schedule::ScheduleDoc read_epoch_table(const std::string& dir, uint64_t epoch);

// Epoch `epoch`'s host table and the slice of the port `port_guid`, checked against the table
// (schedule::check_slice_on_table); `meta`, if given, gets the slice's name, method, bound,
// timing and phase slots. has_slice is false when the epoch has no host of that port.
// Throws InputError naming the file.
runner::OwnEpoch read_own_epoch(const std::string& dir, uint64_t epoch, uint64_t port_guid, schedule::Schedule* meta);

// The following run's settings: where it learns of newer epochs and how it reads them.
void follow_epochs(const std::string& dir, const schedule::ScheduleDoc& first, runner::RunConfig::Follow& f);

}  // namespace ibroute::workflow
