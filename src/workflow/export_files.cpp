#include "export_files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/parallel.hpp"
#include "ibroute/schedule/format.hpp"

namespace ibroute::workflow {

namespace fs = std::filesystem;

void write_text_file(const fs::path& p, const std::string& text) {
  errno = 0;
  std::ofstream out(p, std::ios::binary);
  if (!(out << text) || !out.flush())
    throw InputError("cannot write " + p.string() + (errno ? std::string(": ") + std::strerror(errno) : ""));
}

std::string slice_file_name(size_t rank, const std::string& host) {
  std::string safe = host;
  for (char& ch : safe)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '_';
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "rank%05zu-", rank);
  return prefix + safe + ".json";
}

void write_slices(const fs::path& dir, const schedule::ScheduleDoc& doc, const fabric::ProgressFn& progress) {
  const schedule::SliceWriter slices(doc);
  write_text_file(dir / schedule::kHostsFile, schedule::hosts_file_json(doc));
  // Blocks of ranks on every core: a block's columns are gathered in one pass over the phases.
  constexpr size_t kBlock = 64;
  const size_t n = doc.identities.size(), blocks = (n + kBlock - 1) / kBlock;
  std::atomic<size_t> next{0};
  const unsigned threads =
      static_cast<unsigned>(std::clamp<size_t>(blocks / 4, 1, std::max(1u, std::thread::hardware_concurrency())));
  fabric::run_parallel(threads, [&](unsigned t) {
    for (size_t b; (b = next.fetch_add(1)) < blocks;) {
      if (t == 0 && progress) fabric::report_or_stop(next, blocks, [&] { progress("slices", b * kBlock, n); });
      const size_t first = b * kBlock;
      const std::vector<std::string> texts = slices.slices(first, first + kBlock);
      for (size_t i = 0; i < texts.size(); ++i)
        write_text_file(dir / slice_file_name(first + i, doc.identities[first + i].name), texts[i]);
    }
  });
}

std::string epoch_dir_name(uint64_t epoch) {
  char name[40];
  std::snprintf(name, sizeof name, "epoch-%06llu", static_cast<unsigned long long>(epoch));
  return name;
}

namespace {

// The epoch a directory entry is ("epoch-000007": 7), 0 for anything else.
uint64_t epoch_of(const std::string& name) {
  if (name.size() < 7 || name.rfind("epoch-", 0) != 0 || name.size() > 6 + 15) return 0;
  uint64_t k = 0;
  for (size_t i = 6; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    k = k * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return k;
}

void replace_link(const fs::path& link, const fs::path& target) {
  const fs::path tmp = link.parent_path() / ("." + link.filename().string() + ".tmp-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::create_symlink(target, tmp, ec);
  if (!ec) fs::rename(tmp, link, ec);  // rename(2): readers see the old link or the new, never none
  if (ec) throw InputError("cannot make " + link.string() + " point at " + target.string() + ": " + ec.message());
}

}  // namespace

std::optional<uint64_t> current_epoch(const fs::path& dir) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(dir / kCurrentLink, ec);
  if (ec) return std::nullopt;
  const uint64_t k = epoch_of(target.filename().string());
  return k ? std::optional<uint64_t>(k) : std::nullopt;
}

uint64_t last_epoch_in(const fs::path& dir) {
  uint64_t last = current_epoch(dir).value_or(0);
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    last = std::max(last, epoch_of(e.path().filename().string()));
  return last;
}

namespace {
constexpr const char* kLockFile = ".ibroute-watch.lock";

// Whether `name` is a temporary of publish_epoch or replace_link: ".epoch-N.tmp-PID", ".current.tmp-PID".
bool our_temporary(const std::string& name) {
  const size_t at = name.rfind(".tmp-");
  if (name.empty() || name[0] != '.' || at == std::string::npos || at + 5 >= name.size()) return false;
  if (name.find_first_not_of("0123456789", at + 5) != std::string::npos) return false;
  const std::string stem = name.substr(1, at - 1);
  return stem == kCurrentLink || stem == "schedule.json" || epoch_of(stem) != 0;
}
}  // namespace

EpochDirLock::EpochDirLock(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw InputError("--export " + dir.string() + ": " +
                     (fs::exists(dir) ? "exists and is not a directory" : "cannot create it: " + ec.message()));
  const fs::path lock = dir / kLockFile;
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0)
    throw InputError("--export " + dir.string() + ": cannot open " + lock.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    ::close(fd_), fd_ = -1;
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    pid.erase(std::remove_if(pid.begin(), pid.end(), [](char c) { return c < '0' || c > '9'; }), pid.end());
    if (err == EWOULDBLOCK)
      throw InputError("--export " + dir.string() + ": another ibroute watch" +
                       (pid.empty() ? "" : " (pid " + pid + ")") + " publishes epochs there; one writer per directory");
    throw InputError("--export " + dir.string() + ": cannot lock " + lock.string() + ": " + std::strerror(err));
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    const int err = errno;
    ::close(fd_), fd_ = -1;
    throw InputError("--export " + dir.string() + ": cannot write " + lock.string() + ": " + std::strerror(err));
  }
  const fs::path cur = dir / kCurrentLink;
  if (fs::exists(fs::symlink_status(cur, ec)) && !fs::is_symlink(fs::symlink_status(cur, ec))) {
    ::close(fd_), fd_ = -1;
    throw InputError(
        "--export " + dir.string() + ": " + cur.string() +
        " is not ibroute's link (a file or directory of its own): left as it is, choose another directory");
  }
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (our_temporary(e.path().filename().string())) stale_ += fs::remove_all(e.path(), ec) > 0;
}

EpochDirLock::~EpochDirLock() {
  if (fd_ >= 0) ::close(fd_);  // the lock goes with the descriptor (and with the process)
}

fs::path publish_epoch(const fs::path& dir, const schedule::ScheduleDoc& doc, size_t keep) {
  if (!doc.epoch) throw std::logic_error("publish_epoch: the document has no epoch number");
  if (doc.epoch > kMaxEpoch)
    throw InputError("--export " + dir.string() + ": epoch " + std::to_string(doc.epoch) + " is beyond the " +
                     std::to_string(kMaxEpoch) + " peers read");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw InputError("--export " + dir.string() + ": " +
                     (fs::exists(dir) ? "exists and is not a directory" : "cannot create it: " + ec.message()));
  const std::string name = epoch_dir_name(doc.epoch);
  const fs::path building = dir / ("." + name + ".tmp-" + std::to_string(::getpid())), final_dir = dir / name;
  fs::remove_all(building, ec);
  if (fs::exists(final_dir)) throw InputError(final_dir.string() + " exists already: epochs are never rewritten");
  if (!fs::create_directory(building, ec)) throw InputError("cannot create " + building.string() + ": " + ec.message());
  try {
    write_text_file(building / "schedule.json", schedule::to_json(doc));
    write_slices(building, doc);
    fs::rename(building, final_dir, ec);
    if (ec) throw InputError("cannot rename " + building.string() + " to " + final_dir.string() + ": " + ec.message());
  } catch (...) {
    fs::remove_all(building, ec);  // a full disk keeps no half-built epoch
    throw;
  }
  replace_link(dir / kCurrentLink, name);
  // A schedule.json of the user's own is not replaced: peers read DIR/current/schedule.json.
  if (!fs::exists(fs::symlink_status(dir / "schedule.json", ec)))
    replace_link(dir / "schedule.json", fs::path(kCurrentLink) / "schedule.json");
  // The oldest go; at least the newest two stay.
  std::vector<uint64_t> epochs;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (const uint64_t k = epoch_of(e.path().filename().string()); k && e.is_directory()) epochs.push_back(k);
  std::sort(epochs.begin(), epochs.end());
  const size_t keep_at_least = std::max<size_t>(keep, 2);
  for (size_t i = 0; i + keep_at_least < epochs.size(); ++i) fs::remove_all(dir / epoch_dir_name(epochs[i]), ec);
  return final_dir;
}

}  // namespace ibroute::workflow
