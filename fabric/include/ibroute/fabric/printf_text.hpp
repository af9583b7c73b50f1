// Numbers into sentences: a printf format with up to two doubles, as a string (the reports'
// figures and verdicts; one helper rather than a buffer in every file that says a number).
#pragma once

#include <cstdio>
#include <string>

namespace ibroute::fabric {

inline std::string printf_text(const char* format, double a, double b = 0) {
  char buf[192];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

}  // namespace ibroute::fabric
