#include <cstdio>

#include "ibroute/fabric/text_export.hpp"

namespace ibroute::fabric {

namespace {

// A description as one safe line: OpenSM reads lines of up to 1 023 bytes and looks for the
// port GUID after the port number, so a name may neither break the line nor run long.
std::string one_line(const std::string& s) {
  std::string out = s.substr(0, 64);  // NodeDescription is 64 bytes on the wire
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\'') c = '?';
  return out;
}

}  // namespace

std::string write_lft_dump(const Fabric& f, const std::vector<std::vector<uint8_t>>& lft,
                           const std::vector<std::string>& comment) {
  const LidMap lids(f);
  std::string out;
  for (const std::string& c : comment) out += "# " + one_line(c) + "\n";
  char buf[256];
  for (size_t i = 0; i < f.nodes.size() && i < lft.size(); ++i) {
    const Node& sw = f.nodes[i];
    const std::vector<uint8_t>& table = lft[i];
    if (!sw.is_switch() || table.empty()) continue;
    std::snprintf(buf, sizeof buf, "Unicast lids [0x0-0x%zx] of switch Lid %u guid 0x%016llx (%s):\n", table.size() - 1,
                  unsigned{sw.ports.at(0).base_lid}, static_cast<unsigned long long>(sw.guid),
                  one_line(sw.desc).c_str());
    out += buf;
    out += "  Lid  Out   Destination\n       Port     Info \n";
    size_t rows = 0;
    for (uint16_t lid : lids.lids()) {
      if (lid >= table.size() || table[lid] == kNoRoute) continue;
      const LidOwner* o = lids.owner(lid);
      const Node& owner = f.nodes[o->node];
      const char* kind = owner.is_switch() ? "Switch" : owner.type == NodeType::router ? "Router" : "Channel Adapter";
      std::snprintf(buf, sizeof buf, "0x%04x %03u : (%s portguid 0x%016llx: '%s')\n", lid, unsigned{table[lid]}, kind,
                    static_cast<unsigned long long>(owner.ports[o->port].guid), one_line(owner.desc).c_str());
      out += buf;
      ++rows;
    }
    out += std::to_string(rows) + " valid lids dumped \n";
  }
  return out;
}

}  // namespace ibroute::fabric
