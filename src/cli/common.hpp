// Helpers the subcommands share: database and scan selection, node lookup, progress, JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "fabric_store.hpp"
#include "ibroute/fabric/model.hpp"

namespace ibroute::cli {

// Exit codes (also in `ibroute --help`).
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;     // the fabric or the system failed us
constexpr int kExitBadInput = 2;    // bad option, file, database, node name
constexpr int kExitIncomplete = 3;  // scan stored, but some MADs went unanswered

constexpr const char* kDefaultDb = "ibroute.db";

// The scan a command reads: --scan N, or the newest one.
int64_t pick_scan(store::FabricStore& store, std::optional<int64_t> requested);

// NODE as the user gives it: a node description, a node or port GUID (0x…), or a LID.
// Returns (node index, port). For a CA given by name or node GUID: its first connected port.
struct PortSel {
  int node;
  int port;
};
// A node or port by any name NodeNames knows; InputError naming `what` (the option) otherwise.
PortSel find_port(const fabric::Fabric& f, const std::string& spec, const std::string& what);

// "\r[lft] 2048/10400" on stderr while stderr is a terminal; silent otherwise.
// Progress of long steps on stderr, only when it is a terminal: "[stage] done/total  41 %  ~35 s
// left", redrawn at most ten times a second; silent in pipes and logs.
class Progress {
 public:
  Progress();
  ~Progress() { finish(); }  // an error unwinding past it prints on a clean line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void operator()(std::string_view stage, size_t done, size_t total);
  void finish();

 private:
  bool tty_;
  bool dirty_ = false;
  std::string stage_;
  std::chrono::steady_clock::time_point start_, last_;
};

void print_json(const nlohmann::json& j);

// The command line as main() got it, for `ibroute run` to hand it on to ibroute-run.
void remember_argv(char** argv);
char** remembered_argv();
// This executable's path, and its directory.
std::string own_executable();
std::string own_directory();

// A whole file; InputError "cannot read PATH" when it cannot be opened.
std::string read_file(const std::string& path);

// Sizes (`size`) and rates in one convention: "1M" = "1MB" = 1e6, "1MiB" = 2^20, "5G" = "5GB/s" =
// 5e9 bytes/s, "40Gb/s" = 5e9 bytes/s; a size may be a bare number of bytes, a rate needs a unit.
// Throws InputError naming `what` and the accepted forms.
double parse_quantity(const std::string& text, bool size, const char* what);

class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  double lap() {
    auto now = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now(), last_ = t0_;
};

}  // namespace ibroute::cli
