#include "ibroute/schedule/hosts.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <unordered_map>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/node_names.hpp"

namespace ibroute::schedule {

namespace {
std::string_view trimmed(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}
}  // namespace

// Slurm's host-list form: "node[0001-0003,0007]" -> node0001 node0002 node0003 node0007, numbers
// padded to the width written; several groups multiply ("r[1-2]n[1-2]"). Anything else in the
// brackets (a description that holds brackets) stays as written.
std::vector<std::string> expand_ranges(std::string_view item) {
  constexpr size_t kMaxNames = 1'000'000;
  const size_t open = item.find('['), close = open == std::string_view::npos ? open : item.find(']', open);
  if (close == std::string_view::npos) return {std::string(item)};
  const std::string_view inner = item.substr(open + 1, close - open - 1);
  if (inner.empty() || inner.find_first_not_of("0123456789-,") != std::string_view::npos) return {std::string(item)};
  std::vector<std::string> numbers;
  for (size_t at = 0; at <= inner.size();) {
    const size_t end = std::min(inner.find(',', at), inner.size());
    const std::string_view r = inner.substr(at, end - at);
    const size_t dash = r.find('-');
    const std::string_view lo = r.substr(0, dash), hi = dash == std::string_view::npos ? lo : r.substr(dash + 1);
    uint64_t a = 0, b = 0;
    const bool ok = !lo.empty() && !hi.empty() && lo.size() <= 9 && hi.size() <= 9 &&
                    std::from_chars(lo.data(), lo.data() + lo.size(), a).ptr == lo.data() + lo.size() &&
                    std::from_chars(hi.data(), hi.data() + hi.size(), b).ptr == hi.data() + hi.size();
    if (!ok || b < a)
      throw InputError("host list '" + std::string(item.substr(0, 80)) + "': '" + std::string(r) +
                       "' is no range of numbers");
    if (b - a >= kMaxNames || numbers.size() + (b - a) >= kMaxNames)
      throw InputError("host list '" + std::string(item.substr(0, 80)) + "' names more than a million hosts");
    for (uint64_t x = a; x <= b; ++x) {
      std::string digits = std::to_string(x);
      if (digits.size() < lo.size()) digits.insert(0, lo.size() - digits.size(), '0');
      numbers.push_back(std::move(digits));
    }
    at = end + 1;
  }
  std::vector<std::string> out;
  const std::string prefix(item.substr(0, open));
  const std::vector<std::string> rests = expand_ranges(item.substr(close + 1));
  for (const std::string& n : numbers)  // the first group outermost, as Slurm lists them
    for (const std::string& rest : rests) {
      if (out.size() >= kMaxNames)
        throw InputError("host list '" + std::string(item.substr(0, 80)) + "' names more than a million hosts");
      out.push_back(prefix + n + rest);
    }
  return out;
}

std::vector<ListedHost> host_lines(std::string_view text) {
  std::vector<ListedHost> out;
  size_t line = 0;
  while (!text.empty()) {
    ++line;
    const size_t end = text.find('\n');
    std::string_view l = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    l = trimmed(l.substr(0, l.find('#')));
    if (!l.empty())
      for (std::string& name : expand_ranges(l)) out.push_back({line, std::move(name)});
  }
  return out;
}

std::vector<std::string> host_commas(std::string_view text) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= text.size();) {
    size_t end = at;  // the next comma outside brackets: "node[01-03,07],gpu1"
    for (int depth = 0; end < text.size() && (depth > 0 || text[end] != ','); ++end)
      depth += text[end] == '[' ? 1 : text[end] == ']' ? -1 : 0;
    if (const std::string_view name = trimmed(text.substr(at, end - at)); !name.empty())
      for (std::string& n : expand_ranges(name)) out.push_back(std::move(n));
    at = end + 1;
  }
  return out;
}

using namespace ibroute::fabric;

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

std::vector<Host> pick_hosts(const Fabric& f, const std::vector<Host>& all, const std::vector<std::string>& names,
                             size_t at_least) {
  const NodeNames index(f);
  std::unordered_map<int32_t, size_t> host_of;  // node -> its entry in `all`
  for (size_t i = 0; i < all.size(); ++i) host_of.emplace(all[i].node, i);
  std::vector<Host> out;
  std::vector<char> taken(all.size(), 0);
  for (const std::string& n : names) {
    std::vector<NamedPort> hosts;
    const std::vector<NamedPort> any = index.candidates(n);
    for (const NamedPort& c : any)
      if (host_of.count(c.node)) hosts.push_back(c);
    if (any.empty())
      throw InputError("unknown host '" + n + "' (no node description, node-name-map name, GUID or LID of this scan)" +
                       index.did_you_mean(n));
    if (hosts.empty())
      throw InputError("'" + n + "' is a " + std::string(to_string(node_kind(f.nodes[any[0].node]))) +
                       ", not a host that sends traffic");
    // A machine's name: every one of its HCAs that sends, rail 0 first. Other names of several
    // nodes are refused, listing them.
    if (hosts.size() > 1) {
      std::vector<NamedPort> rails;
      for (int32_t node : index.rails(n))
        if (host_of.count(node)) rails.push_back({node, 0});
      if (rails.size() != hosts.size()) index.resolve(n, "host");  // throws, listing the candidates
      hosts = rails;
    }
    for (const NamedPort& named_port : hosts) {
      const size_t i = host_of.at(named_port.node);
      if (taken[i]++) throw InputError("host '" + n + "' is listed twice (as '" + all[i].name + "')");
      Host h = all[i];
      const Port& named = f.nodes[h.node].ports[static_cast<size_t>(named_port.port)];
      if (named_port.port != h.port && named.connected() && named.base_lid)
        h.port = static_cast<uint8_t>(named_port.port);  // a port GUID or LID names that port
      out.push_back(h);
    }
  }
  if (out.size() < at_least)
    throw InputError(at_least == 2 ? "an all-to-all needs at least 2 hosts"
                                   : "a group needs at least " + std::to_string(at_least) + " host");
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

HostNames::HostNames(const std::vector<HostIdentity>& ids) {
  f_.nodes.resize(ids.size());
  for (size_t r = 0; r < ids.size(); ++r) {
    const HostIdentity& h = ids[r];
    Node& n = f_.nodes[r];
    n.type = NodeType::ca;
    n.guid = h.node_guid;
    n.desc = h.name;
    // A repeated description is listed as "description 0xGUID": the description is the node's own.
    if (const size_t sp = h.name.rfind(' ');
        sp != std::string::npos && h.node_guid && h.name.substr(sp + 1) == guid_hex(h.node_guid))
      n.desc = h.name.substr(0, sp), n.node_desc = h.name;
    n.ports.resize(2);
    n.ports[1].guid = h.port_guid, n.ports[1].base_lid = h.base_lid, n.ports[1].lmc = h.lmc;
  }
  names_ = std::make_unique<NodeNames>(f_);
}

HostNames::~HostNames() = default;

std::vector<size_t> HostNames::ranks(std::string_view spec) const {
  std::vector<size_t> found;
  for (const NamedPort& p : names_->candidates(spec)) found.push_back(static_cast<size_t>(p.node));
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

size_t HostNames::rank(std::string_view spec, const std::string& what) const {
  const std::vector<size_t> found = ranks(spec);
  if (found.size() == 1) return found[0];
  const std::string quoted = "'" + std::string(spec) + "'";
  if (found.empty())
    throw InputError(what + ": no host of the schedule is " + quoted +
                     " (give a hostname, node description, host/HCA-2, a node or port GUID 0x..., or one of its LIDs)" +
                     names_->did_you_mean(spec));
  std::string list;
  for (size_t i = 0; i < found.size() && i < 8; ++i)
    list += (i ? "; " : "") + std::string("rank ") + std::to_string(found[i]) + " " +
            f_.nodes[found[i]].reported_desc() + " port " + guid_hex(f_.nodes[found[i]].ports[1].guid);
  if (found.size() > 8) list += "; and " + std::to_string(found.size() - 8) + " more";
  throw InputError(what + ": " + quoted + " names " + std::to_string(found.size()) + " hosts of the schedule (" + list +
                   "): give a port GUID");
}

size_t rank_named(const std::vector<HostIdentity>& ids, std::string_view spec, const std::string& what) {
  return HostNames(ids).rank(spec, what);
}

Groups join_groups(const std::vector<Host>& snd, const std::vector<Host>& rcv) {
  Groups g;
  std::map<std::pair<int32_t, uint8_t>, int32_t> rank;
  auto rank_of = [&](const Host& h) {
    auto [it, fresh] = rank.emplace(std::pair{h.node, h.port}, static_cast<int32_t>(g.hosts.size()));
    if (fresh) g.hosts.push_back(h);
    return it->second;
  };
  for (const Host& h : snd) g.senders.push_back(rank_of(h));
  for (const Host& h : rcv) g.receivers.push_back(rank_of(h));
  if (g.hosts.size() < 2) throw InputError("a plan needs at least two hosts");
  return g;
}

Groups topology_ordered(const fabric::Fabric& f, const Groups& g) {
  auto members = [&](const std::vector<int32_t>& ranks) {
    std::vector<Host> out;
    for (int32_t r : ranks) out.push_back(g.hosts[static_cast<size_t>(r)]);
    return out;
  };
  return join_groups(topology_order(f, members(g.senders)), topology_order(f, members(g.receivers)));
}

}  // namespace ibroute::schedule
