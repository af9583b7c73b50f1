#include "ibroute/fabric/machines.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace ibroute::fabric {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

// A device name: letters, digits, '_', '-', '.', ':'; ending in a digit ("HCA-1", "mlx5_0").
bool is_device(std::string_view d) {
  if (d.empty() || d.back() < '0' || d.back() > '9') return false;
  for (char c : d)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':')) return false;
  return std::isalpha(static_cast<unsigned char>(d.front()));
}

}  // namespace

bool split_machine_name(std::string_view desc, std::string& machine, std::string& device) {
  size_t b = 0;
  while (b < desc.size() && is_space(desc[b])) ++b;
  size_t e = b;
  while (e < desc.size() && !is_space(desc[e])) ++e;
  size_t d = e;
  while (d < desc.size() && is_space(desc[d])) ++d;
  size_t de = d;
  while (de < desc.size() && !is_space(desc[de])) ++de;
  size_t rest = de;
  while (rest < desc.size() && is_space(desc[rest])) ++rest;
  const std::string_view m = desc.substr(b, e - b), dev = desc.substr(d, de - d);
  if (m.empty() || rest != desc.size() || !(dev.empty() || is_device(dev))) return false;
  if (m == "localhost" || m.starts_with("localhost.")) return false;  // what an unconfigured host calls itself
  machine = std::string(m);
  device = std::string(dev);
  return true;
}

int Machines::max_rails() const {
  size_t most = 0;
  for (const Machine& m : machines) most = std::max(most, m.hcas.size());
  return static_cast<int>(most);
}

std::vector<int> Machines::machines_by_hcas() const {
  std::vector<int> out(static_cast<size_t>(max_rails()) + 1, 0);
  for (const Machine& m : machines) ++out[m.hcas.size()];
  out.erase(out.begin());
  return out;
}

Machines group_machines(const Fabric& f) {
  Machines out;
  out.machine_of.assign(f.nodes.size(), -1);
  out.rail_of.assign(f.nodes.size(), -1);
  std::map<std::string, std::vector<std::pair<std::string, int32_t>>, decltype(&natural_less)> named(&natural_less);
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const Node& n = f.nodes[i];
    if (!is_host(n)) continue;
    std::string machine, device;
    // The reported description names the machine even where a node-name map renamed the HCA.
    if (split_machine_name(n.reported_desc(), machine, device) || split_machine_name(n.desc, machine, device))
      named[machine].emplace_back(device, static_cast<int32_t>(i));
    else
      out.unnamed.push_back(static_cast<int32_t>(i));
  }
  for (auto& [name, hcas] : named) {
    // Two HCAs that say the same ("h1" twice, "node1 HCA-1" twice) are not told apart by their
    // descriptions: which machine they are is not known.
    std::vector<std::string> devices;
    for (const auto& [device, node] : hcas) devices.push_back(device);
    std::sort(devices.begin(), devices.end());
    if (std::adjacent_find(devices.begin(), devices.end()) != devices.end() ||
        (hcas.size() > 1 && devices.front().empty())) {
      for (const auto& [device, node] : hcas) out.unnamed.push_back(node);
      continue;
    }
    std::sort(hcas.begin(), hcas.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? natural_less(a.first, b.first) : f.nodes[a.second].guid < f.nodes[b.second].guid;
    });
    Machine m{name, {}};
    for (const auto& [device, node] : hcas) {
      out.machine_of[node] = static_cast<int32_t>(out.machines.size());
      out.rail_of[node] = static_cast<int32_t>(m.hcas.size());
      m.hcas.push_back(node);
    }
    out.machines.push_back(std::move(m));
  }
  std::sort(out.unnamed.begin(), out.unnamed.end());
  return out;
}

std::vector<RailGroup> rail_groups(const Fabric& f, const Machines& m) {
  // Each machine's switches in rail order (an HCA without a cable to a switch: no signature),
  // gathered by the set of switches: a group is one set, whatever order the rails take in it.
  std::map<std::vector<int32_t>, std::vector<std::pair<int32_t, std::vector<int32_t>>>> alike;
  for (size_t i = 0; i < m.machines.size(); ++i) {
    const Machine& machine = m.machines[i];
    if (machine.hcas.size() < 2) continue;
    std::vector<int32_t> leaves;
    for (int32_t hca : machine.hcas) {
      const Node& n = f.nodes[hca];
      int32_t sw = -1;
      for (int p = 1; p <= n.num_ports() && sw < 0; ++p)
        if (n.ports[p].connected() && f.nodes[n.ports[p].peer_node].is_switch()) sw = n.ports[p].peer_node;
      leaves.push_back(sw);
    }
    std::vector<int32_t> set = leaves;
    std::sort(set.begin(), set.end());
    if (set.front() < 0 || std::adjacent_find(set.begin(), set.end()) != set.end()) continue;
    alike[set].emplace_back(static_cast<int32_t>(i), std::move(leaves));
  }
  std::map<int32_t, int> uses;  // how many candidate groups each switch is in
  for (const auto& [set, machines] : alike)
    if (machines.size() >= 2)
      for (int32_t sw : set) ++uses[sw];
  std::vector<RailGroup> out;
  for (auto& [set, machines] : alike) {
    if (machines.size() < 2 || !std::all_of(set.begin(), set.end(), [&](int32_t sw) { return uses[sw] == 1; }))
      continue;
    // The group's rail order: the one most of its machines follow.
    std::map<std::vector<int32_t>, int> orders;
    for (const auto& [machine, leaves] : machines) ++orders[leaves];
    RailGroup g;
    g.leaves = std::max_element(orders.begin(), orders.end(), [](const auto& a, const auto& b) {
                 return a.second < b.second;
               })->first;
    for (const auto& [machine, leaves] : machines) {
      g.machines.push_back(machine);
      g.crossed += leaves != g.leaves;
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::string describe_machines(const Fabric& f, const Machines& m) {
  std::string out;
  const std::vector<int> by = m.machines_by_hcas();
  const size_t kinds = static_cast<size_t>(std::count_if(by.begin(), by.end(), [](int c) { return c > 0; }));
  const std::string n = std::to_string(m.machines.size());
  const auto hcas = [](size_t k) { return std::to_string(k) + (k == 1 ? " HCA" : " HCAs"); };
  if (kinds == 1)
    out = n + (m.machines.size() == 1 ? " machine with " : " machines with ") + hcas(by.size()) +
          (m.machines.size() == 1 ? "" : " each") + " (" + std::to_string(by.size()) +
          (by.size() == 1 ? " rail)" : " rails)");
  else if (kinds > 1) {
    out = n + " machines (" + std::to_string(by.size()) + " rails at most):";
    const char* sep = " ";
    for (size_t k = by.size(); k >= 1; --k)
      if (by[k - 1]) out += sep + std::to_string(by[k - 1]) + " with " + hcas(k), sep = ", ";
  }
  if (!m.unnamed.empty())
    out += (out.empty() ? "" : "; ") + std::to_string(m.unnamed.size()) +
           (m.unnamed.size() == 1 ? " HCA names no machine" : " HCAs name no machine") + " (e.g. '" +
           f.nodes[m.unnamed.front()].reported_desc().substr(0, 48) + "')";
  return out;
}

}  // namespace ibroute::fabric
