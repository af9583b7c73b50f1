// One way to name a node or port, for every option that takes one (--hosts, --senders,
// --receivers, routes --from/--to, ...): its display name (the node-name map's, else the reported
// node description), the reported description where a map renamed it, a node GUID, a port GUID
// (0x...), or a LID (decimal). A name that several nodes carry is refused with the candidates.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

struct NamedPort {
  int32_t node = -1;
  int port = 0;  // a CA's port (the one the name means, else its first cabled one); 0 for a switch
  bool operator==(const NamedPort&) const = default;
};

// The one did-you-mean of every command: up to `k` of `names` a typo away from `word` (or that it
// begins, from 3 characters), closest first; and as text, "; did you mean 'a' or 'b'?" or "".
std::vector<std::string> nearest_names(std::string_view word, const std::vector<std::string>& names, size_t k = 3);
std::string did_you_mean(std::string_view word, const std::vector<std::string>& names, size_t k = 3);

class NodeNames {
 public:
  explicit NodeNames(const Fabric& f);
  // Every node or port `spec` can mean (empty when none). "MACHINE/K" is rail K of a machine
  // (ibroute/fabric/machines.hpp); a machine's name alone means each of its HCAs.
  std::vector<NamedPort> candidates(std::string_view spec) const;
  // The HCAs of the machine `spec` names, rail 0 first; empty when it names none.
  const std::vector<int32_t>& rails(std::string_view spec) const;
  // Exactly one, else InputError naming `what` (e.g. "--hosts"): unknown, with the accepted
  // forms; ambiguous, with up to 8 candidates (display name, GUID, LID) to choose from.
  NamedPort resolve(std::string_view spec, const std::string& what) const;
  // For an unknown name: up to `k` names (descriptions or hostnames) a typo away from it, closest
  // first — "; did you mean 'node1-011' or 'node1-001'?" — or "" when none is near.
  std::string did_you_mean(std::string_view spec, size_t k = 3) const;

 private:
  const Fabric& f_;
  LidMap lids_;
  std::unordered_multimap<std::string, int32_t> by_name_;  // display names and reported descriptions
  std::unordered_multimap<std::string, int32_t> by_host_;  // a CA's hostname: "node0270 HCA-1" -> "node0270"
  std::unordered_map<uint64_t, int32_t> by_node_guid_;
  std::unordered_map<uint64_t, NamedPort> by_port_guid_;
  std::unordered_map<std::string, std::vector<int32_t>> rails_;  // a machine's HCAs, rail 0 first (machines.hpp)
};

}  // namespace ibroute::fabric
