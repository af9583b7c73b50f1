// Internals shared by the live-scan translation units; not installed.
#pragma once

#include <infiniband/mad.h>

#include <functional>
#include <vector>

#include "ibroute/fabric/live_scan.hpp"

namespace ibroute::fabric::live {

struct Discovered {
  Fabric fabric;
  std::vector<ib_portid_t> paths;  // directed route to each node, by node index
  std::vector<int> lft_top;        // LinearFDBTop of each switch (0 for CAs)
};

Discovered discover(const LiveScanOptions& opt);

// Sends requests 0..count-1 of one management class, at most opt.mads_in_flight at once (retries
// and timeout from `opt`): make(i, rpc, dest, payload) fills request i (method GET, timeout and
// transaction ID are set; payload: IB_MAD_SIZE zero bytes, copied from rpc.dataoffs);
// answered(i, mad) gets each answer whose `status_field` is 0, lost(i) every other request.
using MadMaker = std::function<void(size_t, ib_rpc_t&, ib_portid_t&, uint8_t*)>;
using MadAnswer = std::function<void(size_t, uint8_t*)>;
using MadLost = std::function<void(size_t)>;
void send_windowed(ibmad_port* port, int mgtclass, enum MAD_FIELDS status_field, size_t count,
                   const LiveScanOptions& opt, const char* stage, const MadMaker& make, const MadAnswer& answered,
                   const MadLost& lost);

// Read the LFTs of all switches of `d` into d.fabric, recording failures as problems.
void read_lfts(Discovered& d, const LiveScanOptions& opt);

}  // namespace ibroute::fabric::live
