#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include "common.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <iostream>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/node_names.hpp"

namespace ibroute::cli {

using namespace ibroute::fabric;

int64_t pick_scan(store::FabricStore& store, std::optional<int64_t> requested) {
  if (requested) {
    store.scan(*requested);  // throws InputError when absent
    return *requested;
  }
  return store.latest_scan();
}


PortSel find_port(const Fabric& f, const std::string& spec, const std::string& what) {
  const NamedPort p = NodeNames(f).resolve(spec, what);
  return {p.node, p.port};
}

Progress::Progress() : tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::operator()(std::string_view stage, size_t done, size_t total) {
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (stage != stage_) stage_ = stage, start_ = now, last_ = {};
  if (done < total && last_ != std::chrono::steady_clock::time_point{} && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  std::string text = "[" + stage_ + "] " + std::to_string(done) + "/" + std::to_string(total);
  if (total) text += "  " + std::to_string(done * 100 / total) + " %";
  const double secs = std::chrono::duration<double>(now - start_).count();
  if (done > 0 && done < total && secs >= 1) {
    const double left = secs * static_cast<double>(total - done) / static_cast<double>(done);
    text += left < 90 ? "  ~" + std::to_string(static_cast<int>(left + 0.5)) + " s left"
                      : "  ~" + std::to_string(static_cast<int>(left / 60 + 0.5)) + " min left";
  }
  std::fprintf(stderr, "\r%-60s", text.c_str());
  std::fflush(stderr);
  dirty_ = true;
}

void Progress::finish() {
  if (dirty_) std::fprintf(stderr, "\r%60s\r", "");
  dirty_ = false;
}

void print_json(const nlohmann::json& j) {
  if (!j.is_object()) {
    std::cout << j.dump(2) << '\n';
    return;
  }
  nlohmann::json out = j;
  out["ibroute_version"] = IBROUTE_VERSION;  // which ibroute wrote it, for scripts that keep outputs
  std::cout << out.dump(2) << '\n';
}

// "1M" = 1048576 bytes (binary, for sizes); "5G" = "5GB/s" = 5e9 bytes per second (decimal, for
// rates); "5GiB/s" = 5 * 2^30 (binary when it says so); "40Gb/s" = "40Gbit/s" = 5e9 bytes per
// second (bits, for rates); plain numbers too.
// One convention for sizes and rates alike (docs/units.md): K, M, G, T are powers of 1000, Ki,
// Mi, Gi, Ti powers of 1024; B is bytes, b (b/s, bit/s, bps) bits. A size may be a bare count of
// bytes; a rate needs a unit, since "40" could be bytes, bits or Gb/s.
double parse_quantity(const std::string& text, bool size, const char* what) {
  const std::string forms = size ? "sizes: 1048576, 64KiB, 1MiB, 1GiB (1024^n), 64K, 1MB (1000^n)"
                                 : "rates: 5G or 5GB/s (bytes, 1000^n), 5GiB/s (1024^n), 40Gb/s or 40Gbit/s (bits)";
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw InputError(std::string(what) + " '" + text + "' is not a number (" + forms + ")");
  }
  std::string unit = text.substr(used);
  if (unit.starts_with(' ')) unit.erase(0, 1);  // "40 Gb/s"
  if (!size && unit.empty()) throw InputError(std::string(what) + " '" + text + "' has no unit (" + forms + ")");
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
    if (!bytes && !bits) throw InputError(std::string(what) + " '" + text + "': unknown unit '" + text.substr(used) + "' (" + forms + ")");
    if (bits) mult /= 8;
  }
  if (!(v > 0) || !std::isfinite(v)) throw InputError(std::string(what) + " must be more than 0");
  // Callers turn sizes into 64-bit integers: anything near that is a typo, not a message size or rate.
  if (v * mult > 1e18) throw InputError(std::string(what) + " '" + text + "' is beyond any size or rate (at most 1e18)");
  return v * mult;
}

namespace {
char** g_argv = nullptr;
}  // namespace

void remember_argv(char** argv) { g_argv = argv; }
char** remembered_argv() { return g_argv; }

std::string own_executable() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw std::runtime_error("cannot find the ibroute executable (/proc/self/exe)");
  self[n] = 0;
  return self;
}

std::string own_directory() {
  std::string p = own_executable();
  return p.substr(0, p.rfind('/'));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace ibroute::cli
