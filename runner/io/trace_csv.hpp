// `ibroute run --trace DIR`: every rank writes each transfer it sent or received to its own
// local file, DIR/trace-<schedule rank>.csv, never through MPI (a deep dive must not cost the
// gathering). Format: docs/run-report.md, "Trace files". Rows are formatted by hand into a
// large buffer: a few tens of ns per transfer, so tracing does not change the timing it shows.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "ibroute/runner/run_stats.hpp"

namespace ibroute::runner {

class TraceCsv {
 public:
  // Throws std::runtime_error naming the file when it cannot be created.
  TraceCsv(const std::string& dir, int32_t rank, const std::string& host, const std::string& schedule, uint32_t phases);
  ~TraceCsv();
  TraceCsv(const TraceCsv&) = delete;
  // Times: ns since t0 on the reference clock; < 0: did not happen (written empty).
  void send(const TransferRecord& t, int64_t planned, int64_t posted, int64_t completed);
  void receive(uint32_t seq_low, int32_t src, int32_t dst, uint16_t dlid, uint8_t verified, int64_t arrived);
  // Flushes and closes; throws when the disk took less than was written (full, quota).
  void close();
  const std::string& path() const { return path_; }

 private:
  void field(int64_t v, bool empty = false);
  void flush_if_full();
  std::string path_;
  FILE* f_ = nullptr;
  uint32_t phases_;
  char buf_[1 << 16];
  size_t used_ = 0;
  bool failed_ = false;
};

}  // namespace ibroute::runner
