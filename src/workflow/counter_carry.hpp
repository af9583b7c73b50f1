// The counters a monitoring reading keeps for ports that stop answering (docs/monitoring.md): a
// port whose link went down is still reported with its last counters (port_answered 0), never
// dropped, so that a dashboard's series goes on flat instead of vanishing or reading as a reset.
// The exporter keeps them between its readings in a file of its own (`counters --carry FILE`).
#pragma once

#include <string>
#include <vector>

#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/model.hpp"

namespace ibroute::workflow {

// The carry file: a header line, then one line per port, "NODE_GUID PORT EXTENDED C0 .. C16".
// Ports of nodes not in `f` are skipped. A file that is not one (damaged, another format, a value
// out of range) is not used: empty result and `note` says why in one line; a missing file is the
// first reading (no note).
std::vector<fabric::PortSample> read_carry(const std::string& path, const fabric::Fabric& f, std::string& note);
std::vector<fabric::PortSample> parse_carry(const std::string& text, const fabric::Fabric& f);  // throws InputError
std::string carry_text(const fabric::Fabric& f, const std::vector<fabric::PortSample>& samples);

// Fills now.carried with the last counters of now's unanswered ports; returns what to carry on:
// every answered port's counters now, and the carried ones (sorted by node, port).
std::vector<fabric::PortSample> carry_over(fabric::CounterSnapshot& now, const std::vector<fabric::PortSample>& last);

}  // namespace ibroute::workflow
