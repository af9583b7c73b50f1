// Labels for names drawn side by side. Real fabrics describe their switches alike ("Infiniscale-IV
// Mellanox Technologies (0x0002c9…)") or put the part that tells chassis ASICs apart at the end
// ("QLogic 12800-180 GUID=0x00066a00e8001310 L112"): a label cut at its end shows 79 copies of the
// same text. What sets a name apart from its neighbours is kept; its common head is shortened.
#include <algorithm>
#include <map>
#include <numeric>

#include "ibroute/fabric/dot.hpp"

namespace ibroute::fabric {

namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // one character on the page, three bytes
constexpr size_t kMinKept = 8;                          // the tail kept at least, where no separator starts it
constexpr size_t kSeparatorReach = 8;                   // how far back a kept part may start at a separator

bool separator(char c) {
  return c == ' ' || c == '/' || c == ':' || c == ';' || c == '(' || c == '-' || c == '_' || c == '.' || c == '=';
}

size_t common_prefix(const std::string& a, const std::string& b) {
  return static_cast<size_t>(
      std::mismatch(a.begin(), a.begin() + static_cast<long>(std::min(a.size(), b.size())), b.begin()).first -
      a.begin());
}

// Characters as the page counts them: UTF-8 continuation bytes are not characters.
size_t width(std::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The first `chars` characters, never splitting a UTF-8 sequence.
std::string head(const std::string& s, size_t chars) {
  size_t i = 0;
  for (size_t seen = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && seen++ == chars) break;
  return s.substr(0, i);
}

// Where the part that tells `name` apart starts: after the prefix it shares with its closest
// neighbour, moved back to a separator nearby ("L112", not "2"), and at least kMinKept from the end.
size_t distinct_from(const std::string& name, size_t shared) {
  const size_t start = std::min(shared, name.size());
  for (size_t s = start; s > 0 && start - s < kSeparatorReach; --s)
    if (separator(name[s - 1])) return s;
  return std::min(start, name.size() > kMinKept ? name.size() - kMinKept : 0);
}

}  // namespace

std::vector<std::string> picture_labels(const std::vector<std::string>& names, size_t max_chars) {
  max_chars = std::max<size_t>(max_chars, kMinKept + 4);
  const size_t n = names.size();
  // Each name's longest prefix shared with another: with the names sorted, one of its neighbours.
  std::vector<size_t> order(n), shared(n, 0);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
  for (size_t k = 0; k + 1 < n; ++k) {
    const size_t common = common_prefix(names[order[k]], names[order[k + 1]]);
    shared[order[k]] = std::max(shared[order[k]], common);
    shared[order[k + 1]] = std::max(shared[order[k + 1]], common);
  }
  std::vector<std::string> out(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = names[i];
    if (width(name) <= max_chars) {
      out[i] = name;
      continue;
    }
    const std::string kept = name.substr(distinct_from(name, shared[i]));
    const size_t kept_width = width(kept);
    if (kept_width + 5 <= max_chars)
      out[i] = head(name, max_chars - 1 - kept_width) + std::string(kEllipsis) + kept;
    else
      out[i] = std::string(kEllipsis) + kept.substr(kept.size() - std::min(kept.size(), max_chars - 1));  // its end
  }
  // Two labels still alike (equal names, or a distinct part longer than the room): numbered.
  std::map<std::string, std::vector<size_t>> alike;
  for (size_t i = 0; i < n; ++i) alike[out[i]].push_back(i);
  for (auto& [label, which] : alike) {
    if (which.size() < 2) continue;
    for (size_t k = 0; k < which.size(); ++k) {
      const std::string tag = " #" + std::to_string(k + 1);
      out[which[k]] = head(label, max_chars > tag.size() ? max_chars - tag.size() : 0) + tag;
    }
  }
  return out;
}

}  // namespace ibroute::fabric
