#include "trace_csv.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

namespace ibroute::runner {

namespace {
constexpr const char* kHeader =
    "kind,seq,round,phase,src,dst,dlid,status,wc_status,verified,planned_ns,posted_ns,completed_ns\n";
}

TraceCsv::TraceCsv(const std::string& dir, int32_t rank, const std::string& host, const std::string& schedule,
                   uint32_t phases)
    : path_(dir + "/trace-" + std::to_string(rank) + ".csv"), phases_(phases ? phases : 1) {
  f_ = std::fopen(path_.c_str(), "w");
  if (!f_) throw std::runtime_error("--trace: cannot create " + path_ + ": " + std::strerror(errno));
  // Host and schedule names come from files: keep the comment one line.
  auto clean = [](std::string s) {
    for (char& c : s)
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    return s;
  };
  std::fprintf(f_, "# ibroute run trace of rank %d (%s), schedule '%s'; times: ns since t0 on rank 0's clock\n", rank,
               clean(host).c_str(), clean(schedule).c_str());
  std::fputs(kHeader, f_);
}

TraceCsv::~TraceCsv() {
  if (f_) std::fclose(f_);
}

void TraceCsv::flush_if_full() {
  if (used_ + 256 <= sizeof buf_) return;
  if (std::fwrite(buf_, 1, used_, f_) != used_) failed_ = true;
  used_ = 0;
}

void TraceCsv::field(int64_t v, bool empty) {
  if (!empty) used_ = static_cast<size_t>(std::to_chars(buf_ + used_, buf_ + sizeof buf_, v).ptr - buf_);
  buf_[used_++] = ',';
}

void TraceCsv::send(const TransferRecord& t, int64_t planned, int64_t posted, int64_t completed) {
  flush_if_full();
  std::memcpy(buf_ + used_, "send,", 5), used_ += 5;
  used_ = static_cast<size_t>(std::to_chars(buf_ + used_, buf_ + sizeof buf_, t.seq).ptr - buf_);
  buf_[used_++] = ',';
  used_ = static_cast<size_t>(std::to_chars(buf_ + used_, buf_ + sizeof buf_, t.seq / phases_).ptr - buf_);
  buf_[used_++] = ',';
  used_ = static_cast<size_t>(std::to_chars(buf_ + used_, buf_ + sizeof buf_, t.seq % phases_).ptr - buf_);
  buf_[used_++] = ',';
  field(t.src), field(t.dst), field(t.dlid);
  const char* st = to_string(t.status);
  const size_t n = std::strlen(st);
  std::memcpy(buf_ + used_, st, n), used_ += n;
  buf_[used_++] = ',';
  field(t.wc_status, t.wc_status < 0), field(t.verified, t.verified == 0);
  field(planned, planned < 0), field(posted, posted < 0);
  if (completed >= 0)
    used_ = static_cast<size_t>(std::to_chars(buf_ + used_, buf_ + sizeof buf_, completed).ptr - buf_);
  buf_[used_++] = '\n';
}

void TraceCsv::receive(uint32_t seq_low, int32_t src, int32_t dst, uint16_t dlid, uint8_t verified, int64_t arrived) {
  flush_if_full();
  std::memcpy(buf_ + used_, "recv,", 5), used_ += 5;
  field(seq_low);
  buf_[used_++] = ',', buf_[used_++] = ',';  // round and phase: the receiver knows only the low 32 bits of seq
  field(src), field(dst), field(dlid);
  const char* st = verified == 2 ? "corrupt" : "ok";
  const size_t n = std::strlen(st);
  std::memcpy(buf_ + used_, st, n), used_ += n;
  buf_[used_++] = ',', buf_[used_++] = ',';
  field(verified, verified == 0);
  buf_[used_++] = ',', buf_[used_++] = ',';
  used_ = static_cast<size_t>(std::to_chars(buf_ + used_, buf_ + sizeof buf_, arrived).ptr - buf_);
  buf_[used_++] = '\n';
}

void TraceCsv::close() {
  if (!f_) return;
  if (used_ && std::fwrite(buf_, 1, used_, f_) != used_) failed_ = true;
  used_ = 0;
  if (std::fclose(f_) != 0) failed_ = true;
  f_ = nullptr;
  if (failed_) throw std::runtime_error("--trace: writing " + path_ + " failed (disk full?)");
}

}  // namespace ibroute::runner
