// bench/epoch_write_synthetic: what writing one epoch costs at sizes ibsim cannot hold — the
// schedule file, the host table and one slice per host (publish_epoch, as `ibroute watch` writes
// it; `ibroute export --per-node` writes the same slices). An all-to-all of HOSTS ranks in shifts,
// LMC 2, each transfer's DLID offset drawn at random (fixed seed). Prints one JSON line: the
// seconds of each round, their median and the bytes written.
//
//   epoch_write_synthetic HOSTS ROUNDS
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "export_files.hpp"
#include "ibroute/schedule/schedule.hpp"

using namespace ibroute;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: epoch_write_synthetic HOSTS ROUNDS\n";
    return 2;
  }
  const size_t n = static_cast<size_t>(std::atol(argv[1]));
  const int rounds = std::atoi(argv[2]);
  if (n < 2 || n > 20000 || rounds < 1) {
    std::cerr << "epoch_write_synthetic: HOSTS 2..20000, ROUNDS >= 1\n";
    return 2;
  }
  schedule::ScheduleDoc doc;
  doc.schedule.name = "daq.e1";
  doc.schedule.method = "free";
  doc.schedule.bound = 2;
  doc.schedule.timing.message_size = 1 << 20;
  doc.fabric = {1, "2026-11-26T00:00:00Z", 2};
  doc.created_at = "2026-11-26T00:00:00Z";
  for (size_t r = 0; r < n; ++r) {
    doc.schedule.hosts.push_back({-1, 0, "node" + std::to_string(r)});
    doc.identities.push_back(
        {"node" + std::to_string(r) + " HCA-1", 0x1000 + r, 0x2000 + r, static_cast<uint16_t>(1 + 4 * r), 2});
  }
  std::mt19937 rng(7);
  doc.schedule.phases = schedule::shift_phases(n);
  for (schedule::Phase& ph : doc.schedule.phases)
    for (size_t i = 0; i < n; ++i) ph.dlid[i] = static_cast<uint16_t>(doc.identities[ph.dst[i]].base_lid + rng() % 4);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("epoch-bench-" + std::to_string(::getpid()));
  std::vector<double> times;
  uintmax_t bytes = 0;
  for (int k = 0; k < rounds; ++k) {
    doc.epoch = static_cast<uint64_t>(k + 1);
    const auto t0 = std::chrono::steady_clock::now();
    const std::filesystem::path written = workflow::publish_epoch(dir, doc, 2);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    bytes = 0;
    for (const auto& e : std::filesystem::directory_iterator(written)) bytes += e.file_size();
  }
  std::filesystem::remove_all(dir);
  nlohmann::json j{{"hosts", n}, {"seconds", times}, {"bytes", bytes}};
  std::sort(times.begin(), times.end());
  j["median_s"] = times[times.size() / 2];
  std::cout << j.dump() << std::endl;
}
