// How far a long step is, for the CLI to show on a terminal: (stage, done, total). The cores
// call it from the thread that called them only, and only every so often.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace ibroute::fabric {

using ProgressFn = std::function<void(std::string_view stage, size_t done, size_t total)>;

}  // namespace ibroute::fabric
