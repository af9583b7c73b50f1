// Text that other InfiniBand tools read, written from the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

// Forwarding tables as infiniband-diags' `ibroute <lid>` prints them (what dump_lfts.sh collects),
// the format OpenSM's file routing engine loads (`opensm -R file -U FILE`). `lft` holds a table
// per node (empty: not written); an entry is written where the LID has an owner and a port. Every
// entry names the owner's port GUID, so that OpenSM re-maps it when LIDs were assigned anew.
// `comment` lines go first, behind '#' (both OpenSM and ibroute's import skip them).
std::string write_lft_dump(const Fabric& f, const std::vector<std::vector<uint8_t>>& lft,
                           const std::vector<std::string>& comment);

}  // namespace ibroute::fabric
