// bench/follow_channels_synthetic: what a following run's rank holds of the run's connections —
// its own (FollowChannels::own, every rank but 0) against the whole list (every rank before, rank
// 0 now) — at LMC 2, medians of 5. The whole list is built up to --build-max ranks; beyond that its
// size is counted, not built.
//   build-ci/bench/follow_channels_synthetic [--build-max 2000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ibroute/runner/epoch_follow.hpp"

using namespace ibroute::runner;

namespace {

template <class F>
double median_ms(F f) {
  std::vector<double> t;
  for (int k = 0; k < 5; ++k) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

}  // namespace

int main(int argc, char** argv) {
  size_t build_max = 2000;
  if (argc == 3 && std::strcmp(argv[1], "--build-max") == 0) build_max = std::strtoul(argv[2], nullptr, 10);
  std::printf("%8s %14s %12s %10s %14s %12s %10s %10s\n", "ranks", "own channels", "own MiB", "own ms", "all channels",
              "all MiB", "all ms", "all/own");
  for (size_t n : {100, 1000, 2000, 10000}) {
    std::vector<uint16_t> lids;
    for (size_t r = 0; r < n; ++r) lids.push_back(static_cast<uint16_t>(1 + 4 * r));
    const FollowChannels fc(lids, 2);
    std::vector<Channel> own;
    std::vector<uint32_t> ids;
    const int32_t me = static_cast<int32_t>(n / 2);
    const double own_ms = median_ms([&] { fc.own(me, own, ids); });
    const double own_mib =
        static_cast<double>(own.size() * sizeof(Channel) + ids.size() * sizeof(uint32_t)) / (1 << 20);
    const double all_mib = static_cast<double>(fc.size() * sizeof(Channel)) / (1 << 20);
    double all_ms = -1;
    if (n <= build_max)
      all_ms = median_ms([&] {
        const std::vector<Channel> all = fc.all();
        if (all.size() != fc.size()) std::abort();
      });
    char all_t[32] = "not built";
    if (all_ms >= 0) std::snprintf(all_t, sizeof all_t, "%.2f", all_ms);
    std::printf("%8zu %14zu %12.3f %10.3f %14llu %12.1f %10s %10.0f\n", n, own.size(), own_mib, own_ms,
                static_cast<unsigned long long>(fc.size()), all_mib, all_t, all_mib / own_mib);
  }
}
