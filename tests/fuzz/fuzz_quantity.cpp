// The one parser of sizes and rates (workflow/text_input.hpp: options, expectation files): the
// first byte chooses size or rate, the rest is the text. Decimal only; what it returns is within
// the documented range (a size 1 B .. 1 TiB, a rate 1 B/s .. 1 PB/s) and finite, else InputError.
#include <cmath>
#include <string>

#include "fuzz_common.hpp"
#include "text_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ibroute;
  return fuzz::run([&] {
    if (size == 0) return;
    const bool is_size = data[0] & 1;
    const std::string text(fuzz::text(data + 1, size - 1));
    if (workflow::decimal_prefix(text) > text.size()) {
      std::fprintf(stderr, "fuzz: decimal_prefix beyond the text\n");
      std::abort();
    }
    const double v = workflow::parse_quantity(text, is_size, "--fuzz");
    const double hi = is_size ? 1099511627776.0 : 1e15;
    if (!std::isfinite(v) || v < 1 || v > hi) {
      std::fprintf(stderr, "fuzz: %s read as %g, outside 1 .. %g\n", text.c_str(), v, hi);
      std::abort();
    }
  });
}
