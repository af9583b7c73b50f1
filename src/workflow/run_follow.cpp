#include "run_follow.hpp"

#include <algorithm>
#include <filesystem>

#include "export_files.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/runner/epoch_follow.hpp"
#include "text_input.hpp"

namespace ibroute::workflow {

using namespace ibroute::schedule;
using namespace ibroute::runner;

namespace {

std::string epoch_file(const std::string& dir, uint64_t epoch, const std::string& name) {
  return (std::filesystem::path(dir) / epoch_dir_name(epoch) / name).string();
}

ScheduleDoc read_table(const std::string& file) {
  try {
    return hosts_file_from_json(read_file(file));
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.what());
  }
}

// The ranks other than 0 read their slices through the epoch's host table: an epoch without one,
// or with another schedule's, is refused (by rank 0, for the whole run).
void check_epoch_table(const std::string& dir, uint64_t epoch, const ScheduleDoc& d) {
  const std::string file = epoch_file(dir, epoch, kHostsFile);
  if (!std::filesystem::exists(file))
    throw InputError(
        std::string("no host table (") + kHostsFile +
        ") beside it: the ranks read their own slices through it (every epoch ibroute watch publishes has one)");
  const ScheduleDoc table = read_table(file);
  if (table.identities != d.identities || table.schedule.name != d.schedule.name || table.created_at != d.created_at)
    throw InputError(file + " is another schedule's host table");
}

// A following run connects each host's LIDs up to the largest LMC of the epoch.
uint8_t follow_lmc(const ScheduleDoc& d) {
  uint8_t lmc = d.fabric.lmc;
  for (const HostIdentity& h : d.identities) lmc = std::max(lmc, h.lmc);
  return lmc;
}

FollowChannels follow_channels(const ScheduleDoc& d) {
  std::vector<uint16_t> lids;
  for (const HostIdentity& h : d.identities) lids.push_back(h.base_lid);
  return FollowChannels(std::move(lids), follow_lmc(d));
}

// Every rank: the channel ids of the run fit the counters' 32 bits.
void check_channel_count(const ScheduleDoc& d) {
  if (const uint64_t n = follow_channels(d).size(); n > UINT32_MAX)
    throw InputError("following " + std::to_string(d.identities.size()) + " hosts at LMC " +
                     std::to_string(follow_lmc(d)) + " needs " + std::to_string(n) +
                     " connections; a run counts at most 2^32");
}

}  // namespace

uint64_t current_epoch_of(const std::string& dir) {
  std::optional<uint64_t> k;
  try {
    k = current_epoch(dir);
  } catch (const std::exception&) {
  }
  if (!k) throw InputError("--follow " + dir + ": no epoch published there (DIR/current; ibroute watch --export DIR)");
  return *k;
}

ScheduleDoc read_first_epoch(const std::string& dir, uint64_t epoch) {
  const std::string file = epoch_file(dir, epoch, "schedule.json");
  try {
    ScheduleDoc d = from_json(read_file(file));
    if (d.epoch == 0) throw InputError("not an epoch (no \"epoch\" number)");
    check_epoch_table(dir, d.epoch, d);
    check_channel_count(d);
    if (const std::string off = follow_channels(d).off_channels(d.schedule); !off.empty()) throw InputError(off);
    return d;
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.what());
  }
}

ScheduleDoc read_epoch_table(const std::string& dir, uint64_t epoch) {
  ScheduleDoc d = read_table(epoch_file(dir, epoch, kHostsFile));
  d.epoch = epoch;
  check_channel_count(d);
  return d;
}

OwnEpoch read_own_epoch(const std::string& dir, uint64_t epoch, uint64_t port_guid, Schedule* meta) {
  std::string file = epoch_file(dir, epoch, kHostsFile);
  const ScheduleDoc table = read_table(file);
  OwnEpoch out;
  size_t r = table.identities.size();
  for (size_t k = 0; k < table.identities.size(); ++k) {
    out.guids.push_back(table.identities[k].port_guid);
    if (table.identities[k].port_guid == port_guid) r = k;
  }
  if (r == table.identities.size()) return out;  // this host is not in the epoch
  file = epoch_file(dir, epoch, slice_file_name(r, table.identities[r].name));
  try {
    SliceDoc slice = slice_from_json(read_file(file));
    if (slice.doc.epoch != epoch) throw InputError("holds epoch " + std::to_string(slice.doc.epoch));
    if (slice.doc.schedule.name != table.schedule.name || slice.doc.created_at != table.created_at)
      throw InputError(std::string("a slice of another schedule than ") + kHostsFile + "'s");
    if (slice.phases == 0) throw InputError("a slice that does not say its phases (format version 4 does)");
    check_slice_on_table(slice, slice.doc.identities, table.identities, r);
    out.has_slice = true;
    out.round.starts.assign(slice.phases + 1, 0);
    const std::vector<uint32_t>& slots = slice.doc.schedule.slots;
    for (size_t p = 0; p < slice.phases; ++p)
      out.round.starts[p + 1] = out.round.starts[p] + (slots.empty() ? 1 : slots[p]);
    for (const SliceTransfer& x : slice.sends) out.round.sends.push_back({x.phase, x.peer, x.dlid});
    if (meta) {
      Schedule& m = slice.doc.schedule;
      meta->name = std::move(m.name), meta->method = std::move(m.method), meta->bound = m.bound,
      meta->timing = m.timing;
      meta->slots = std::move(m.slots);
    }
    return out;
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.what());
  }
}

void follow_epochs(const std::string& dir, const ScheduleDoc& first, RunConfig::Follow& f) {
  f.on = true;
  f.first_epoch = first.epoch;
  f.lmc = follow_lmc(first);
  f.newest = [dir]() -> uint64_t {
    try {
      return current_epoch(dir).value_or(0);
    } catch (const std::exception&) {
      return 0;
    }
  };
  f.load = [dir](uint64_t epoch, Schedule& out, std::vector<uint64_t>& guids, std::string& why) {
    const std::string file = epoch_file(dir, epoch, "schedule.json");
    try {
      ScheduleDoc d = from_json(read_file(file));
      if (d.epoch != epoch) throw InputError("holds epoch " + std::to_string(d.epoch));
      check_epoch_table(dir, epoch, d);
      guids.clear();
      for (const HostIdentity& h : d.identities) guids.push_back(h.port_guid);
      out = std::move(d.schedule);
      return true;
    } catch (const std::exception& e) {
      why = file + ": " + e.what();
      return false;
    }
  };
  f.load_own = [dir](uint64_t epoch, uint64_t port_guid, OwnEpoch& out, std::string& why) {
    try {
      out = read_own_epoch(dir, epoch, port_guid, nullptr);
      return true;
    } catch (const std::exception& e) {
      why = e.what();
      return false;
    }
  };
}

}  // namespace ibroute::workflow
