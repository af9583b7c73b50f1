// A rank's result message as rank 0 of `ibroute run` decodes it (runner/core/run_stats.cpp),
// in a run of 4 ranks: refused with std::runtime_error (rank 0 names the rank and stops), or
// decoded, merged and summarised, and encoded back to exactly the bytes it came from.
#include <cstdlib>

#include "fuzz_common.hpp"
#include "ibroute/runner/run_report.hpp"
#include "ibroute/runner/run_stats.hpp"

using namespace ibroute;
using namespace ibroute::runner;

namespace {
const schedule::Schedule& world() {
  static const schedule::Schedule s = [] {
    schedule::Schedule w;
    w.hosts.resize(4);
    w.phases = schedule::shift_phases(4);
    for (auto& ph : w.phases)
      for (size_t i = 0; i < 4; ++i) ph.dlid[i] = static_cast<uint16_t>(1 + ph.dst[i] * 4 + (i % 2));
    return w;
  }();
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    static const std::vector<Channel> channels = channels_of(world());
    const std::vector<uint8_t> bytes(data, data + size);
    RankStats st;
    try {
      st = decode(bytes, channels, 4);
    } catch (const std::runtime_error&) {
      return;  // refused, as rank 0 refuses it
    }
    if (encode(st) != bytes) {
      std::fprintf(stderr, "fuzz: a decoded message encodes to other bytes\n");
      std::abort();
    }
    RunMerge m(channels, 4, 1'000'000'000, 10);
    m.add(st);
    m.lost((st.rank + 1) % 4, planned_per_channel(world(), channels, 3), 1000);
    summarise(world(), m, {}, nullptr, nullptr);
  });
}
