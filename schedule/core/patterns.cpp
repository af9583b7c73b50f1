#include "ibroute/schedule/patterns.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <random>

#include "ibroute/fabric/enum_names.hpp"

namespace ibroute::schedule {

namespace {
constexpr std::array<std::string_view, 3> kLidPolicies{"base", "spread", "random"};  // in LidPolicy's order
static_assert(kLidPolicies.size() == static_cast<size_t>(LidPolicy::random) + 1, "a name for every LidPolicy");
}  // namespace

std::string to_string(LidPolicy p) { return std::string(fabric::enum_name(kLidPolicies, p)); }

bool lid_policy_from(const std::string& s, LidPolicy& out) { return fabric::enum_from(kLidPolicies, s, out); }

void apply_lid_policy(const fabric::Fabric& f, const std::vector<Host>& hosts, std::vector<Phase>& phases, LidPolicy p,
                      uint32_t seed) {
  std::mt19937 rng(seed);
  for (Phase& ph : phases)
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      const fabric::Port& d = f.nodes[hosts[ph.dst[i]].node].ports[hosts[ph.dst[i]].port];
      uint32_t n = d.lid_count(), off = 0;
      if (p == LidPolicy::spread) off = static_cast<uint32_t>(i) % n;
      if (p == LidPolicy::random) off = rng() % n;
      ph.dlid[i] = static_cast<uint16_t>(d.base_lid + off);
    }
}

std::vector<Phase> random_permutations(size_t n, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Phase> out;
  std::vector<int32_t> perm(n);
  for (int c = 0; c < count; ++c) {
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Phase p{perm, std::vector<uint16_t>(n, 0)};
    for (size_t i = 0; i < n; ++i)
      if (p.dst[i] == static_cast<int32_t>(i)) p.dst[i] = -1;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Phase> random_bisections(size_t n, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Phase> out;
  std::vector<int32_t> order(n);
  for (int c = 0; c < count; ++c) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    Phase p{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)};
    for (size_t k = 0; k + 1 < n; k += 2) {
      p.dst[order[k]] = order[k + 1];
      p.dst[order[k + 1]] = order[k];
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ibroute::schedule
