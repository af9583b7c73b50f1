// The files peers read (docs/schedule-format.md): a whole schedule, its per-node slices and their
// host table; and ibroute watch's epochs of them, published so that a reader never sees half of
// one (docs/epochs.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "ibroute/fabric/progress.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::workflow {

// Writes `text` to `p` (binary); InputError naming the file when it cannot.
void write_text_file(const std::filesystem::path& p, const std::string& text);
// "rank00005-node1-006.json": the slice of rank 5, its host's name made safe for a file name.
std::string slice_file_name(size_t rank, const std::string& host);
// The host table (schedule::kHostsFile) and one slice per rank, into `dir` (which exists).
void write_slices(const std::filesystem::path& dir, const schedule::ScheduleDoc& doc,
                  const fabric::ProgressFn& progress = {});

// An epochs directory: DIR/epoch-NNNNNN/ holds an epoch's schedule.json, hosts.json and slices;
// DIR/current is a symbolic link to the newest, replaced by rename (atomic); DIR/schedule.json
// links to current/schedule.json. An epoch is built under a hidden name and renamed into place
// whole.
inline constexpr const char* kCurrentLink = "current";
std::string epoch_dir_name(uint64_t epoch);  // "epoch-000007"

// The largest epoch number peers read: newest_epoch takes at most 15 digits.
inline constexpr uint64_t kMaxEpoch = 999'999'999'999'999;

// The newest epoch published in `dir` (what DIR/current names); nullopt when there is none.
std::optional<uint64_t> current_epoch(const std::filesystem::path& dir);
// The largest epoch in `dir`: what current names, or an epoch directory beyond it (a publish cut
// between its rename and the link); 0 where there is none.
uint64_t last_epoch_in(const std::filesystem::path& dir);

// One writer per epochs directory: an exclusive lock (flock) on DIR/.ibroute-watch.lock, held
// while this lives, the holder's PID written in it. InputError naming the holder where another
// process holds it. The directory is created where missing; DIR/current that is not a symbolic
// link (a user's file) is refused. Temporaries a dead writer left (".epoch-N.tmp-PID",
// ".current.tmp-PID") are removed: with the lock held, no live writer owns them.
class EpochDirLock {
 public:
  explicit EpochDirLock(const std::filesystem::path& dir);
  ~EpochDirLock();
  EpochDirLock(const EpochDirLock&) = delete;
  EpochDirLock& operator=(const EpochDirLock&) = delete;
  size_t stale_removed() const { return stale_; }

 private:
  int fd_ = -1;
  size_t stale_ = 0;
};

// Writes `doc` (its epoch number set) as the next epoch and makes it current; keeps the newest
// `keep` epochs (at least 2: a reader may still be reading the one before). InputError naming the
// directory and the system's reason when it cannot write (the half-built epoch removed). A
// DIR/schedule.json that is not ibroute's link is left as it is. Returns the epoch's own directory.
std::filesystem::path publish_epoch(const std::filesystem::path& dir, const schedule::ScheduleDoc& doc, size_t keep);

}  // namespace ibroute::workflow
