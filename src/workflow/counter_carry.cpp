#include "counter_carry.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <unordered_map>

#include "ibroute/fabric/error.hpp"
#include "text_input.hpp"

namespace ibroute::workflow {

using namespace ibroute::fabric;

namespace {

constexpr const char* kHeader = "ibroute-counter-carry 1";

bool by_port(const PortSample& a, const PortSample& b) { return std::pair(a.node, a.port) < std::pair(b.node, b.port); }

// One unsigned number of the line at `at`, in decimal (a GUID in hex), within `most`.
bool take(std::string_view& at, uint64_t most, uint64_t& out, int base = 10) {
  while (!at.empty() && at.front() == ' ') at.remove_prefix(1);
  const auto [end, ec] = std::from_chars(at.data(), at.data() + at.size(), out, base);
  if (ec != std::errc() || end == at.data() || out > most) return false;
  at.remove_prefix(static_cast<size_t>(end - at.data()));
  return true;
}

// The largest value counter i can read.
uint64_t largest(size_t i, bool extended) {
  const int bits = counter_bits(static_cast<Counter>(i), extended);
  return bits >= 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
}

}  // namespace

std::vector<PortSample> parse_carry(const std::string& text, const Fabric& f) {
  std::unordered_map<uint64_t, int32_t> node_of;
  for (size_t i = 0; i < f.nodes.size(); ++i) node_of.emplace(f.nodes[i].guid, static_cast<int32_t>(i));
  std::vector<PortSample> out;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) throw InputError("not a carry file of this version");
  for (size_t no = 2; std::getline(in, line); ++no) {
    std::string_view at(line);
    uint64_t guid = 0, port = 0, ext = 0;
    PortSample s;
    bool ok = take(at, UINT64_MAX, guid, 16) && take(at, 254, port) && port >= 1 && take(at, 1, ext);
    for (size_t i = 0; ok && i < kCounters; ++i) ok = take(at, largest(i, ext != 0), s.v[i]);
    if (!ok || !at.empty())
      throw InputError("line " + std::to_string(no) + " is not 'GUID PORT EXTENDED' and " + std::to_string(kCounters) +
                       " counters in range");
    const auto it = node_of.find(guid);
    if (it == node_of.end() || static_cast<int>(port) > f.nodes[static_cast<size_t>(it->second)].num_ports()) continue;
    s.node = it->second, s.port = static_cast<int>(port), s.extended = ext != 0;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(), by_port);
  out.erase(std::unique(out.begin(), out.end(),
                        [](const PortSample& a, const PortSample& b) { return a.node == b.node && a.port == b.port; }),
            out.end());
  return out;
}

std::vector<PortSample> read_carry(const std::string& path, const Fabric& f, std::string& note) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  try {
    return parse_carry(read_file(path, size_t{256} << 20), f);
  } catch (const std::exception& e) {
    note = path + ": " + e.what() + "; the last counters of ports that stop answering start afresh";
    return {};
  }
}

std::string carry_text(const Fabric& f, const std::vector<PortSample>& samples) {
  std::string out = std::string(kHeader) + "\n";
  char guid[24];
  for (const PortSample& s : samples) {
    std::snprintf(guid, sizeof guid, "%llx",
                  static_cast<unsigned long long>(f.nodes[static_cast<size_t>(s.node)].guid));
    out += guid;
    out += " " + std::to_string(s.port) + (s.extended ? " 1" : " 0");
    for (uint64_t v : s.v) out += " " + std::to_string(v);
    out += "\n";
  }
  return out;
}

std::vector<PortSample> carry_over(CounterSnapshot& now, const std::vector<PortSample>& last) {
  now.carried.clear();
  for (auto [node, port] : now.unanswered) {
    const PortSample key{node, port, false, {}};
    const auto it = std::lower_bound(last.begin(), last.end(), key, by_port);
    if (it != last.end() && it->node == node && it->port == port) now.carried.push_back(*it);
  }
  std::sort(now.carried.begin(), now.carried.end(), by_port);
  std::vector<PortSample> next = now.ports;
  next.insert(next.end(), now.carried.begin(), now.carried.end());
  std::sort(next.begin(), next.end(), by_port);
  return next;
}

}  // namespace ibroute::workflow
