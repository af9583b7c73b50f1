#include "whole_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ibroute/fabric/error.hpp"

namespace ibroute::workflow {

namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

WholeFile::WholeFile(std::string path) : path_(std::move(path)) {
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  std::vector<char> name(dir.begin(), dir.end());
  const std::string tail = "." + base + ".XXXXXX";
  name.insert(name.end(), tail.begin(), tail.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw InputError("cannot write " + path_ + ": " + errno_text());
  // mkstemp makes it 0600; a finished file gets what any new file would (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  tmp_ = name.data();
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    ::unlink(tmp_.c_str());
    throw InputError("cannot write " + path_);
  }
}

WholeFile::~WholeFile() {
  if (done_) return;
  out_.close();
  ::unlink(tmp_.c_str());
}

void WholeFile::commit() {
  if (!out_.flush()) throw InputError("cannot write " + path_ + " (disk full?)");
  out_.close();
  const int fd = ::open(tmp_.c_str(), O_RDONLY);
  const bool synced = fd >= 0 && ::fsync(fd) == 0;
  const std::string why = synced ? "" : errno_text();
  if (fd >= 0) ::close(fd);
  if (!synced) throw InputError("cannot write " + path_ + ": " + why);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) throw InputError("cannot write " + path_ + ": " + errno_text());
  done_ = true;
}

void write_whole_file(const std::string& path, std::string_view text) {
  WholeFile f(path);
  f.out().write(text.data(), static_cast<std::streamsize>(text.size()));
  f.commit();
}

}  // namespace ibroute::workflow
