// Internals shared by the live-scan translation units; not installed.
#pragma once

#include <infiniband/mad.h>

#include <vector>

#include "ibroute/fabric/live_scan.hpp"

namespace ibroute::fabric::live {

struct Discovered {
  Fabric fabric;
  std::vector<ib_portid_t> paths;  // directed route to each node, by node index
  std::vector<int> lft_top;        // LinearFDBTop of each switch (0 for CAs)
};

Discovered discover(const LiveScanOptions& opt);

// Read the LFTs of all switches of `d` into d.fabric, recording failures as problems.
void read_lfts(Discovered& d, const LiveScanOptions& opt);

}  // namespace ibroute::fabric::live
