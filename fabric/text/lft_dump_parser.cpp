// Parser for dump_fts / dump_lfts.sh output: per switch a header
//   Unicast lids [0x0-0x1a3] of switch DR path slid 0; dlid 0; 0,1,9,12 guid 0x000000000020000b (ibswitch12):
// then lines "0x0004 010 : (...)" and a trailer "400 valid lids dumped". The trailer's count
// must match, which catches truncated files. Hand-parsed: dumps of large fabrics have ~10^6 lines.
#include <charconv>
#include <string>
#include <unordered_map>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/text_import.hpp"

namespace ibroute::fabric {

namespace {
bool parse_num(std::string_view s, int base, uint64_t& out) {
  if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}
std::string_view token(std::string_view& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return s = {}, std::string_view{};
  size_t e = s.find_first_of(" \t", b);
  std::string_view t = s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
  s = e == std::string_view::npos ? std::string_view{} : s.substr(e);
  return t;
}
}  // namespace

void apply_lft_dump(Fabric& f, std::string_view text, std::string_view source_name) {
  std::unordered_map<uint64_t, int> by_guid;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].is_switch()) by_guid[f.nodes[i].guid] = static_cast<int>(i);

  size_t lineno = 0;
  auto fail = [&](const std::string& what) {
    throw InputError(std::string(source_name) + ":" + std::to_string(lineno) + ": " + what);
  };
  Node* cur = nullptr;
  uint64_t entries = 0;
  bool in_multicast = false;
  size_t sections = 0;

  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("Unicast lids [")) {
      if (cur) fail("previous switch's table has no 'valid lids dumped' line (truncated?)");
      in_multicast = false;
      size_t dash = line.find('-', 14), close = line.find(']', 14), g = line.rfind(" guid ");
      uint64_t lo = 0, hi = 0, guid = 0;
      if (dash == std::string_view::npos || close == std::string_view::npos || g == std::string_view::npos ||
          !parse_num(line.substr(14, dash - 14), 16, lo) || !parse_num(line.substr(dash + 1, close - dash - 1), 16, hi))
        fail("bad switch header: " + std::string(line.substr(0, 80)));
      std::string_view gs = line.substr(g + 6);
      gs = gs.substr(0, gs.find_first_of(" :("));
      if (!parse_num(gs, 16, guid)) fail("bad switch GUID in header");
      auto it = by_guid.find(guid);
      if (it == by_guid.end())
        fail("switch " + guid_hex(guid) + " is not in the topology (dump of another fabric?)");
      if (hi > static_cast<uint64_t>(kMaxLid)) fail("LID range beyond the unicast range");
      cur = &f.nodes[it->second];
      cur->lft.assign(hi + 1, kNoRoute);
      cur->lft_read = true;
      entries = 0;
      ++sections;
      continue;
    }
    if (line.starts_with("Multicast mlids")) {
      if (cur) fail("previous switch's table has no 'valid lids dumped' line (truncated?)");
      in_multicast = true;
      continue;
    }
    if (in_multicast) continue;
    std::string_view rest = line;
    std::string_view t0 = token(rest);
    if (t0.empty() || t0 == "Lid" || t0 == "Port") continue;
    if (t0.starts_with("0x")) {
      if (!cur) fail("LFT entry outside a switch table");
      uint64_t lid = 0, port = 0;
      std::string_view t1 = token(rest);
      if (!parse_num(t0, 16, lid) || !parse_num(t1, 10, port)) fail("bad LFT entry: " + std::string(line.substr(0, 80)));
      if (lid >= cur->lft.size()) fail("LID " + std::to_string(lid) + " outside the table's range");
      if (port > 254 || static_cast<int>(port) > cur->num_ports())
        fail("port " + std::to_string(port) + " does not exist on " + cur->desc);
      cur->lft[lid] = static_cast<uint8_t>(port);
      ++entries;
      continue;
    }
    uint64_t n = 0;
    if (parse_num(t0, 10, n) && rest.find("valid lids dumped") != std::string_view::npos) {
      if (!cur) fail("'valid lids dumped' without a switch table");
      if (n != entries)
        fail("table of " + cur->desc + " says " + std::to_string(n) + " LIDs but has " + std::to_string(entries));
      cur = nullptr;
      continue;
    }
    fail("cannot parse: " + std::string(line.substr(0, 80)));
  }
  if (cur) fail("table of " + cur->desc + " ends early (truncated file?)");
  if (sections == 0) throw InputError(std::string(source_name) + ": no forwarding tables found (not dump_fts output?)");
  for (Node& n : f.nodes)
    if (n.is_switch() && !n.lft_read) {
      f.complete = false;
      f.problems.push_back({"lft_missing", n.guid, -1, "no forwarding table for " + n.desc + " in the dump"});
    }
}

}  // namespace ibroute::fabric
