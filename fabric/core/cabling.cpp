#include "ibroute/fabric/cabling.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace ibroute::fabric {

namespace {

using End = std::pair<int32_t, int>;  // (node index, port)
using Key = std::pair<End, End>;      // ends in order

Key key_of(End x, End y) { return x < y ? Key{x, y} : Key{y, x}; }

// Node lookup by GUID and by name (display name or reported description).
class Nodes {
 public:
  explicit Nodes(const Fabric& f) {
    for (size_t n = 0; n < f.nodes.size(); ++n) {
      by_guid_[f.nodes[n].guid] = static_cast<int32_t>(n);
      by_name_[f.nodes[n].desc].insert(static_cast<int32_t>(n));
      if (f.nodes[n].reported_desc() != f.nodes[n].desc)
        by_name_[f.nodes[n].reported_desc()].insert(static_cast<int32_t>(n));
    }
  }
  // The node, or -1 with `why`.
  int32_t find(const CableEnd& e, std::string& why) const {
    if (e.guid) {
      auto it = by_guid_.find(e.guid);
      if (it != by_guid_.end()) return it->second;
      why = e.node + " (" + guid_hex(e.guid) + "): no node of the fabric has this GUID";
      return -1;
    }
    auto it = by_name_.find(e.node);
    if (it == by_name_.end())
      why = e.node + ": no node of the fabric is named so";
    else if (it->second.size() > 1)
      why = e.node + ": " + std::to_string(it->second.size()) + " nodes are named so (give GUIDs)";
    else
      return *it->second.begin();
    return -1;
  }

 private:
  std::unordered_map<uint64_t, int32_t> by_guid_;
  std::map<std::string, std::set<int32_t>> by_name_;
};

CableEnd end_of(const Fabric& f, End e) {
  const Node& n = f.nodes[static_cast<size_t>(e.first)];
  return {n.desc, n.guid, e.second};
}

Cable cable_of(const Fabric& f, const Key& k) { return {end_of(f, k.first), end_of(f, k.second)}; }

struct Work {
  const Fabric& f;
  std::map<Key, size_t> planned;  // unexplained planned cables -> index into the plan
  std::set<Key> found;            // unexplained cables of the fabric
  std::vector<Cable> plan;

  // The fabric's cable at an end, if it is still unexplained.
  std::optional<Key> found_at(End e) const {
    const Node& n = f.nodes[static_cast<size_t>(e.first)];
    if (e.second < 0 || static_cast<size_t>(e.second) >= n.ports.size() ||
        !n.ports[static_cast<size_t>(e.second)].connected())
      return {};
    const Port& p = n.ports[static_cast<size_t>(e.second)];
    const Key k = key_of(e, {p.peer_node, p.peer_port});
    return found.count(k) ? std::optional<Key>(k) : std::nullopt;
  }
  static End other(const Key& k, End e) { return k.first == e ? k.second : k.first; }
};

// Two planned cables (x1, y1), (x2, y2) found as (x1, y2), (x2, y1).
void find_swaps(Work& w, CablingCheck& out) {
  for (auto it = w.planned.begin(); it != w.planned.end();) {
    bool done = false;
    for (const End& x1 : {it->first.first, it->first.second}) {
      const End y1 = Work::other(it->first, x1);
      const auto at_x1 = w.found_at(x1);
      if (!at_x1) continue;
      const End y2 = Work::other(*at_x1, x1);
      // The planned cable that ends at y2, and what the fabric has at its other end.
      auto r2 = std::find_if(w.planned.begin(), w.planned.end(), [&](const auto& p) {
        return p.first != it->first && (p.first.first == y2 || p.first.second == y2);
      });
      if (r2 == w.planned.end()) continue;
      const End x2 = Work::other(r2->first, y2);
      const auto at_x2 = w.found_at(x2);
      if (!at_x2 || Work::other(*at_x2, x2) != y1) continue;
      out.swapped.emplace_back(w.plan[it->second], w.plan[r2->second]);
      w.found.erase(*at_x1), w.found.erase(*at_x2);
      const Key k2 = r2->first;
      it = w.planned.erase(it);
      if (it != w.planned.end() && it->first == k2) ++it;
      w.planned.erase(k2);
      done = true;
      break;
    }
    if (!done) ++it;
  }
}

// A planned cable found with one end at another port of the planned node.
void find_moves(Work& w, CablingCheck& out) {
  for (auto it = w.planned.begin(); it != w.planned.end();) {
    std::optional<Key> hit;
    for (const End& x : {it->first.first, it->first.second}) {
      const End y = Work::other(it->first, x);
      if (const auto at = w.found_at(x); at && Work::other(*at, x).first == y.first) hit = at;
      if (hit) break;
    }
    if (!hit) {
      ++it;
      continue;
    }
    out.moved.emplace_back(w.plan[it->second], cable_of(w.f, *hit));
    w.found.erase(*hit);
    it = w.planned.erase(it);
  }
}

}  // namespace

std::vector<std::string> counted_once(const std::vector<std::string>& lines) {
  std::vector<std::string> order;
  std::map<std::string, size_t> count;
  for (const std::string& l : lines)
    if (count[l]++ == 0) order.push_back(l);
  for (std::string& l : order)
    if (const size_t k = count[l]; k > 1) l += " (" + std::to_string(k) + " planned cables)";
  return order;
}

std::vector<Cable> cables_of(const Fabric& f) {
  std::vector<Cable> out;
  for (size_t n = 0; n < f.nodes.size(); ++n)
    for (size_t p = 1; p < f.nodes[n].ports.size(); ++p) {
      const Port& port = f.nodes[n].ports[p];
      const End a{static_cast<int32_t>(n), static_cast<int>(p)}, b{port.peer_node, port.peer_port};
      if (port.connected() && a < b) out.push_back(cable_of(f, {a, b}));
    }
  return out;
}

CablingCheck check_cabling(const Fabric& f, const std::vector<Cable>& plan) {
  CablingCheck out;
  out.planned = plan.size();
  const Nodes nodes(f);
  Work w{f, {}, {}, plan};
  std::set<int32_t> named;
  std::set<End> used;  // a port takes one cable: a plan that puts two there is said, not guessed at
  for (size_t i = 0; i < plan.size(); ++i) {
    std::string why;
    const int32_t a = nodes.find(plan[i].a, why), b = a < 0 ? -1 : nodes.find(plan[i].b, why);
    const End ea{a, plan[i].a.port}, eb{b, plan[i].b.port};
    if (a >= 0 && b >= 0 && (ea == eb || used.count(ea) || used.count(eb))) {
      const CableEnd& twice = used.count(ea) || ea == eb ? plan[i].a : plan[i].b;
      why = twice.node + "[" + std::to_string(twice.port) + "]: a second cable planned at this port";
    } else if (a >= 0 && b >= 0) {
      used.insert(ea), used.insert(eb);
      named.insert(a), named.insert(b);
      w.planned.emplace(key_of(ea, eb), i);
      continue;
    }
    out.unresolved.push_back(why);
  }
  for (size_t n = 0; n < f.nodes.size(); ++n)
    for (size_t p = 1; p < f.nodes[n].ports.size(); ++p) {
      const Port& port = f.nodes[n].ports[p];
      const End a{static_cast<int32_t>(n), static_cast<int>(p)}, b{port.peer_node, port.peer_port};
      if (port.connected() && a < b && (named.count(a.first) || named.count(b.first))) w.found.insert(key_of(a, b));
    }
  for (auto it = w.planned.begin(); it != w.planned.end();)
    if (w.found.erase(it->first))
      ++out.as_planned, it = w.planned.erase(it);
    else
      ++it;
  find_swaps(w, out);
  find_moves(w, out);
  for (const auto& [k, i] : w.planned) out.missing.push_back(plan[i]);
  for (const Key& k : w.found) out.extra.push_back(cable_of(f, k));
  return out;
}

}  // namespace ibroute::fabric
