// The run report `ibroute accept --run-report` reads (as `ibroute run -o` writes it), judged
// against a plan of 4 hosts (the seeds' size, so that the per-pair matrix is filled).
#include "expectation.hpp"
#include "fuzz_common.hpp"
#include "run_report_read.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ibroute::fuzz::run([&] { ibroute::workflow::parse_run_report(ibroute::fuzz::text(data, size), "fuzz", 4); });
}
