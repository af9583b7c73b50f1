// Round-robin, the baseline a user would run without a plan: in phase k rank i sends to rank
// i + k (an all-to-all), or the two groups' phases, each transfer's DLID by a policy (base: the
// destination's base LID, one path per pair as without LMC). The one construction behind plan's
// baseline, analyze's round-robin patterns, routing's check of its tables and topo's picture, so
// that one quantity reads the same in every command.
#pragma once

#include <cstdint>
#include <vector>

#include "ibroute/schedule/patterns.hpp"
#include "plan_pipeline.hpp"

namespace ibroute::workflow {

struct RoundRobinShape {
  schedule::LidPolicy lids = schedule::LidPolicy::base;
  uint32_t seed = 1;                            // for LidPolicy::random
  const std::vector<size_t>* only = nullptr;    // all-to-all: just these of its phases (k: shift k + 1)
  const std::vector<int32_t>* order = nullptr;  // all-to-all: the ranks in this order (a permutation), else rank order
};

// The phases of round-robin over `x` (ranks as in x.hosts).
std::vector<schedule::Phase> round_robin_phases(const fabric::Fabric& f, const Exchange& x,
                                                const RoundRobinShape& shape = {});

struct RoundRobin {
  schedule::LoadReport load;
  ExchangeFigures figures;  // as exchange_figures gives every exchange's: least times, efficiency
};

struct RoundRobinRequest {
  RoundRobinShape shape;
  bool fair_share = false;                      // the max-min fair estimate of a phase's rates
  const schedule::LeastTimes* least = nullptr;  // the exchange's, where already known (else computed)
  fabric::ProgressFn progress;
};

// Round-robin over `x`, its load and its figures. With `shape.only` the figures are those of the
// phases measured, not of the whole exchange.
RoundRobin measure_round_robin(const schedule::EvalContext& ctx, const Exchange& x, const RoundRobinRequest& r = {});

}  // namespace ibroute::workflow
