// The expectation file of `ibroute accept` (docs/acceptance.md).
#include "accept_input.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ibroute::fuzz::run([&] { ibroute::cli::parse_expectation(ibroute::fuzz::text(data, size), "fuzz"); });
}
