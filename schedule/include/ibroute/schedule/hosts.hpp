// Which hosts take part and in which rank order.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/structure.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::fabric {
class NodeNames;
}

namespace ibroute::schedule {

// Every CA with a connected port (its first one), named by node description (made unique with
// the GUID where descriptions repeat), in natural name order ("node2-..." before "node10-...").
std::vector<Host> all_hosts(const fabric::Fabric& f);

// The hosts of `all` named in `names`, in that order; a name is any form NodeNames knows (display
// name, reported description, node or port GUID, LID; a port GUID or LID picks that port); a
// machine's name (machines.hpp) gives each of its HCAs, rail 0 first, and "MACHINE/K" its rail K.
// Throws InputError for an unknown, ambiguous (candidates listed) or repeated host, a name of a
// switch, or fewer than `at_least` names (an all-to-all needs two, a group of a two-group plan one).
std::vector<Host> pick_hosts(const fabric::Fabric& f, const std::vector<Host>& all,
                             const std::vector<std::string>& names, size_t at_least = 2);

// The same hosts ordered by the cabling: by leaf switch (in GUID order), then by leaf port.
std::vector<Host> topology_order(const fabric::Fabric& f, std::vector<Host> hosts);

// Two groups as one rank list: the senders, then the receivers that do not send (a host in
// both is one rank); senders and receivers as ranks into `hosts`. Throws InputError below two hosts.
struct Groups {
  std::vector<Host> hosts;
  std::vector<int32_t> senders, receivers;
};
Groups join_groups(const std::vector<Host>& senders, const std::vector<Host>& receivers);
// The same groups, each ordered by leaf and port (topology_order).
Groups topology_ordered(const fabric::Fabric& f, const Groups& g);

// Host lists as people write them, the one reader of every command (--hosts @FILE, --senders,
// --placement): one name per line, '#' starts a comment, blanks around a name and empty lines
// ignored (line numbers kept for messages); or a,b,c on the command line, each name trimmed.
// Both take Slurm's ranges: node[0001-0100,0200] (expand_ranges).
struct ListedHost {
  size_t line = 0;
  std::string name;
};
std::vector<ListedHost> host_lines(std::string_view text);
std::vector<std::string> expand_ranges(std::string_view item);
std::vector<std::string> host_commas(std::string_view text);

using fabric::natural_less;  // (fabric/model.hpp)

// The ranks of a schedule file's host list by name — without the fabric, from what the file says
// of each rank — through the one resolver every command uses (fabric::NodeNames, over the ranks'
// identities): node description, a hostname alone, host/HCA-2, "description 0xGUID", node or port
// GUID (0x...), or one of its 2^LMC LIDs. Built once, asked many times (--placement, the peer).
class HostNames {
 public:
  explicit HostNames(const std::vector<HostIdentity>& ids);
  ~HostNames();
  HostNames(const HostNames&) = delete;
  HostNames& operator=(const HostNames&) = delete;
  // Every rank `spec` names.
  std::vector<size_t> ranks(std::string_view spec) const;
  // Exactly one, else InputError naming `what`: none (with the accepted forms and a did-you-mean)
  // or several (the candidates listed).
  size_t rank(std::string_view spec, const std::string& what) const;

 private:
  fabric::Fabric f_;  // one CA per rank, node index = rank
  std::unique_ptr<fabric::NodeNames> names_;
};

// A one-off lookup through a HostNames of `ids`.
size_t rank_named(const std::vector<HostIdentity>& ids, std::string_view spec, const std::string& what);

}  // namespace ibroute::schedule
