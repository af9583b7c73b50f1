// ibdiagnet's db_csv database -> fabric, and its PM_INFO -> a counters snapshot of it.
#include "fuzz_common.hpp"
#include "ibroute/fabric/text_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ibroute::fuzz::run([&] {
    const std::string_view text = ibroute::fuzz::text(data, size);
    const ibroute::fabric::Fabric f = ibroute::fabric::parse_ibdiagnet_csv(text, "fuzz");
    ibroute::fabric::parse_ibdiagnet_counters(text, f, "fuzz");
  });
}
