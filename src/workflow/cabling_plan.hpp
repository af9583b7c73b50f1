// A cabling plan read from a file (docs/cabling.md): a reference `ibnetdiscover` output (its
// cables, ends by GUID), or a CSV of `switch,port,peer,peer_port` rows whose nodes are names or
// GUIDs. Every value checked where it enters: one line naming the file, line and field.
#pragma once

#include <string>
#include <vector>

#include "ibroute/fabric/cabling.hpp"

namespace ibroute::workflow {

std::vector<fabric::Cable> read_cabling_plan(const std::string& path);
// The same from text; `source` names it in messages.
std::vector<fabric::Cable> parse_cabling_plan(const std::string& text, const std::string& source);

}  // namespace ibroute::workflow
