// ibdiagnet's db_csv database -> fabric.
#include "fuzz_common.hpp"
#include "ibroute/fabric/text_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ibroute::fuzz::run([&] { ibroute::fabric::parse_ibdiagnet_csv(ibroute::fuzz::text(data, size), "fuzz"); });
}
