// What every fuzz target shares: bytes as text, and the rule that input may be refused only by
// ibroute::InputError (exit code 2, one line). Any other exception escaping a parser is a bug:
// abort, so that libFuzzer (or the replay driver) reports the input.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <typeinfo>

#include "ibroute/fabric/error.hpp"

namespace ibroute::fuzz {

inline std::string_view text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

template <class F>
int run(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    // Expected: refused. The message must be one line (the CLI prints it as such).
    for (const char* p = e.what(); *p; ++p)
      if (*p == '\n') {
        std::fprintf(stderr, "fuzz: InputError of more than one line: %s\n", e.what());
        std::abort();
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: %s escaped the parser: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
  return 0;
}

}  // namespace ibroute::fuzz
