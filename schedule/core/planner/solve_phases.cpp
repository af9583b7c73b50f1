#include "solve_phases.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

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

}  // namespace

Planned solve_phases(const EvalContext& ctx, const OptionTable& table, const std::vector<Host>& hosts, const Leaves& leaves,
                     std::vector<Phase> phases, const PlanOptions& opt, Method primary, Method secondary, size_t progress_base,
                     size_t progress_total, std::vector<Transfer>* deferred, const Ring* ring, int slots) {
  std::vector<int32_t> visit = ring ? ranks_at(*ring) : std::vector<int32_t>{};
  std::erase(visit, -1);
  Planned out;
  out.time.assign(phases.size(), 0);
  std::vector<std::vector<Transfer>> waits(deferred ? phases.size() : 0);
  if (deferred) {  // phase by phase in order: who waits depends on who waited before
    std::vector<uint32_t> count(hosts.size(), 0);
    for (size_t p = 0; p < phases.size(); ++p) leaves.defer_excess(phases[p], count, waits[p]);
  }
  struct Tally {
    PlanStats st;
    size_t methods_used[2] = {0, 0};
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(opt.threads ? opt.threads : std::thread::hardware_concurrency(),
                                                           static_cast<unsigned>(std::max<size_t>(1, phases.size() / 16))));
  std::vector<Tally> tallies(threads);
  std::atomic<size_t> next{0};
  std::atomic<size_t> solved{0};
  auto one = [&](PhaseSolver& solver, size_t p, Tally& t) {
    Phase& ph = phases[p];
    size_t unroutable = 0;
    std::vector<Transfer>* wait = deferred ? &waits[p] : nullptr;
    const int target = wait ? 1 : leaves.phase_bound(ph);
    Phase first = ph;
    const size_t waiting = wait ? wait->size() : 0;
    SolveResult r = solver.solve(first, primary, unroutable, target, wait, p);
    Method used = primary;
    if (phase_slot_count(r.time) > static_cast<uint32_t>(target) && opt.method == Method::automatic && secondary != primary) {
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
    out.time[p] = r.time;
    ++t.methods_used[used == Method::structure];
    t.st.unroutable += unroutable;
    if (r.overflow > 0) ++t.st.phases_over;
    solved.fetch_add(1, std::memory_order_relaxed);
    t.st.worst_overflow = std::max(t.st.worst_overflow, r.overflow);
  };
  if (opt.progress) opt.progress("plan", progress_base, progress_total);  // before the threads: either may take every phase
  // kProbe phases spread over the composition, one after another, probe the routing: where the
  // greedy start beat its own choice in every one where that choice overflowed (at least half of
  // them), the other phases start from the greedy alone. Spread, not the first ones: a ring's first
  // shifts in topology order stay within the leaves, where the routing's choice fits and proves
  // nothing. Decided before the threads, so the schedule is the same for any number of them.
  bool greedy_only = false, repair = true;
  const bool walk = opt.walk && hosts.size() <= kMaxWalkHosts;
  std::vector<char> probed(phases.size(), 0);
  auto solver_for = [&](bool greedy, bool repairs) {
    PhaseSolver solver(ctx, table, hosts, opt.repair_rounds, slots);
    solver.set_greedy_only(greedy), solver.set_repair(repairs);
    solver.set_walk(walk), solver.set_readmit(opt.readmit && slots > 1), solver.set_visit(ring ? &visit : nullptr);
    return solver;
  };
  if (phases.size() >= kProbePhasesFrom) {
    PhaseSolver probe = solver_for(false, true);
    for (size_t j = 0; j < kProbe; ++j) {
      const size_t p = j * phases.size() / kProbe;
      probed[p] = 1;
      one(probe, p, tallies[0]);
    }
    greedy_only = probe.compared() >= kProbe / 2 && probe.greedy_won() == probe.compared();
    // Where the tables force a worst link above the phases' targets (minhop on three levels: 16
    // where the leaves allow 1), the repair searches nearly every phase in vain: half the planner
    // at 10 000 hosts. Given up where it searched at least half of the probed phases and lowered
    // the worst link of at most one in eight of those (one phase in sixteen a level lower is
    // 0.4 % of the plan's time; the search doubles it). Not where transfers wait (packing): there
    // the repair also decides how many of them wait.
    repair = !opt.repair_probe || deferred || probe.repairs_tried() < kProbe / 2 || probe.repairs_lowered() * 8 > probe.repairs_tried();
  }
  out.st.greedy_start = greedy_only;
  out.st.repair_skipped = !repair;
  run_parallel(threads, [&](unsigned k) {  // the calling thread reports progress between its phases
    PhaseSolver solver = solver_for(greedy_only, repair);
    for (size_t p; (p = next.fetch_add(1, std::memory_order_relaxed)) < phases.size();) {
      if (k == 0 && opt.progress)
        report_or_stop(next, phases.size(), [&] { opt.progress("plan", progress_base + solved.load(std::memory_order_relaxed), progress_total); });
      if (!probed[p]) one(solver, p, tallies[k]);
    }
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
