// The cabling checked against a plan (`ibroute diff --against FILE`, docs/cabling.md): every
// planned cable by both ends, against the cables the scan found. Each end names a node by GUID
// where the plan gives one, else by name (the display name the scan uses, or the description the
// node reported), and a port. Pure: the fabric and the plan in, the findings out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

struct CableEnd {
  std::string node;   // as the plan names it
  uint64_t guid = 0;  // 0: by name
  int port = 0;
};
struct Cable {
  CableEnd a, b;
};

struct CablingCheck {
  size_t planned = 0, as_planned = 0;
  std::vector<Cable> missing;                    // planned; the fabric has no cable that explains it
  std::vector<Cable> extra;                      // found, not planned
  std::vector<std::pair<Cable, Cable>> moved;    // (planned, found): one end at another port of the planned node
  std::vector<std::pair<Cable, Cable>> swapped;  // two planned cables found with their far ends exchanged
  std::vector<std::string> unresolved;  // plan ends that name no node of the fabric, or several; a port planned twice
  bool ok() const { return missing.empty() && extra.empty() && moved.empty() && swapped.empty() && unresolved.empty(); }
};

// Every planned cable is counted once: as_planned + 2 x swapped + moved + missing + unresolved =
// planned. `extra` lists cables of the fabric between nodes the plan names (a plan of part of the fabric —
// one rack, the spines — is checked on that part only).
CablingCheck check_cabling(const Fabric& f, const std::vector<Cable>& plan);

// Messages that repeat (a node the fabric lacks, named by each of its planned cables) once each,
// in first-seen order, "(N planned cables)" added where there are several.
std::vector<std::string> counted_once(const std::vector<std::string>& lines);

// The cables of a fabric, each once, both ends named as the fabric names them (with GUIDs): what
// a reference `ibnetdiscover` output plans.
std::vector<Cable> cables_of(const Fabric& f);

}  // namespace ibroute::fabric
