// What every command reads as text: whole files and quantities with units (docs/units.md).
#pragma once

#include <string>

namespace ibroute::workflow {

// A whole file; InputError "cannot read PATH" when it cannot be opened.
std::string read_file(const std::string& path);

// Sizes (`size`) and rates in one convention: "1M" = "1MB" = 1e6, "1MiB" = 2^20, "5G" = "5GB/s" =
// 5e9 bytes/s, "40Gb/s" = 5e9 bytes/s; a size may be a bare number of bytes, a rate needs a unit.
// Decimal only (no hex, nan or inf); a size 1 B .. 1 TiB, a rate 1 B/s .. 1 PB/s. Throws
// InputError naming `what` and the accepted forms or range.
double parse_quantity(const std::string& text, bool size, const char* what);

}  // namespace ibroute::workflow
