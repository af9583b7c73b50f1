// Live scan of a fabric: topology through libibnetdisc, then every switch's linear forwarding
// table through libibmad SMPs (SubnGet(LinearForwardingTable), 64 LIDs a block), many in flight.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

struct LiveScanOptions {
  std::string ca;      // empty: the first CA, as infiniband-diags do
  int port = 0;        // 0: the first active port
  int timeout_ms = 0;  // per MAD; 0: the library default
  int retries = 0;     // per MAD; 0: the library default
  int mads_in_flight = 32;
  // Progress: stage ("discover", "lft"), done, total. Called from the scanning thread.
  std::function<void(std::string_view, size_t, size_t)> progress;
};

// Throws InputError for a CA or port that does not exist, std::runtime_error when discovery
// fails outright. MAD failures after that do not throw: they make the fabric incomplete and are
// listed in Fabric::problems.
Fabric scan_live(const LiveScanOptions& opt);

// The binary cache that `ibnetdiscover --cache FILE` writes, loaded by libibnetdisc itself
// (ibnd_load_fabric): a topology without LFTs. Throws InputError when libibnetdisc refuses it.
Fabric load_ibnd_cache(const std::string& path);

// The performance counters of every connected switch and host port of `f` (a scan of the fabric
// this port reaches), read live; ports that do not answer are listed, not fatal. Throws
// std::runtime_error when the MAD port cannot be opened. `port_states`: also every such port's
// PortInfo (its state and physical state, one SMP each) into the snapshot's `states`.
struct CounterSnapshot;
CounterSnapshot read_counters(const Fabric& f, const LiveScanOptions& opt, bool port_states = false);

}  // namespace ibroute::fabric
