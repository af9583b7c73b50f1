// A cabling plan (workflow/cabling_plan.hpp: `diff --against`, accept's `cabling`): CSV rows or an
// ibnetdiscover output, then checked against a small fabric built in memory. Refused only by
// InputError; every planned cable is counted once (as_planned + 2 x swapped + moved + missing +
// unresolved = planned), and no finding names a port the fabric cannot have.
#include <string>

#include "cabling_plan.hpp"
#include "fuzz_common.hpp"
#include "fuzz_fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ibroute;
  const fabric::Fabric& f = fuzz::small_fabric();
  return fuzz::run([&] {
    const std::vector<fabric::Cable> plan = workflow::parse_cabling_plan(std::string(fuzz::text(data, size)), "fuzz");
    const fabric::CablingCheck c = fabric::check_cabling(f, plan);
    const size_t counted =
        c.as_planned + 2 * c.swapped.size() + c.moved.size() + c.missing.size() + c.unresolved.size();
    if (counted != c.planned || c.planned != plan.size()) {
      std::fprintf(stderr, "fuzz: %zu planned cables, %zu counted\n", plan.size(), counted);
      std::abort();
    }
    for (const fabric::Cable& k : c.extra)
      if (k.a.port < 1 || k.a.port > 254 || k.b.port < 1 || k.b.port > 254) std::abort();
  });
}
