// Traffic patterns to analyze: round-robin all-to-all, random permutations, random bisections,
// each with a policy that picks the DLID (the path) of every transfer without planning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ibroute/fabric/model.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

enum class LidPolicy {
  base,    // always the base LID: one path per pair, as without LMC
  spread,  // offset = source rank mod 2^LMC: a simple LMC use with no knowledge of routes
  random,  // a random offset per transfer
};
std::string to_string(LidPolicy p);
bool lid_policy_from(const std::string& s, LidPolicy& out);

// Fill every transfer's DLID by the policy.
void apply_lid_policy(const fabric::Fabric& f, const std::vector<Host>& hosts, std::vector<Phase>& phases, LidPolicy p,
                      uint32_t seed = 1);

// `count` random permutations, one phase each (fixed points send nothing).
std::vector<Phase> random_permutations(size_t n, int count, uint32_t seed);
// `count` random bisections: hosts split into two random halves, paired, both directions at once.
std::vector<Phase> random_bisections(size_t n, int count, uint32_t seed);

}  // namespace ibroute::schedule
