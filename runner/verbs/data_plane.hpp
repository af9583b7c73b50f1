// One rank of `ibroute run`: connects to its peers (MPI carries the connection data), measures
// the clock offsets (rank 0 against everyone, by verbs round trips) and keeps its own clock
// model current during the run, posts every transfer at its planned time on the common clock,
// skips by the skip rule, drains, and sends its aggregated results to rank 0.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bootstrap.hpp"
#include "ibroute/runner/epoch_follow.hpp"
#include "ibroute/runner/rate_search.hpp"
#include "ibroute/runner/run_config.hpp"
#include "ibroute/runner/run_outcome.hpp"
#include "ibroute/runner/run_report.hpp"
#include "ibroute/runner/run_stats.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::runner {

// `everywhere`: every rank throws it at the same point (an agreed error), so the ranks may meet
// once more after printing it; otherwise only this rank knows.
struct RunError : std::runtime_error {
  explicit RunError(const std::string& what, bool everywhere = false)
      : std::runtime_error(what), everywhere(everywhere) {}
  bool everywhere;
};

RunOutcome run_schedule(Bootstrap& mpi, const schedule::Schedule& s, const RankMapping& map, const RunConfig& cfg);

// SIGINT, SIGTERM and SIGUSR1 (which mpirun forwards to every rank) end a run at a round
// boundary instead of killing it: rank 0 picks the round and tells every rank. Installed for
// the duration of run_schedule; a second signal kills as usual.

const char* wc_status_name(int status);

}  // namespace ibroute::runner
