#include "text_input.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "ibroute/fabric/error.hpp"

namespace ibroute::workflow {

// "1M" = 1048576 bytes (binary, for sizes); "5G" = "5GB/s" = 5e9 bytes per second (decimal, for
// rates); "5GiB/s" = 5 * 2^30 (binary when it says so); "40Gb/s" = "40Gbit/s" = 5e9 bytes per
// second (bits, for rates); plain numbers too.
// One convention for sizes and rates alike (docs/units.md): K, M, G, T are powers of 1000, Ki,
// Mi, Gi, Ti powers of 1024; B is bytes, b (b/s, bit/s, bps) bits. A size may be a bare count of
// bytes; a rate needs a unit, since "40" could be bytes, bits or Gb/s.
// The number that starts `t`: decimal digits with an optional fraction and exponent. No sign, no
// hex ("0x10G"), no "nan" or "inf", no leading blank — what strtod would also have taken. 0: none.
size_t decimal_prefix(const std::string& t) {
  auto digit = [&](size_t i) { return i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); };
  size_t i = 0, digits = 0;
  for (; digit(i); ++i) ++digits;
  if (i < t.size() && t[i] == '.')
    for (++i; digit(i); ++i) ++digits;
  if (digits == 0) return 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    size_t j = i + 1;
    if (j < t.size() && (t[j] == '+' || t[j] == '-')) ++j;
    size_t k = j;
    while (digit(k)) ++k;
    if (k > j) i = k;
  }
  return i;
}

// One line, whatever came in.
std::string shown_text(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= 40) return out + "...";
    if (c == '\n')
      out += "\\n";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else
      out += static_cast<char>(c);
  }
  return out;
}

double parse_quantity(const std::string& text, bool size, const char* what) {
  const std::string forms = size ? "sizes: 1048576, 64KiB, 1MiB, 1GiB (1024^n), 64K, 1MB (1000^n)"
                                 : "rates: 5G or 5GB/s (bytes, 1000^n), 5GiB/s (1024^n), 40Gb/s or 40Gbit/s (bits)";
  const size_t used = decimal_prefix(text);
  if (used == 0)
    throw InputError(std::string(what) + " '" + shown_text(text) + "' is not a decimal number (" + forms + ")");
  const double v = std::strtod(text.substr(0, used).c_str(), nullptr);
  std::string unit = text.substr(used);
  if (unit.starts_with(' ')) unit.erase(0, 1);  // "40 Gb/s"
  if (!size && unit.empty())
    throw InputError(std::string(what) + " '" + shown_text(text) + "' has no unit (" + forms + ")");
  double mult = 1;
  if (!unit.empty()) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    const size_t p = std::string_view("KMGT").find(u);
    if (p != std::string_view::npos) {
      const bool binary = unit.size() >= 2 && unit[1] == 'i';
      mult = std::pow(binary ? 1024.0 : 1000.0, static_cast<double>(p + 1));
      unit.erase(0, binary ? 2 : 1);
    }
    // Bytes (B, B/s; nothing after a prefix) or, for rates, bits ("40Gb/s" is 5e9 bytes per second).
    const bool bytes = unit.empty() || unit == "B" || (!size && unit == "B/s");
    const bool bits = !size && (unit == "b/s" || unit == "bit/s" || unit == "bps" || unit == "Bit/s");
    if (!bytes && !bits)
      throw InputError(std::string(what) + " '" + shown_text(text) + "': unknown unit '" +
                       shown_text(text.substr(used)) + "' (" + forms + ")");
    if (bits) mult /= 8;
  }
  // What every reader downstream holds (the database, a schedule file, a peer): a message of 1 B
  // to 1 TiB, a rate of 1 B/s to 1 PB/s; beyond them a typo, refused before anything is stored.
  const double q = v * mult, lo = 1, hi = size ? static_cast<double>(uint64_t{1} << 40) : 1e15;
  if (!(q >= lo && q <= hi))
    throw InputError(std::string(what) + " '" + shown_text(text) + "' is out of range (" +
                     (size ? "1 B .. 1 TiB" : "1 B/s .. 1 PB/s") + ")");
  return q;
}

std::string read_file(const std::string& path, size_t max_bytes) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read " + path + (errno ? std::string(": ") + std::strerror(errno) : ""));
  // Read in chunks up to the cap: /dev/zero or a 200 MB file given by mistake is refused at the
  // cap, not after the process has grown to gigabytes.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw InputError(path + " is larger than " + std::to_string(max_bytes >> 20) + " MiB (not the file meant?)");
  }
  if (in.bad()) throw InputError("cannot read " + path + (errno ? std::string(": ") + std::strerror(errno) : ""));
  return text;
}

}  // namespace ibroute::workflow
