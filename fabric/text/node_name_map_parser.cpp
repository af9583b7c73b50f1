// Parser for infiniband-diags' node-name map (ibnetdiscover --node-name-map, ibroute, OpenSM):
//   # comment
//   0x0002c90300a1b2c0 "leaf-r01-u40"
//   0x0002c90300a1b2d0 spine-r02-u20   # unquoted names end at '#'
// A GUID (hex with 0x, as the tools write it, or decimal), then the name: quoted (to the next
// quote), or the rest of the line. Unlike the C parser, one bad line is an error naming it, not a
// silently ignored map.
#include <string>

#include "ibroute/fabric/text_import.hpp"
#include "text_reader.hpp"

namespace ibroute::fabric {

using namespace text;

NodeNameMap parse_node_name_map(std::string_view text, std::string_view source_name) {
  LineReader r(text, source_name);
  NodeNameMap out;
  for (std::string_view line; r.next(line);) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::string_view rest = line;
    std::string_view g = next_token(rest);
    uint64_t guid = 0;
    bool hex = g.starts_with("0x") || g.starts_with("0X");
    if (!parse_uint(g, hex ? 16 : 10, guid) || guid == 0) r.fail("bad GUID '" + excerpt(g) + "' (0x... expected)");
    rest = trim(rest);
    std::string_view name = rest;
    if (name.starts_with("\"")) {
      size_t e = name.find('"', 1);
      if (e == std::string_view::npos) r.fail("name without its closing quote");
      name = name.substr(1, e - 1);
    } else {
      name = trim(name.substr(0, name.find('#')));  // an unquoted name ends at a comment
    }
    if (name.empty()) r.fail("GUID " + guid_hex(guid) + " without a name");
    if (name.size() > 256) r.fail("name longer than 256 characters");
    out.emplace_back(guid, std::string(name));
  }
  return out;
}

}  // namespace ibroute::fabric
