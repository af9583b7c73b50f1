// What every command reads as text: whole files and quantities with units (docs/units.md).
#pragma once

#include <cstddef>
#include <string>

namespace ibroute::workflow {

// A whole file; InputError "cannot read PATH" when it cannot be opened or read, and when it holds
// more than `max_bytes` (1 GiB: a run report of 2 048 ranks is tens of MB).
inline constexpr size_t kMaxInputFile = size_t{1} << 30;
std::string read_file(const std::string& path, size_t max_bytes = kMaxInputFile);
// A host list (--hosts @FILE, --placement): 10 000 hosts are a megabyte.
inline constexpr size_t kMaxHostList = size_t{64} << 20;

// A value from outside as a message quotes it: control characters escaped, cut after 40 bytes.
std::string shown_text(const std::string& text);

// Sizes (`size`) and rates in one convention: "1M" = "1MB" = 1e6, "1MiB" = 2^20, "5G" = "5GB/s" =
// 5e9 bytes/s, "40Gb/s" = 5e9 bytes/s; a size may be a bare number of bytes, a rate needs a unit.
// Decimal only (no hex, nan or inf); a size 1 B .. 1 TiB, a rate 1 B/s .. 1 PB/s. Throws
// InputError naming `what` and the accepted forms or range.
double parse_quantity(const std::string& text, bool size, const char* what);
// The length of the decimal number (digits, fraction, exponent; no sign, hex, nan or inf) that
// starts `t`; 0 where none does.
size_t decimal_prefix(const std::string& t);

}  // namespace ibroute::workflow
