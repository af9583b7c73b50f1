// A fabric database (SQLite file) opened read-only, every scan's fabric and routes and every
// schedule loaded, as the read-only commands do.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "fabric_store.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/ibroute-fuzz-" + std::to_string(getpid()) + ".db";
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    std::abort();
  }
  int rc = ibroute::fuzz::run([&] {
    using namespace ibroute::store;
    FabricStore store(path, Access::read_only);
    for (const ScanInfo& scan : store.scans()) {
      store.load_fabric(scan.id, true);
      store.load_routes(scan.id);
      for (const CounterSnapshotInfo& c : store.counter_snapshots(scan.id)) store.load_counters(c.id);
    }
    for (const ScheduleInfo& s : store.schedules()) store.load_schedule(s.id);
  });
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return rc;
}
