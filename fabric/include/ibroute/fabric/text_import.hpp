// Offline import of what admins already keep: `ibnetdiscover` topology output and
// `dump_fts` / `dump_lfts.sh` forwarding-table dumps. Parsers take text, not file names,
// so tests feed them strings; the CLI reads the files.
#pragma once

#include <string>
#include <string_view>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

// Parse ibnetdiscover output into a fabric without LFTs. Throws InputError naming the line.
Fabric parse_ibnetdiscover(std::string_view text, std::string_view source_name = "topology");

// Fill the switches' LFTs of `f` from dump_fts output. Switches the dump does not cover are
// marked unread and recorded as problems; a dump naming a switch the topology lacks is an error.
void apply_lft_dump(Fabric& f, std::string_view text, std::string_view source_name = "lfts");

}  // namespace ibroute::fabric
