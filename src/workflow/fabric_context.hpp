// What analyze, plan, validate and topo share: a scan's fabric with its LFTs, its directed
// links, its tree structure and the evaluation context built on them. Not movable: the
// evaluation context refers to the members before it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabric_store.hpp"
#include "ibroute/fabric/links.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/schedule/efficiency.hpp"
#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::workflow {

// The scan a command reads: --scan N, or the newest one.
int64_t pick_scan(store::FabricStore& store, std::optional<int64_t> requested);

struct FabricContext {
  FabricContext(store::FabricStore& store, std::optional<int64_t> scan);
  FabricContext(const FabricContext&) = delete;

  int64_t scan_id;
  store::ScanInfo info;
  fabric::Fabric fabric;
  fabric::LinkIndex links;
  fabric::FabricStructure structure;
  schedule::EvalContext eval;

  // Routes exist only where forwarding tables were read: a topology imported alone has none.
  // Throws InputError saying what needed them.
  void require_routes(const std::string& what) const;
  // "scan 3 is incomplete (...)" when some switches did not answer; "" when it is complete.
  std::string incomplete_warning() const;
};

// --hosts: "a,b,c" or "@FILE" (one name per line, # comments); empty: every host in name order.
std::vector<schedule::Host> select_hosts(const fabric::Fabric& f, const std::string& spec, size_t at_least = 2);

// --senders/--receivers (same forms as --hosts) as schedule::Groups (hosts.hpp): each group
// ordered as given, or by leaf and port when `topology`.
using schedule::Groups;
Groups select_groups(const fabric::Fabric& f, const std::string& senders, const std::string& receivers, bool topology);

std::string link_name(const FabricContext& c, int32_t link);
std::string format_rate(double bytes_per_s);  // "50.0 Gb/s (6.25 GB/s)"

// {"2": 863}: how many phases have each worst link load.
nlohmann::json phase_max_histogram(const std::vector<int>& phase_max);
// {"1": 563, "2": 12}: how many phases last each number of slots.
nlohmann::json slot_histogram(const std::vector<uint32_t>& slots);
// The efficiency measure as every --json names it (least and planned time in message-times at the
// host link rate, what limits it, the rate per node it gives).
// Where routes are unknown: "QLogic … S205A (and 2 more switches) whose forwarding table was not
// read" — the switches of the tree with no table, for a one-line refusal.
std::string unread_tables(const fabric::Fabric& f);

struct RoutingAdvice;
// `advice`: what routing_advice.hpp says where the tables limit the exchange (null in the JSON when none).
nlohmann::json efficiency_json(const schedule::Efficiency& e, const RoutingAdvice* advice = nullptr);
// The efficiency as every command's text gives it: two decimals, or "none" where a transfer has
// no working route (the exchange does not complete).
std::string efficiency_figure(const schedule::Efficiency& e);

}  // namespace ibroute::workflow
