#include "slurm_topology.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "ibroute/fabric/routes.hpp"

namespace ibroute::workflow {

using namespace ibroute::fabric;

namespace {

// Slurm parses node and switch names as host lists: brackets, commas and blanks would split them.
bool slurm_name(const std::string& w) {
  if (w.empty() || w.size() > 64 || !std::isalnum(static_cast<unsigned char>(w[0]))) return false;
  return std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// "MT4129 ConnectX7   Mellanox Technologies", "MT25408 ConnectX Mellanox Technologies": what an
// adapter says before anyone names its host.
bool vendor_default(const std::string& desc) {
  return desc.size() > 3 && desc.rfind("MT", 0) == 0 && std::isdigit(static_cast<unsigned char>(desc[2])) &&
         (desc.find("Mellanox") != std::string::npos || desc.find("ConnectX") != std::string::npos);
}

std::string first_word(const std::string& desc) {
  const size_t a = desc.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return desc.substr(a, desc.find_first_of(" \t", a) - a);
}

// A switch's name for Slurm: its description with what Slurm cannot take replaced ("MF0;leaf-01:
// MQM9701/U1" -> "MF0_leaf-01_MQM9701_U1").
std::string switch_word(const std::string& desc) {
  std::string out;
  for (char c : desc) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    if (ok)
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && (out.back() == '_' || out.back() == '.' || out.back() == '-')) out.pop_back();
  if (out.size() > 48) out.resize(48);
  if (out.empty() || !std::isalnum(static_cast<unsigned char>(out[0]))) out = "switch" + (out.empty() ? "" : "_" + out);
  return out;
}

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

std::string compress_hostlist(std::vector<std::string> names) {
  // Per (prefix, digit count): the numbers, in order; runs joined ("n[01-04,07]").
  std::map<std::pair<std::string, size_t>, std::vector<std::pair<uint64_t, std::string>>> groups;
  std::vector<std::string> plain;
  std::sort(names.begin(), names.end(), natural_less);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string& n : names) {
    size_t d = n.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(n[d - 1]))) --d;
    if (d == n.size() || n.size() - d > 18) {
      plain.push_back(n);
      continue;
    }
    groups[{n.substr(0, d), n.size() - d}].emplace_back(std::stoull(n.substr(d)), n.substr(d));
  }
  std::vector<std::string> parts = plain;
  for (auto& [key, nums] : groups) {
    std::sort(nums.begin(), nums.end());
    if (nums.size() == 1) {
      parts.push_back(key.first + nums[0].second);
      continue;
    }
    std::string ranges;
    for (size_t i = 0; i < nums.size();) {
      size_t j = i;
      while (j + 1 < nums.size() && nums[j + 1].first == nums[j].first + 1) ++j;
      ranges += (ranges.empty() ? "" : ",") + nums[i].second + (j > i ? "-" + nums[j].second : "");
      i = j + 1;
    }
    parts.push_back(key.first + "[" + ranges + "]");
  }
  std::sort(parts.begin(), parts.end(), natural_less);
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

namespace {

struct HostPort {
  int32_t node, sw;
  uint64_t port_guid;
};
using InTree = std::vector<char>;  // per node: a switch of the tree
using ByWord = std::map<std::string, std::vector<HostPort>>;

// Whether the switches of the tree that hosts are cabled to all reach a host port's LID by their
// forwarding tables: "" when they do, else why not. Not asked when the scan has no tables.
class Reach {
 public:
  Reach(const Fabric& f, const InTree& tree) : f_(f), walk_(f) {
    for (size_t x = 0; x < f.nodes.size(); ++x) {
      if (!tree[x]) continue;
      checked_ = checked_ || f.nodes[x].lft_read;
      for (int p = 1; p <= f.nodes[x].num_ports(); ++p)
        if (const Port& q = f.nodes[x].ports[p];
            q.connected() && !f.nodes[static_cast<size_t>(q.peer_node)].is_switch()) {
          leaves_.push_back(static_cast<int32_t>(x));
          break;
        }
    }
  }
  bool checked() const { return checked_; }
  std::string why_not(uint16_t lid) {
    size_t failed = 0;
    std::string example;
    for (int32_t sw : leaves_) {
      hops_.clear();
      const RouteStatus st = walk_.walk(sw, lid, hops_);
      if (st == RouteStatus::ok) continue;
      if (!failed++) example = f_.nodes[static_cast<size_t>(sw)].desc + ": " + std::string(to_string(st));
    }
    if (!failed) return "";
    return "no working route to it from " + std::to_string(failed) + " of the " + std::to_string(leaves_.size()) +
           " switches hosts are cabled to (" + example + ")";
  }

 private:
  const Fabric& f_;
  LftWalker walk_;
  std::vector<int32_t> leaves_;
  std::vector<Hop> hops_;
  bool checked_ = false;
};

// Every CA port of a host cabled into the tree, up, with a LID that every switch hosts are cabled
// to routes to (where the scan has forwarding tables), by the word its description starts with;
// the others left out.
ByWord host_ports(const Fabric& f, const InTree& tree, SlurmTopology& out) {
  ByWord by_word;
  Reach reach(f, tree);
  if (!reach.checked())
    out.notes.push_back(
        "routes not checked: the scan has no forwarding tables (an imported topology), every cabled host is listed");
  for (size_t x = 0; x < f.nodes.size(); ++x) {
    const Node& n = f.nodes[x];
    if (n.is_switch() || node_kind(n) != NodeKind::host)
      continue;  // SHARP aggregation nodes and routers are no Slurm nodes
    for (int p = 1; p <= n.num_ports(); ++p) {
      const Port& port = n.ports[p];
      if (!port.connected()) continue;
      const std::string who = n.desc + " (port GUID 0x" + hex(port.guid) + ")";
      std::string unreachable;
      if (!port_usable(port) || port.base_lid == 0)
        out.left_out.push_back(who + ": its link is down or it has no LID");
      else if (!tree[port.peer_node])
        out.left_out.push_back(who + ": cabled to a switch outside the tree");
      else if (reach.checked() && !(unreachable = reach.why_not(port.base_lid)).empty())
        out.left_out.push_back(who + ": " + unreachable);
      else
        by_word[first_word(n.desc)].push_back({static_cast<int32_t>(x), port.peer_node, port.guid});
    }
  }
  return by_word;
}

// Per switch, the hostnames listed under it. A description several machines carry (system image
// GUIDs differ) names none of them; a host's own HCAs differ in theirs ("dgx-04 mlx5_0", "dgx-04 mlx5_1").
std::map<int32_t, std::vector<std::string>> place_hosts(const Fabric& f, ByWord& by_word, SlurmTopology& out) {
  std::map<std::string, std::set<uint64_t>> machines;
  for (const auto& [word, ports] : by_word)
    for (const HostPort& h : ports)
      machines[f.nodes[h.node].desc].insert(f.nodes[h.node].sysimg_guid ? f.nodes[h.node].sysimg_guid
                                                                        : f.nodes[h.node].guid);
  std::map<int32_t, std::vector<std::string>> hosts_at;
  size_t several = 0;
  for (auto& [word, all] : by_word) {
    std::vector<HostPort> ports;
    for (const HostPort& h : all) {
      const std::string& desc = f.nodes[h.node].desc;
      std::string why;
      if (machines[desc].size() > 1)
        why = std::to_string(machines[desc].size()) +
              " machines describe themselves so: no host name (a node-name map gives them theirs)";
      else if (vendor_default(desc))
        why = "the adapter's default description: no host name (a node-name map gives it one)";
      else if (!slurm_name(word))
        why = "'" + word + "' is no Slurm node name";
      if (why.empty())
        ports.push_back(h);
      else
        out.left_out.push_back(desc + " (port GUID 0x" + hex(h.port_guid) + "): " + why);
    }
    if (ports.empty()) continue;
    std::sort(ports.begin(), ports.end(),
              [](const HostPort& a, const HostPort& b) { return a.port_guid < b.port_guid; });
    several += std::any_of(ports.begin(), ports.end(), [&](const HostPort& h) { return h.sw != ports[0].sw; });
    hosts_at[ports[0].sw].push_back(word);
    ++out.hosts;
  }
  if (several)
    out.notes.push_back(std::to_string(several) +
                        " host(s) have HCAs on several switches: each listed under its first HCA's (lowest port GUID)");
  return hosts_at;
}

// Switch names: unique, and apart from every host name.
std::vector<std::string> switch_names(const Fabric& f, const InTree& tree, const ByWord& by_word, SlurmTopology& out) {
  std::unordered_map<std::string, int> uses;
  for (size_t x = 0; x < f.nodes.size(); ++x)
    if (tree[x]) ++uses[switch_word(f.nodes[x].desc)];
  for (const auto& [word, ports] : by_word) ++uses[word];
  std::vector<std::string> name(f.nodes.size());
  size_t renamed = 0;
  for (size_t x = 0; x < f.nodes.size(); ++x) {
    if (!tree[x]) continue;
    name[x] = switch_word(f.nodes[x].desc);
    if (uses[name[x]] > 1) name[x] += "-" + hex(f.nodes[x].guid), ++renamed;
  }
  if (renamed) out.notes.push_back(std::to_string(renamed) + " switch(es) described alike: named with their node GUID");
  return name;
}

// The tree's switches, their Slurm names, and the hosts placed under them.
struct Placed {
  InTree tree;
  int top = 0;
  std::map<int32_t, std::vector<std::string>> hosts_at;
  std::vector<std::string> name;
};
Placed placed(const Fabric& f, const FabricStructure& s, SlurmTopology& out) {
  Placed p;
  p.tree.assign(f.nodes.size(), 0);
  for (size_t x = 0; x < f.nodes.size(); ++x)
    if (f.nodes[x].is_switch() && x < s.level.size() && s.level[x] >= 1)
      p.tree[x] = 1, p.top = std::max(p.top, s.level[x]);
  ByWord by_word = host_ports(f, p.tree, out);
  p.hosts_at = place_hosts(f, by_word, out);
  p.name = switch_names(f, p.tree, by_word, out);
  return p;
}

}  // namespace

SlurmTopology slurm_blocks(const Fabric& f, const FabricStructure& s) {
  SlurmTopology out;
  const Placed p = placed(f, s, out);
  // Blocks side by side as the tree has them (Slurm aggregates neighbouring blocks): by the first
  // switch above each (by name), then by their own names.
  std::vector<std::pair<std::string, int32_t>> order;
  size_t smallest = SIZE_MAX;
  for (const auto& [x, hosts] : p.hosts_at) {
    std::string above;
    const Node& sw = f.nodes[static_cast<size_t>(x)];
    for (int q = 1; q <= sw.num_ports(); ++q) {
      const Port& port = sw.ports[q];
      if (port_usable(port) && port.peer_node >= 0 && p.tree[port.peer_node] &&
          s.level[port.peer_node] > s.level[static_cast<size_t>(x)] &&
          (above.empty() || natural_less(p.name[port.peer_node], above)))
        above = p.name[port.peer_node];
    }
    order.emplace_back(above, x);
    smallest = std::min(smallest, hosts.size());
  }
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? natural_less(a.first, b.first) : natural_less(p.name[a.second], p.name[b.second]);
  });
  if (order.empty()) return out;
  // Names are Slurm names (letters, digits, '-', '_', '.'), quoted so that YAML reads none as a number or a boolean.
  out.text = "- topology: \"infiniband\"\n  cluster_default: true\n  block:\n    block_sizes:\n      - " +
             std::to_string(smallest) + "\n    blocks:\n";
  for (const auto& [above, x] : order) {
    out.text += "      - block: \"" + p.name[static_cast<size_t>(x)] + "\"\n        nodes: \"" +
                compress_hostlist(p.hosts_at.at(x)) + "\"\n";
    ++out.switches;
  }
  return out;
}

SlurmTopology slurm_topology(const Fabric& f, const FabricStructure& s) {
  SlurmTopology out;
  const Placed p = placed(f, s, out);
  const InTree& tree = p.tree;
  const int top = p.top;
  const std::map<int32_t, std::vector<std::string>>& hosts_at = p.hosts_at;
  const std::vector<std::string>& name = p.name;
  // From the hosts' level up: each switch's child switches (one level below, cabled, written) and hosts.
  std::vector<char> written(f.nodes.size(), 0);
  for (int level = 1; level <= top; ++level) {
    std::vector<size_t> at;
    for (size_t x = 0; x < f.nodes.size(); ++x)
      if (tree[x] && s.level[x] == level) at.push_back(x);
    std::sort(at.begin(), at.end(), [&](size_t a, size_t b) { return natural_less(name[a], name[b]); });
    for (size_t x : at) {
      std::vector<std::string> children;
      const Node& sw = f.nodes[x];
      for (int p = 1; p <= sw.num_ports(); ++p) {
        const Port& port = sw.ports[p];
        if (port_usable(port) && port.peer_node >= 0 && tree[port.peer_node] && s.level[port.peer_node] == level - 1 &&
            written[port.peer_node])
          children.push_back(
              name[port.peer_node]);  // a switch with neither hosts nor children has no line: none to name
      }
      std::sort(children.begin(), children.end(), natural_less);
      children.erase(std::unique(children.begin(), children.end()), children.end());
      const auto h = hosts_at.find(static_cast<int32_t>(x));
      if (children.empty() && h == hosts_at.end()) continue;
      std::string list;  // listed whole: a GUID-suffixed name is no range to fold
      for (const std::string& c : children) list += (list.empty() ? "" : ",") + c;
      out.text += "SwitchName=" + name[x] + (list.empty() ? "" : " Switches=" + list) +
                  (h == hosts_at.end() ? "" : " Nodes=" + compress_hostlist(h->second)) + "\n";
      ++out.switches, written[x] = 1;
    }
  }
  return out;
}

}  // namespace ibroute::workflow
