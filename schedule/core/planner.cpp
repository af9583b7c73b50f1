// The planner's entry points: the exchange's inputs gathered once, the strategy table run
// (planner/strategies.hpp), the best plan returned with how it was found.
#include "ibroute/schedule/planner.hpp"

#include <array>

#include "ibroute/fabric/enum_names.hpp"
#include "planner/strategies.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

namespace {
constexpr std::array<std::string_view, 3> kMethods{"auto", "free", "structure"};  // in Method's order
static_assert(kMethods.size() == static_cast<size_t>(Method::structure) + 1, "a name for every Method");
}  // namespace

std::string to_string(Method m) { return std::string(fabric::enum_name(kMethods, m)); }

bool method_from(const std::string& s, Method& out) { return fabric::enum_from(kMethods, s, out); }

Schedule plan_all_to_all(const EvalContext& ctx, const std::vector<Host>& hosts, const PlanOptions& opt,
                         PlanStats* stats) {
  return plan_groups(ctx, hosts, {}, {}, opt, stats);
}

Schedule plan_groups(const EvalContext& ctx, const std::vector<Host>& hosts, const std::vector<int32_t>& senders,
                     const std::vector<int32_t>& receivers, const PlanOptions& opt, PlanStats* stats) {
  const std::shared_ptr<const OptionTable> table =
      opt.max_lids ? std::make_shared<const OptionTable>(ctx, hosts, opt.threads, opt.max_lids)
                   : option_table_of(ctx, hosts, opt.threads);
  const Leaves leaves(ctx, hosts);
  PlanInputs inputs(ctx, *table, hosts, leaves, senders, receivers, opt, kPlannerPolicy);
  PlanSearch search(inputs, opt.work_max);
  Candidate best = run_strategies(search, strategy_table());

  Schedule s;
  s.hosts = hosts;
  s.bound = ctx.structure.transfer_bound;
  s.senders = std::move(best.senders), s.receivers = std::move(best.receivers);
  PlanStats st = best.plan.st;
  const PlanStats& t = search.tally;
  st.packing_work = t.packing_work, st.packing_budget = t.packing_budget;
  st.packings = t.packings, st.packings_over_budget = t.packings_over_budget;
  st.phases_compacted = t.phases_compacted, st.compaction_work = t.compaction_work;
  const size_t* used = best.plan.methods_used;
  st.method = used[1] && used[0] ? to_string(inputs.primary) + "+" + to_string(inputs.secondary)
                                 : to_string(used[1] ? Method::structure : Method::free);
  if (!best.how.empty()) st.method += "+" + best.how;
  st.composition = best.composition;
  st.tried = std::move(search.tried);
  st.work_budget = search.work_budget, st.work_spent = search.work_spent;
  s.phases = std::move(best.plan.phases);
  s.method = st.method;
  if (stats) *stats = std::move(st);
  return s;
}

}  // namespace ibroute::schedule
