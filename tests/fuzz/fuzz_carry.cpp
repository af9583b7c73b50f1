// The exporter's carry file (workflow/counter_carry.hpp: the ports' last counters between
// readings), read against a small fabric built in memory. Refused only by InputError; what it
// gives are ports the fabric has, once each and in order, every counter within its width, and
// written out and read again it is the same.
#include <string>

#include "counter_carry.hpp"
#include "fuzz_common.hpp"
#include "fuzz_fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ibroute;
  const fabric::Fabric& f = fuzz::small_fabric();
  return fuzz::run([&] {
    const std::vector<fabric::PortSample> got = workflow::parse_carry(std::string(fuzz::text(data, size)), f);
    for (size_t k = 0; k < got.size(); ++k) {
      const fabric::PortSample& s = got[k];
      if (s.node < 0 || static_cast<size_t>(s.node) >= f.nodes.size() || s.port < 1 ||
          s.port > f.nodes[static_cast<size_t>(s.node)].num_ports())
        std::abort();
      if (k && std::pair(got[k - 1].node, got[k - 1].port) >= std::pair(s.node, s.port)) std::abort();
      for (size_t i = 0; i < fabric::kCounters; ++i)
        if (const int bits = fabric::counter_bits(static_cast<fabric::Counter>(i), s.extended);
            bits < 64 && s.v[i] >> bits)
          std::abort();
    }
    if (workflow::parse_carry(workflow::carry_text(f, got), f) != got) std::abort();
  });
}
