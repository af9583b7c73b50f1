#include "ibroute/schedule/hosts.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

#include "ibroute/fabric/error.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::vector<Host> all_hosts(const Fabric& f) {
  std::vector<Host> hosts;
  std::map<std::string, int> seen;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    if (!is_host(n)) continue;  // switches, routers, aggregation nodes send no traffic
    for (int p = 1; p <= n.num_ports(); ++p)
      if (n.ports[p].connected() && n.ports[p].base_lid) {
        hosts.push_back({static_cast<int32_t>(i), static_cast<uint8_t>(p), n.desc});
        ++seen[n.desc];
        break;
      }
  }
  for (Host& h : hosts)
    if (seen[h.name] > 1) h.name += " " + guid_hex(f.nodes[h.node].guid);
  std::sort(hosts.begin(), hosts.end(), [](const Host& a, const Host& b) { return natural_less(a.name, b.name); });
  return hosts;
}

std::vector<Host> pick_hosts(const std::vector<Host>& all, const std::vector<std::string>& names, size_t at_least) {
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < all.size(); ++i) by_name.emplace(all[i].name, i);
  std::vector<Host> out;
  std::vector<char> taken(all.size(), 0);
  for (const std::string& n : names) {
    auto it = by_name.find(n);
    if (it == by_name.end()) throw InputError("unknown host '" + n + "' (not a CA in this scan)");
    if (taken[it->second]++) throw InputError("host '" + n + "' is listed twice");
    out.push_back(all[it->second]);
  }
  if (out.size() < at_least)
    throw InputError(at_least == 2 ? "an all-to-all needs at least 2 hosts" : "a group needs at least " + std::to_string(at_least) + " host");
  return out;
}

std::vector<Host> topology_order(const Fabric& f, std::vector<Host> hosts) {
  auto key = [&](const Host& h) {
    const Port& p = f.nodes[h.node].ports[h.port];
    uint64_t leaf = p.connected() ? f.nodes[p.peer_node].guid : 0;
    return std::pair<uint64_t, int>(leaf, p.peer_port);
  };
  std::stable_sort(hosts.begin(), hosts.end(), [&](const Host& a, const Host& b) { return key(a) < key(b); });
  return hosts;
}

}  // namespace ibroute::schedule
