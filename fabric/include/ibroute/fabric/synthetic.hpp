// Fat-trees built in memory, with LIDs (LMC) and LFTs, for unit tests and for planner benchmarks
// beyond what the simulator runs. Routing is d-mod-k on shortest paths: the up-port is chosen by
// the destination host's index (divided per level), shifted by the LID offset, so that base LIDs
// spread over the up-links and the 2^LMC LIDs of a host take different paths, as OpenSM does.
#pragma once

#include <cstdint>
#include <string>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

struct FatTreeSpec {
  // Two levels: `leaves` leaves with `hosts_per_leaf` hosts and `uplinks` up-links each, spread
  // over `spines` spines. Three levels: `pods` pods of `leaves` leaves and `aggs` aggregation
  // switches (each leaf has one link to each agg, so uplinks = aggs); each agg has `cores /
  // aggs` links up, agg a of every pod reaching cores a*(cores/aggs) ... (a+1)*(cores/aggs)-1.
  int levels = 2;
  int leaves = 12, hosts_per_leaf = 8, uplinks = 4, spines = 4;
  int pods = 1, aggs = 0, cores = 0;  // three levels
  int hosts = 0;                      // at most this many hosts (0: every leaf port), spread evenly over the leaves
  uint8_t lmc = 0;
  bool shuffle_names = false;  // host names do not follow the cabling
  uint32_t seed = 1;
  std::string speed = "EDR";
};

Fabric build_fat_tree(const FatTreeSpec& spec);

// Fill every switch's LFT for the fabric's LIDs (switch LIDs: least-used shortest port).
void route_dmodk(Fabric& f);

// Fill every switch's LFT as OpenSM's minhop does at heart: each switch, independently, gives each
// LID in LID order the least-used of its shortest ports. Every switch sees the same order, so the
// choices correlate across switches: the poor tables a three-level tree gets from minhop and updn.
void route_minhop(Fabric& f);

}  // namespace ibroute::fabric
