// Which of ibnetdiscover's text forms a topology file is, from its content, never its name.
#include "ibroute/fabric/text_import.hpp"

namespace ibroute::fabric {

Fabric parse_topology(std::string_view text, std::string_view source_name) {
  if (looks_like_ports_report(text)) return parse_ports_report(text, source_name);
  return parse_ibnetdiscover(text, source_name);
}

}  // namespace ibroute::fabric
