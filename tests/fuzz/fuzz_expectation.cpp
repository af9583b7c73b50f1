// The expectation file of `ibroute accept` (docs/acceptance.md).
#include "expectation.hpp"
#include "fuzz_common.hpp"
#include "run_report_read.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ibroute::fuzz::run([&] { ibroute::workflow::parse_expectation(ibroute::fuzz::text(data, size), "fuzz"); });
}
