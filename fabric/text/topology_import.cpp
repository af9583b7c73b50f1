// Which text form a topology file is (ibnetdiscover's, ibdiagnet's), from its content, never its name.
#include "ibroute/fabric/text_import.hpp"

namespace ibroute::fabric {

Fabric parse_topology(std::string_view text, std::string_view source_name) {
  if (looks_like_ports_report(text)) return parse_ports_report(text, source_name);
  if (looks_like_ibdiagnet_lst(text)) return parse_ibdiagnet_lst(text, source_name);
  if (looks_like_ibdiagnet_csv(text)) return parse_ibdiagnet_csv(text, source_name);
  return parse_ibnetdiscover(text, source_name);
}

}  // namespace ibroute::fabric
