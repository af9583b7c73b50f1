// An enum whose values are 0, 1, 2, ... and the names it is written as, in that order: the name
// of a value ("?" for one out of range: a value read from outside) and the value of a name.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace ibroute::fabric {

template <class E, size_t N>
constexpr std::string_view enum_name(const std::array<std::string_view, N>& names, E e) {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : std::string_view("?");
}

template <class E, size_t N>
constexpr bool enum_from(const std::array<std::string_view, N>& names, std::string_view s, E& out) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) {
      out = static_cast<E>(i);
      return true;
    }
  return false;
}

}  // namespace ibroute::fabric
