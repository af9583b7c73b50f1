// Fork-join on plain threads, for the cores' data-parallel loops (route tables, evaluation,
// planning). A throw escaping a std::thread ends the process; a bad_alloc on a fabric too big for
// the machine must instead reach the command's one-line error, so it is carried to the caller.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ibroute::fabric {

// Runs job(t) for every t in [0, threads): t = 0 on the calling thread, the others each on a
// thread of its own; returns when all have ended. Rethrows the first exception any job threw (a
// thread that cannot be started counts as one) after every started job has ended.
template <class Job>
void run_parallel(unsigned threads, Job&& job) {
  std::exception_ptr first;
  std::mutex guard;
  auto keep = [&](std::exception_ptr e) {
    std::lock_guard lock(guard);
    if (!first) first = e;
  };
  auto guarded = [&](unsigned t) {
    try {
      job(t);
    } catch (...) {
      keep(std::current_exception());
    }
  };
  std::vector<std::thread> pool;
  try {
    pool.reserve(threads > 0 ? threads - 1 : 0);
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(guarded, t);
  } catch (...) {
    keep(std::current_exception());
  }
  guarded(0);
  for (std::thread& th : pool) th.join();
  if (first) std::rethrow_exception(first);
}

// For the reporting thread of a loop whose threads take items from `next` up to `end`: calls
// report(); what it throws (a caller's way to stop the work) first moves `next` past the end, so
// that the other threads stop at their next item instead of finishing the loop alone.
template <class Report>
void report_or_stop(std::atomic<size_t>& next, size_t end, Report&& report) {
  try {
    report();
  } catch (...) {
    next.store(end);
    throw;
  }
}

}  // namespace ibroute::fabric
