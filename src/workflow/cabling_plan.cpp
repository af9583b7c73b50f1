#include "cabling_plan.hpp"

#include <algorithm>
#include <cctype>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/text_import.hpp"
#include "text_input.hpp"

namespace ibroute::workflow {

namespace {

// The fields of one CSV row; a field may be "quoted" (a name with a comma), "" inside for ".
std::vector<std::string> csv_fields(const std::string& line, const std::string& where) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        out.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        out.back() += c;
    } else if (c == '"' && out.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (quoted) throw InputError(where + ": a quote not closed");
  for (std::string& f : out) {
    while (!f.empty() && std::isspace(static_cast<unsigned char>(f.back()))) f.pop_back();
    while (!f.empty() && std::isspace(static_cast<unsigned char>(f.front()))) f.erase(f.begin());
  }
  return out;
}

fabric::CableEnd csv_end(const std::string& node, const std::string& port, const std::string& where) {
  if (node.empty() || node.size() > 256 ||
      std::any_of(node.begin(), node.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    throw InputError(where + ": '" + shown_text(node) + "' is no node name or GUID");
  fabric::CableEnd e{node, 0, 0};
  if (node.size() > 2 && node[0] == '0' && (node[1] == 'x' || node[1] == 'X') && node.size() <= 18 &&
      std::all_of(node.begin() + 2, node.end(), [](unsigned char c) { return std::isxdigit(c); }))
    e.guid = std::stoull(node.substr(2), nullptr, 16);
  if (port.empty() || port.size() > 3 ||
      !std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); }) || std::stoi(port) < 1 ||
      std::stoi(port) > 254)
    throw InputError(where + ": port '" + shown_text(port) + "' is not a port number (1..254)");
  e.port = std::stoi(port);
  return e;
}

std::vector<fabric::Cable> read_csv_plan(const std::string& text, const std::string& path) {
  std::vector<fabric::Cable> out;
  size_t line_no = 0, start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    start = end + 1, ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    const std::string where = path + " line " + std::to_string(line_no);
    const std::vector<std::string> f = csv_fields(line, where);
    if (f.size() != 4)
      throw InputError(where + ": " + std::to_string(f.size()) + " fields; a row is switch,port,peer,peer_port");
    if (out.empty() && f[1] == "port" && f[3] == "peer_port") continue;  // the header
    out.push_back({csv_end(f[0], f[1], where), csv_end(f[2], f[3], where)});
  }
  if (out.empty()) throw InputError(path + ": no cable (rows switch,port,peer,peer_port, or an ibnetdiscover output)");
  return out;
}

}  // namespace

std::vector<fabric::Cable> read_cabling_plan(const std::string& path) {
  return parse_cabling_plan(read_file(path), path);
}

std::vector<fabric::Cable> parse_cabling_plan(const std::string& text, const std::string& path) {
  // ibnetdiscover's output has its node headers ("Switch 36 \"S-...\"", "Ca 2 \"H-...\""); a CSV has none.
  const bool topology = text.find("\nSwitch") != std::string::npos || text.rfind("Switch", 0) == 0 ||
                        text.find("\nCa\t") != std::string::npos || text.find("\nCa ") != std::string::npos;
  if (!topology) return read_csv_plan(text, path);
  return fabric::cables_of(fabric::parse_topology(text, path));
}

}  // namespace ibroute::workflow
