#include "ibroute/fabric/node_names.hpp"

#include <algorithm>
#include <charconv>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/machines.hpp"

namespace ibroute::fabric {

namespace {

std::optional<uint64_t> number(std::string_view s, int base) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

int first_cabled_port(const Node& n) {
  if (n.is_switch()) return 0;
  for (int p = 1; p <= n.num_ports(); ++p)
    if (n.ports[p].connected()) return p;
  return 1;
}

}  // namespace

NodeNames::NodeNames(const Fabric& f) : f_(f), lids_(f) {
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    const auto node = static_cast<int32_t>(i);
    by_name_.emplace(n.desc, node);
    if (!n.node_desc.empty() && n.node_desc != n.desc) by_name_.emplace(n.node_desc, node);
    by_node_guid_.emplace(n.guid, node);
    // Hosts describe themselves as "HOSTNAME HCA-1" or "HOSTNAME mlx5_0": users type the hostname.
    if (!n.is_switch())
      for (const std::string* d : {&n.desc, &n.node_desc})
        if (const size_t sp = d->find(' '); sp != std::string::npos && sp > 0 && (d == &n.desc || *d != n.desc))
          by_host_.emplace(d->substr(0, sp), node);
    if (!n.is_switch())
      for (int p = 1; p <= n.num_ports(); ++p)
        if (n.ports[p].guid) by_port_guid_.emplace(n.ports[p].guid, NamedPort{node, p});
  }
  for (Machine& m : group_machines(f).machines) rails_.emplace(m.name, std::move(m.hcas));
}

const std::vector<int32_t>& NodeNames::rails(std::string_view spec) const {
  static const std::vector<int32_t> kNone;
  auto it = rails_.find(std::string(spec));
  return it == rails_.end() ? kNone : it->second;
}

std::vector<NamedPort> NodeNames::candidates(std::string_view spec) const {
  std::vector<NamedPort> out;
  auto add = [&](NamedPort p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (spec.size() > 2 && (spec.starts_with("0x") || spec.starts_with("0X"))) {
    if (auto g = number(spec.substr(2), 16)) {
      auto port = by_port_guid_.find(*g);
      if (port != by_port_guid_.end()) add(port->second);
      // A CA whose port GUID equals its node GUID: the port is the more precise answer.
      if (auto it = by_node_guid_.find(*g);
          it != by_node_guid_.end() && (port == by_port_guid_.end() || port->second.node != it->second))
        add({it->second, first_cabled_port(f_.nodes[it->second])});
    }
  } else if (auto lid = number(spec, 10)) {
    if (const LidOwner* o = lids_.owner(static_cast<uint32_t>(*lid)))
      add({o->node, f_.nodes[o->node].is_switch() ? 0 : static_cast<int>(o->port)});
  }
  auto [a, b] = by_name_.equal_range(std::string(spec));
  for (auto it = a; it != b; ++it) add({it->second, first_cabled_port(f_.nodes[it->second])});
  // A hostname alone ("node0270" for "node0270 HCA-1"); a host with several HCAs gives several.
  if (out.empty()) {
    auto [h, e] = by_host_.equal_range(std::string(spec));
    for (auto it = h; it != e; ++it) add({it->second, first_cabled_port(f_.nodes[it->second])});
  }
  // One HCA of a host as "host/HCA-2" or "host/mlx5_1" (the description "host HCA-2"), or as
  // "host/3" (its rail 3: the fourth of its HCAs in device order).
  if (const size_t slash = spec.rfind('/'); out.empty() && slash != std::string_view::npos && slash > 0) {
    std::string desc(spec);
    desc[slash] = ' ';
    auto [a2, b2] = by_name_.equal_range(desc);
    for (auto it = a2; it != b2; ++it) add({it->second, first_cabled_port(f_.nodes[it->second])});
    const std::vector<int32_t>& hcas = rails(spec.substr(0, slash));
    if (auto k = number(spec.substr(slash + 1), 10); out.empty() && k && *k < hcas.size())
      add({hcas[*k], first_cabled_port(f_.nodes[hcas[*k]])});
  }
  // A host's name with its GUID appended ("desc 0x..."), as plans list hosts whose descriptions repeat.
  if (out.empty())
    if (const size_t sp = spec.rfind(' '); sp != std::string_view::npos && spec.substr(sp + 1).starts_with("0x"))
      if (auto g = number(spec.substr(sp + 3), 16))
        if (auto it = by_node_guid_.find(*g);
            it != by_node_guid_.end() && f_.nodes[it->second].desc == spec.substr(0, sp))
          add({it->second, first_cabled_port(f_.nodes[it->second])});
  std::sort(out.begin(), out.end(), [](const NamedPort& a, const NamedPort& b) {
    return a.node != b.node ? a.node < b.node : a.port < b.port;
  });
  return out;
}

namespace {
// Edit distance (insert, delete, substitute, swap of neighbours: what a typo costs), stopping
// once every way is beyond `limit`.
size_t edit_distance(std::string_view a, std::string_view b, size_t limit) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit) return limit + 1;
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    size_t best = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
      best = std::min(best, row[j]);
    }
    if (best > limit) return limit + 1;
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}
}  // namespace

std::vector<std::string> nearest_names(std::string_view word, const std::vector<std::string>& names, size_t k) {
  if (word.empty() || word.size() > 200) return {};
  const size_t limit = std::max<size_t>(1, std::min<size_t>(3, word.size() / 4));
  std::vector<std::pair<size_t, std::string>> near;
  for (const std::string& name : names) {
    // A name the word begins ("--sched" for "--schedule") is as near as a name can be.
    const size_t d =
        word.size() >= 3 && name.size() > word.size() && name.starts_with(word) ? 0 : edit_distance(word, name, limit);
    if (d <= limit && name != word) near.emplace_back(d, name);
  }
  std::sort(near.begin(), near.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : natural_less(a.second, b.second);
  });
  near.erase(std::unique(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.second == b.second; }),
             near.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < near.size() && i < k; ++i) out.push_back(near[i].second);
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& names, size_t k) {
  const std::vector<std::string> near = nearest_names(word, names, k);
  if (near.empty()) return "";
  std::string out = "; did you mean";
  for (size_t i = 0; i < near.size(); ++i)
    out += std::string(i ? (i + 1 == near.size() ? " or" : ",") : "") + " '" + near[i] + "'";
  return out + "?";
}

std::string NodeNames::did_you_mean(std::string_view spec, size_t k) const {
  std::vector<std::string> names;
  names.reserve(by_name_.size() + by_host_.size());
  for (const auto& [name, node] : by_name_) names.push_back(name);
  for (const auto& [name, node] : by_host_) names.push_back(name);
  return fabric::did_you_mean(spec, names, k);
}

NamedPort NodeNames::resolve(std::string_view spec, const std::string& what) const {
  std::vector<NamedPort> c = candidates(spec);
  if (c.size() == 1) return c[0];
  const std::string quoted = "'" + std::string(spec) + "'";
  if (c.empty()) {
    const std::string forms =
        " in this scan (give a node description or node-name-map name, a node or port GUID 0x..., or a LID)";
    if (number(spec, 10)) throw InputError(what + ": no port owns LID " + std::string(spec) + forms);
    if (spec.starts_with("0x") || spec.starts_with("0X"))
      throw InputError(what + ": no node or port with GUID " + std::string(spec) + forms);
    throw InputError(what + ": no node or port " + quoted + forms + did_you_mean(spec));
  }
  std::string list;
  for (size_t i = 0; i < c.size() && i < 8; ++i) {
    const Node& n = f_.nodes[c[i].node];
    const Port& p = n.ports[static_cast<size_t>(c[i].port)];
    list +=
        (i ? "; " : "") + n.desc + " " + guid_hex(n.guid) + (p.base_lid ? " LID " + std::to_string(p.base_lid) : "");
  }
  if (c.size() > 8) list += "; and " + std::to_string(c.size() - 8) + " more";
  throw InputError(what + ": " + quoted + " names " + std::to_string(c.size()) + " nodes (" + list +
                   "): give a GUID or LID");
}

}  // namespace ibroute::fabric
