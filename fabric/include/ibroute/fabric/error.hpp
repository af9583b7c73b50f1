#pragma once
#include <stdexcept>
#include <string>

namespace ibroute {

// Input that cannot be used: a malformed file, an unknown node, a bad option value.
// The CLI maps it to exit code 2; everything else that fails is exit code 1.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ibroute
