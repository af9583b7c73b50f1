// Link load of phases of transfers over a fabric's routes: transfers per link direction, the
// share of transfers that cross an overloaded link, and the bandwidth each node would get by
// max-min fair sharing of the link rates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/progress.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

struct OverLink {
  int32_t link;  // directed link id (LinkIndex)
  int phase;
  int load, capacity;
};

struct LoadReport {
  size_t phases = 0, transfers = 0, congested = 0, broken = 0;  // broken: route not ok (its links up to the end loaded)
  size_t unknown = 0;  // of the broken: routes that reach a switch whose table was not read (not known lost)
  int max_load = 0;
  double mean_load = 0;             // over link directions in use, per phase (switch links only)
  std::map<int, size_t> histogram;  // load -> number of (switch link direction, phase) pairs
  std::vector<int> phase_max;       // worst switch-link load per phase
  std::vector<OverLink> over;       // (link, phase) pairs above capacity: a sample in phase order (up to 16 per
                                    // phase, kMaxOver in all), the last replaced by the worst ones
  size_t over_count = 0;            // all of them
  static constexpr size_t kMaxOver = 1000;
  std::vector<uint32_t> link_total;  // transfers per directed link over all phases
  std::vector<int> link_worst;       // worst concurrent load per directed link
  // Time of each phase in message-times at the host link rate: its worst load x host rate / link
  // rate over every link it uses (at least 1 when it has a transfer, 0 when it has none).
  std::vector<double> phase_time;
  // Max-min fair sharing (only when asked): mean and minimum per-transfer rate in Gb/s.
  bool fair_share = false;
  double mean_gbps = 0, min_gbps = 0;
  double congested_share() const { return transfers ? double(congested) / transfers : 0; }
};

class OptionTable;  // schedule/core: every transfer's distinct paths

struct EvalContext {
  const fabric::Fabric& fabric;
  const fabric::LinkIndex& links;
  const fabric::FabricStructure& structure;
  std::vector<int> capacity;           // per directed link, in transfers
  std::vector<double> gbps;            // per directed link
  std::vector<char> between_switches;  // per directed link: both ends are switches
  std::vector<char>
      at_host_rate;  // per directed link: its rate is the host link rate (a load takes as many message-times)
  EvalContext(const fabric::Fabric& f, const fabric::LinkIndex& l, const fabric::FabricStructure& s);
  bool switch_link(int32_t link) const { return between_switches[link]; }
  // The message-times at the host link rate that `load` transfers at once take on `link`.
  double load_time(int32_t link, int load) const {
    if (at_host_rate[link]) return load;
    const double host = structure.host_gbps > 0 ? structure.host_gbps : 1;
    return load * host / std::max(gbps[link], 1e-9);
  }
  // The paths from every host-carrying switch, built on first use by evaluate() (null when the
  // fabric is too large for the table): phases of an all-to-all reuse them.
  const fabric::SwitchPaths* switch_paths() const;
  // switch_paths() where `hosts` are most of the fabric's (at least 64): their routes are then most
  // of the table, and reading it beats walking them again; else null (walk).
  const fabric::SwitchPaths* switch_paths_for(size_t hosts) const {
    return hosts >= 64 && 2 * hosts >= structure.hosts.size() ? switch_paths() : nullptr;
  }
  // Every path walked, no switch table: what the table's answers are tested against.
  bool walk_only = false;
  // Forgets the option table of the last host set planned (kept so that the plan's lower bound
  // reads the planner's; hundreds of MB at 10 000 hosts).
  void drop_option_table() const;

 private:
  friend std::shared_ptr<const OptionTable> option_table_of(const EvalContext& ctx, const std::vector<Host>& hosts,
                                                            unsigned threads);
  mutable std::once_flag paths_once_;
  mutable std::unique_ptr<fabric::SwitchPaths> paths_;
  mutable std::mutex options_mutex_;
  mutable std::vector<Host> options_hosts_;
  mutable std::shared_ptr<const OptionTable> options_;
};

// Phases are evaluated on all cores; the report does not depend on the number of threads.
// With fair_share, max-min fair rates are computed on at most kFairSharePhases evenly spaced
// phases (every phase when there are fewer), and on big phases on as many as hold about
// kFairShareFlows transfers (at least 8): an estimate of the mean and minimum rate.
constexpr size_t kFairSharePhases = 64;
constexpr size_t kFairShareFlows = 160'000;
LoadReport evaluate(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<Phase>& phases,
                    bool fair_share, const fabric::ProgressFn& progress = {});

// Whether `phases` take longer than `limit` message-times (planned_time) or lose a transfer,
// found without evaluating them all where they do: the phases evaluated so far count their time,
// each phase with a transfer not yet evaluated counts one. For a baseline that is usually worse
// than the plan beside it (a full evaluation of 10 000 hosts walks 100 M routes). `worst`: the
// worst switch-link load of the phases evaluated (of all of them where `longer` is false).
struct LongerThan {
  bool longer = false;
  int worst = 0;
};
LongerThan takes_longer_than(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<Phase>& phases,
                             double limit);

// What all-to-all among these hosts can reach per node on average, in Gb/s: every leaf must push
// the traffic of its hosts that leaves the leaf through its up-links (the bisection bound).
double all_to_all_bound_gbps(const EvalContext& ctx, const std::vector<Host>& hosts);

}  // namespace ibroute::schedule
