// Helpers the subcommands share: database and scan selection, node lookup, progress, JSON.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "fabric_context.hpp"
#include "fabric_store.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "launch.hpp"
#include "options.hpp"
#include "routing_advice.hpp"
#include "stopwatch.hpp"
#include "text_input.hpp"

namespace ibroute::cli {

// Exit codes (also in `ibroute --help`).
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;     // the fabric or the system failed us
constexpr int kExitBadInput = 2;    // bad option, file, database, node name
constexpr int kExitIncomplete = 3;  // scan stored, but some MADs went unanswered

// The scan a command works on: workflow::FabricContext, and said on stderr when it is incomplete
// (`warn`: the runner warns on rank 0 only).
struct ScanContext : workflow::FabricContext {
  ScanContext(store::FabricStore& store, std::optional<int64_t> scan, bool warn = true);
};

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

// The machines of a fabric's hosts for --json (scan, analyze): count, HCAs per machine, rails, and
// the HCAs whose description names no machine (ibroute/fabric/machines.hpp).
nlohmann::json machines_json(const fabric::Fabric& f);

// The efficiency lines of plan, accept and analyze: against the fabric (the headline), what limits
// it, and against the routing tables beside it where they are the limit, with `advice` (whether
// `ibroute routing` passes its check here: routing_advice.hpp); a plan that loses transfers has none.
std::string efficiency_text(const schedule::Efficiency& e, const workflow::RoutingAdvice* advice);

// The command line as main() got it, for `ibroute run` to hand it on to ibroute-run.
void remember_argv(char** argv);
char** remembered_argv();
// This executable's directory (its path: own_executable, launch.hpp).
std::string own_directory();

using workflow::Stopwatch;

}  // namespace ibroute::cli
