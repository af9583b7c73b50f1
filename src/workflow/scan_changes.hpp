// What went away since the scan before: hosts and cables, by name and port — the admin's "down
// since scan 3" (diff has the whole story; these are what a repair list names).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric_context.hpp"

namespace ibroute::workflow {

struct LostCable {
  int32_t a = -1, b = -1;  // both ends' nodes in this scan
  int pa = 0, pb = 0;      // their ports, as the scan before had them cabled
};

struct ScanChanges {
  int64_t previous = 0;                 // the scan before (0: none)
  std::vector<std::string> hosts_gone;  // by description
  std::vector<LostCable> cables_gone;   // between nodes both scans have
};

ScanChanges changes_since_previous(store::FabricStore& store, const FabricContext& c);

// "ibswitch03[10] - ibspine02[3]"
std::string cable_name(const fabric::Fabric& f, const LostCable& l);

}  // namespace ibroute::workflow
