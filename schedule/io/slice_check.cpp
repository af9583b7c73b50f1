// One check of an epoch's slice against its host table, for the peer library and the runner alike.
#include <string>

#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/format.hpp"

namespace ibroute::schedule {

void check_slice_on_table(const SliceDoc& slice, const std::vector<HostIdentity>& slice_hosts,
                          const std::vector<HostIdentity>& table, size_t r) {
  if (slice.rank != r)
    throw InputError("holds rank " + std::to_string(slice.rank) + "'s slice, not rank " + std::to_string(r) + "'s");
  if (slice_hosts.size() != table.size())
    throw InputError(std::to_string(slice_hosts.size()) + " hosts where the host table has " +
                     std::to_string(table.size()));
  for (size_t k = 0; k < slice_hosts.size(); ++k) {
    const HostIdentity& h = slice_hosts[k];
    const HostIdentity& t = table[k];
    if (h.port_guid == 0 && h.name.empty()) continue;  // a version-4 placeholder: the table gives it
    if ((h.port_guid && h.port_guid != t.port_guid) || h.base_lid != t.base_lid || h.lmc != t.lmc)
      throw InputError("/hosts/" + std::to_string(k) + " (" + h.name + ") differs from the host table's rank " +
                       std::to_string(k) + " (port GUID, base LID or LMC)");
  }
  std::vector<char> seen(table.size(), 0);
  for (const SliceTransfer& x : slice.sends) {
    if (x.peer < 0 || static_cast<size_t>(x.peer) >= table.size())
      throw InputError("a send to rank " + std::to_string(x.peer) + " of " + std::to_string(table.size()));
    const HostIdentity& d = table[static_cast<size_t>(x.peer)];
    const uint32_t last = d.base_lid + (1u << d.lmc) - 1;
    if (x.dlid < d.base_lid || x.dlid > last)
      throw InputError("phase " + std::to_string(x.phase) + ": DLID " + std::to_string(x.dlid) + " is no LID of rank " +
                       std::to_string(x.peer) + " (" + std::to_string(d.base_lid) + " .. " + std::to_string(last) +
                       ")");
    if (seen[static_cast<size_t>(x.peer)]++)
      throw InputError("rank " + std::to_string(x.peer) + " is a destination twice");
  }
}

}  // namespace ibroute::schedule
