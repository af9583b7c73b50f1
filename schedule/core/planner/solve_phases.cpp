#include "solve_phases.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "ibroute/fabric/parallel.hpp"
#include "phase_solver.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

namespace {

// The repair's walk over the plateau (PhaseSolver::walk) up to this many hosts. Beyond, on the
// 10 000-host minhop-like tree, it lowered 14 of 16 probed phases by one level of 16, so that the
// repair was no longer given up: the planner took 23-30 s instead of 16 s, and the given order's
// sample gained enough that the ring it had lost to was no longer taken (0.0624 against 0.0642).
constexpr size_t kMaxWalkHosts = 6000;

// Probing the routing (solve_phases): the phases probed, on exchanges of at least so many phases.
constexpr size_t kProbe = 16, kProbePhasesFrom = 256;

// Where transfers wait: the phases solved between two counts of who waited.
constexpr size_t kWaitBatch = 16;

struct Tally {
  PlanStats st;
  size_t methods_used[2] = {0, 0};
};

// One composition's phases and what solving each needs; `solve` runs on any thread, one phase each.
struct PhaseJobs {
  std::vector<Phase>& phases;
  std::vector<std::vector<Transfer>>& waits;  // per phase, where transfers wait (else empty)
  const Leaves& leaves;
  const PlanOptions& opt;
  Method primary, secondary;
  std::vector<double>& time;
  std::atomic<size_t> solved{0};

  void solve(PhaseSolver& solver, size_t p, Tally& t) {
    Phase& ph = phases[p];
    size_t unroutable = 0;
    std::vector<Transfer>* wait = waits.empty() ? nullptr : &waits[p];
    const int target = wait ? 1 : leaves.phase_bound(ph);
    Phase first = ph;
    const size_t waiting = wait ? wait->size() : 0;
    SolveResult r = solver.solve(first, primary, unroutable, target, wait, p);
    Method used = primary;
    if (phase_slot_count(r.time) > static_cast<uint32_t>(target) && opt.method == Method::automatic &&
        secondary != primary) {
      // Automatic: where the first method misses the target, try the other and keep the better.
      Phase second = ph;
      size_t u2 = 0;
      std::vector<Transfer> wait2;
      SolveResult r2 = solver.solve(second, secondary, u2, target, wait ? &wait2 : nullptr, p);
      const bool better = wait ? wait2.size() < wait->size() - waiting
                               : r2.time < r.time || (r2.time == r.time && r2.overflow < r.overflow);
      if (better) {
        first = std::move(second), r = r2, used = secondary, unroutable = u2;
        if (wait) wait->resize(waiting), wait->insert(wait->end(), wait2.begin(), wait2.end());
      }
    }
    ph = std::move(first);
    time[p] = r.time;
    ++t.methods_used[used == Method::structure];
    t.st.unroutable += unroutable;
    if (r.overflow > 0) ++t.st.phases_over;
    solved.fetch_add(1, std::memory_order_relaxed);
    t.st.worst_overflow = std::max(t.st.worst_overflow, r.overflow);
  }
};

// kProbe phases spread over the composition, one after another, probe the routing: where the
// greedy start beat its own choice in every one where that choice overflowed (at least half of
// them), the other phases start from the greedy alone. Spread, not the first ones: a ring's first
// shifts in topology order stay within the leaves, where the routing's choice fits and proves
// nothing. Decided before the threads, so the schedule is the same for any number of them.
// Returns (greedy only, repair); marks the phases it solved in `probed`.
std::pair<bool, bool> probe_routing(PhaseJobs& jobs, PhaseSolver probe, std::vector<char>& probed, Tally& t) {
  const size_t count = jobs.phases.size();
  for (size_t j = 0; j < kProbe; ++j) {
    const size_t p = j * count / kProbe;
    probed[p] = 1;
    jobs.solve(probe, p, t);
  }
  const bool greedy_only = probe.compared() >= kProbe / 2 && probe.greedy_won() == probe.compared();
  // Where the tables force a worst link above the phases' targets (minhop on three levels: 16
  // where the leaves allow 1), the repair searches nearly every phase in vain: half the planner
  // at 10 000 hosts. Given up where it searched at least half of the probed phases and lowered
  // the worst link of at most one in eight of those (one phase in sixteen a level lower is
  // 0.4 % of the plan's time; the search doubles it). Not where transfers wait (packing): there
  // the repair also decides how many of them wait.
  const bool repair = !jobs.opt.repair_probe || !jobs.waits.empty() || probe.repairs_tried() < kProbe / 2 ||
                      probe.repairs_lowered() * 8 > probe.repairs_tried();
  return {greedy_only, repair};
}

// Every phase not `probed`, on the threads' solvers, in batches of `batch` phases with
// `between(from, to)` after each; the calling thread (0) runs `report` between its phases.
template <class Between, class Report>
void run_batches(PhaseJobs& jobs, std::vector<PhaseSolver>& solvers, std::vector<Tally>& tallies,
                 const std::vector<char>& probed, size_t batch, Between&& between, Report&& report) {
  const size_t count = jobs.phases.size();
  std::atomic<size_t> next{0};
  for (size_t from = 0; from < count; from += batch) {
    const size_t to = std::min(count, from + batch);
    next.store(from);
    run_parallel(static_cast<unsigned>(solvers.size()), [&](unsigned k) {
      for (size_t p; (p = next.fetch_add(1, std::memory_order_relaxed)) < to;) {
        if (k == 0) report_or_stop(next, to, report);
        if (!probed[p]) jobs.solve(solvers[k], p, tallies[k]);
      }
    });
    between(from, to);
  }
}

}  // namespace

Planned solve_phases(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts,
                     const Leaves& leaves, std::vector<Phase> phases, const PlanOptions& opt, Method primary,
                     Method secondary, size_t progress_base, size_t progress_total, std::vector<Transfer>* deferred,
                     const Ring* ring, int slots, bool spread) {
  std::vector<int32_t> visit = ring ? ranks_at(*ring) : std::vector<int32_t>{};
  std::erase(visit, -1);
  Planned out;
  out.time.assign(phases.size(), 0);
  std::vector<std::vector<Transfer>> waits(deferred ? phases.size() : 0);
  if (deferred) {  // phase by phase in order: who waits depends on who waited before
    std::vector<uint32_t> count(hosts.size(), 0);
    for (size_t p = 0; p < phases.size(); ++p) leaves.defer_excess(phases[p], count, waits[p]);
  }
  const unsigned threads =
      std::max(1u, std::min<unsigned>(opt.threads ? opt.threads : std::thread::hardware_concurrency(),
                                      static_cast<unsigned>(std::max<size_t>(1, phases.size() / 16))));
  std::vector<Tally> tallies(threads);
  PhaseJobs jobs{phases, waits, leaves, opt, primary, secondary, out.time};
  if (opt.progress)
    opt.progress("plan", progress_base, progress_total);  // before the threads: either may take every phase
  const bool walk = opt.walk && hosts.size() <= kMaxWalkHosts;
  auto solver_for = [&](bool greedy, bool repairs) {
    PhaseSolver solver(ctx, table, hosts, opt.repair_rounds, slots);
    solver.set_greedy_only(greedy), solver.set_repair(repairs);
    solver.set_walk(walk), solver.set_readmit(opt.readmit && slots > 1), solver.set_visit(ring ? &visit : nullptr);
    return solver;
  };
  std::vector<char> probed(phases.size(), 0);
  const auto [greedy_only, repair] = phases.size() >= kProbePhasesFrom
                                         ? probe_routing(jobs, solver_for(false, true), probed, tallies[0])
                                         : std::pair<bool, bool>{false, true};
  out.st.greedy_start = greedy_only;
  out.st.repair_skipped = !repair;
  std::vector<PhaseSolver> solvers;
  solvers.reserve(threads);
  for (unsigned k = 0; k < threads; ++k) solvers.push_back(solver_for(greedy_only, repair));
  // Spread: the phases go in batches, each phase's solver knows who waited in the batches before
  // (counted in phase order: the same for any number of threads) and lets those who waited least
  // wait (PhaseSolver::set_waits).
  std::vector<uint32_t> sent(deferred && spread ? hosts.size() : 0, 0), received(sent.size(), 0);
  for (PhaseSolver& solver : solvers)
    if (!sent.empty()) solver.set_waits(&sent, &received);
  auto count_waits = [&](size_t from, size_t to) {
    for (size_t p = from; p < to && !sent.empty(); ++p)
      for (const Transfer& t : waits[p]) ++sent[static_cast<size_t>(t.src)], ++received[static_cast<size_t>(t.dst)];
  };
  run_batches(jobs, solvers, tallies, probed, sent.empty() ? phases.size() : kWaitBatch, count_waits, [&] {
    if (opt.progress) opt.progress("plan", progress_base + jobs.solved.load(std::memory_order_relaxed), progress_total);
  });
  for (const Tally& t : tallies) {
    out.st.unroutable += t.st.unroutable;
    out.st.phases_over += t.st.phases_over;
    out.st.worst_overflow = std::max(out.st.worst_overflow, t.st.worst_overflow);
    out.methods_used[0] += t.methods_used[0], out.methods_used[1] += t.methods_used[1];
  }
  out.phases = std::move(phases);
  if (deferred)
    for (auto& w : waits) deferred->insert(deferred->end(), w.begin(), w.end());
  return out;
}

}  // namespace ibroute::schedule
