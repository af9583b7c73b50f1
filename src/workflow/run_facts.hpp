// What a run (or the counters around traffic) found wrong with single links, typed once: the
// runner fills them from its own figures, accept from a report it reads, and the checks and the
// diagnosis take them (no struct of its own per reader).
#pragma once

#include <cstdint>
#include <string>

namespace ibroute::workflow {

// A port whose error counters rose between two readings.
struct ErrorPort {
  std::string link, what;  // "L1[3] -> S1[1]", "SymbolErrorCounter +7"
  uint64_t errors = 0;
  std::string guid;  // the port's node GUID (hex); "" unknown
  int port = -1;
};

// A link whose transfers were skipped, failed or timed out in the run (the run's suspect_links).
struct BadLink {
  std::string link;
  uint64_t transfers = 0, skipped = 0, failed = 0;  // transfers: those that arrived
};

}  // namespace ibroute::workflow
