#include "epoch_plan.hpp"

#include <unordered_map>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/routes.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/validate.hpp"

namespace ibroute::workflow {

using namespace ibroute::schedule;

FollowedSet followed_set(store::FabricStore& store, const std::string& name) {
  const store::ScheduleInfo info = store.schedule_info(name);
  const Schedule s = store.load_schedule(info.id);
  const fabric::Fabric f = store.load_fabric(info.scan_id, false);
  FollowedSet set;
  set.name = info.name;
  set.hosts = identify_hosts(f, s.hosts);
  set.senders = s.senders, set.receivers = s.receivers;
  set.request.message_size = s.timing.message_size ? s.timing.message_size : set.request.message_size;
  set.request.rate = s.timing.rate;
  return set;
}

EpochPlan plan_epoch(const EvalContext& ctx, const FollowedSet& set, const fabric::ProgressFn& progress) {
  const fabric::Fabric& f = ctx.fabric;
  std::unordered_map<uint64_t, std::pair<int32_t, uint8_t>> by_guid;  // the fabric's working CA ports
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    const fabric::Node& n = f.nodes[i];
    if (n.is_switch()) continue;
    for (int p = 1; p <= n.num_ports(); ++p)
      if (const fabric::Port& port = n.ports[p]; port.connected() && port.base_lid && fabric::port_usable(port))
        by_guid.emplace(port.guid, std::pair{static_cast<int32_t>(i), static_cast<uint8_t>(p)});
  }
  EpochPlan e;
  std::vector<int32_t> rank_of(set.hosts.size(), -1);  // old rank -> new rank
  for (size_t r = 0; r < set.hosts.size(); ++r) {
    const auto it = by_guid.find(set.hosts[r].port_guid);
    if (it == by_guid.end()) {
      e.absent.push_back(set.hosts[r].name);
      continue;
    }
    rank_of[r] = static_cast<int32_t>(e.exchange.hosts.size());
    e.exchange.hosts.push_back(
        {it->second.first, it->second.second, f.nodes[static_cast<size_t>(it->second.first)].desc});
  }
  for (int32_t r : set.senders)
    if (rank_of[static_cast<size_t>(r)] >= 0) e.exchange.senders.push_back(rank_of[static_cast<size_t>(r)]);
  for (int32_t r : set.receivers)
    if (rank_of[static_cast<size_t>(r)] >= 0) e.exchange.receivers.push_back(rank_of[static_cast<size_t>(r)]);
  if (e.exchange.hosts.size() < 2)
    throw InputError(std::to_string(e.exchange.hosts.size()) + " of " + set.name + "'s " +
                     std::to_string(set.hosts.size()) + " hosts are in the fabric: nothing to plan");
  if ((!set.senders.empty() || !set.receivers.empty()) && (e.exchange.senders.empty() || e.exchange.receivers.empty()))
    throw InputError("no " + std::string(e.exchange.senders.empty() ? "sender" : "receiver") + " of " + set.name +
                     " is in the fabric: nothing to plan");
  // Planned as fast as the links allow, then timed at the schedule's own rate where the changed
  // fabric still carries it; where it does not, the epoch runs at the most it carries and says so.
  PlanRequest fastest = set.request;
  fastest.rate = 0;
  fastest.fair_share = false, fastest.baseline = false,
  fastest.lower_bound = false;  // figures the epoch line does not print: time off the budget
  fastest.progress = progress;
  e.outcome = plan_exchange(ctx, e.exchange, fastest);
  e.broken = e.outcome.load.broken;
  if (set.request.rate > 0 && !e.broken) {
    if (e.outcome.fastest_rate >= set.request.rate * (1 - 1e-9)) {
      time_schedule(ctx, e.outcome.load, set.request.message_size, set.request.rate, e.outcome.schedule);
      const Exchange planned{e.outcome.schedule.hosts, e.outcome.schedule.senders, e.outcome.schedule.receivers};
      ExchangeFigures& fig = e.outcome.figures;  // the same hosts: their least times stand, the timing changed
      fig.efficiency = efficiency_of(ctx, fig.least, e.outcome.load, planned.max_sends(), &e.outcome.schedule);
    } else {
      e.rate_lowered = true;
    }
  }
  return e;
}

ScheduleDoc epoch_doc(const fabric::Fabric& f, const store::ScanInfo& scan, const Schedule& s, uint64_t epoch,
                      int64_t from_unix_ns, const std::string& created_at) {
  ScheduleDoc doc;
  doc.schedule = s;
  doc.identities = identify_hosts(f, s.hosts);
  doc.fabric = {scan.id, scan.started_at, static_cast<uint8_t>(scan.lmc)};
  doc.created_at = created_at;
  doc.epoch = epoch, doc.epoch_from_unix_ns = from_unix_ns;
  return doc;
}

}  // namespace ibroute::workflow
