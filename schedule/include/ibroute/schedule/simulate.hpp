// Playing a schedule on a fabric without hardware: in every phase the transfers share the links
// of their routes max-min fairly (progressive filling over the links' rates); a phase lasts until
// its slowest transfer is done. Gives the per-pair bandwidth (the mpiGraph matrix) and the rate
// each node sustains.
#pragma once

#include <cstdint>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

struct Simulation {
  size_t n = 0;
  std::vector<float>
      pair_gbps;  // n x n, row = source rank; 0 where no transfer (or broken); a pair sent twice: its slowest
  std::vector<double> phase_seconds;  // per phase
  double seconds = 0;                 // all phases, back to back
  double node_bytes_per_s = 0;        // what the busiest sender sends per second over the whole schedule
  size_t broken = 0;                  // transfers without a working route
};

// message_size: bytes per transfer. A timed schedule's phases last at least their planned length
// (node_bytes_per_s is then its planned_rate where every transfer fits its phase); its rate caps
// each pair's figure.
// `known`: evaluate() of s.phases, where the caller has it. A phase no link of which carries more
// than its rate allows at the host link rate (phase_time 1), in a schedule that loses no transfer,
// with no transfer between two hosts whose links are faster than the host rate, is then played
// without walking its paths: every link there shares out at least the host rate per transfer, so
// the fill's first level is the host rate, and it freezes every transfer there (simulate.cpp) —
// what the walk finds too (a congestion-free plan at 10 000 hosts: 10^8 paths not read again).
Simulation simulate(const EvalContext& ctx, const Schedule& s, uint64_t message_size,
                    const LoadReport* known = nullptr);

}  // namespace ibroute::schedule
