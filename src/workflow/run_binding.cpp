#include "run_binding.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "fabric_store.hpp"
#include "ibroute/fabric/error.hpp"

namespace ibroute::workflow {

namespace {

[[noreturn]] void refuse(const std::string& source, const std::string& at, const std::string& what) {
  throw InputError(source + ": " + at + ": " + what);
}

// Each rank's host port GUID in the fabric its schedule was planned on.
std::vector<uint64_t> port_guids(const fabric::Fabric& f, const schedule::Schedule& s) {
  std::vector<uint64_t> out;
  for (const schedule::Host& h : s.hosts)
    out.push_back(h.node >= 0 && static_cast<size_t>(h.node) < f.nodes.size() && h.port < f.nodes[static_cast<size_t>(h.node)].ports.size()
                      ? f.nodes[static_cast<size_t>(h.node)].ports[h.port].guid
                      : 0);
  return out;
}

}  // namespace

RunBinding bind_run_report(store::FabricStore& store, const FabricContext& c, const RunReportInput& run, const std::string& source) {
  if (!store.schedule_exists(run.schedule))
    refuse(source, "/schedule", "\"" + run.schedule + "\" is no schedule of this database: the report of a run planned elsewhere");
  const store::ScheduleInfo info = store.schedule_info(run.schedule);
  RunBinding b;
  b.schedule = store.load_schedule(info.id);
  b.scan_id = info.scan_id;
  const size_t n = b.schedule.hosts.size();
  if (run.ranks != n)
    refuse(source, "/ranks", std::to_string(run.ranks) + " ranks, but schedule " + run.schedule + " has " + std::to_string(n) + " hosts");
  const std::vector<uint64_t> guids =
      port_guids(info.scan_id == c.scan_id ? c.fabric : store.load_fabric(info.scan_id, false), b.schedule);
  // A run reads its routes from the schedule's scan, or from the scan given (run --scan): one of
  // this database's scans, of the same fabric.
  if (run.scan_id && *run.scan_id != info.scan_id) {
    const std::vector<store::ScanInfo> scans = store.scans();
    const bool stored = std::any_of(scans.begin(), scans.end(), [&](const store::ScanInfo& x) { return x.id == *run.scan_id; });
    if (!stored) refuse(source, "/scan_id", "scan " + std::to_string(*run.scan_id) + " is no scan of this database (schedule " + run.schedule +
                                                " was planned on scan " + std::to_string(info.scan_id) + "): the report of another fabric's run");
    const fabric::Fabric theirs = store.load_fabric(*run.scan_id, false);
    std::set<uint64_t> ports;
    for (const fabric::Node& node : theirs.nodes)
      for (const fabric::Port& p : node.ports) ports.insert(p.guid);
    for (size_t r = 0; r < n; ++r)
      if (!ports.count(guids[r]))
        refuse(source, "/scan_id", "scan " + std::to_string(*run.scan_id) + " has no port " + fabric::guid_hex(guids[r]) + " of " +
                                       b.schedule.hosts[r].name + ", rank " + std::to_string(r) + " of schedule " + run.schedule + ": another fabric");
  }
  for (size_t r = 0; r < n && !run.port_guids.empty(); ++r)
    if (run.port_guids[r] != guids[r])
      refuse(source, "/nodes (rank " + std::to_string(r) + ")",
             "ran on port " + fabric::guid_hex(run.port_guids[r]) + ", but rank " + std::to_string(r) + " of schedule " + run.schedule + " is " +
                 b.schedule.hosts[r].name + " (port " + fabric::guid_hex(guids[r]) + ")");
  for (size_t r = 0; r < n; ++r)
    if (!run.hosts[r].empty() && run.hosts[r] != b.schedule.hosts[r].name)
      refuse(source, "/nodes (rank " + std::to_string(r) + ")",
             "host \"" + run.hosts[r] + "\", but rank " + std::to_string(r) + " of schedule " + run.schedule + " is " + b.schedule.hosts[r].name);
  // The judged scan must hold every host of the schedule's scan, by port GUID: the same fabric.
  if (info.scan_id != c.scan_id) {
    std::map<uint64_t, std::pair<int32_t, uint8_t>> where;
    for (size_t i = 0; i < c.fabric.nodes.size(); ++i)
      if (!c.fabric.nodes[i].is_switch())
        for (size_t p = 1; p < c.fabric.nodes[i].ports.size(); ++p) where.emplace(c.fabric.nodes[i].ports[p].guid, std::pair{static_cast<int32_t>(i), static_cast<uint8_t>(p)});
    for (size_t r = 0; r < n; ++r) {
      const auto it = where.find(guids[r]);
      if (it == where.end())
        refuse(source, "/schedule", "schedule " + run.schedule + " was planned on scan " + std::to_string(info.scan_id) + ", whose host " +
                                        b.schedule.hosts[r].name + " (port " + fabric::guid_hex(guids[r]) + ") scan " + std::to_string(c.scan_id) +
                                        " does not have: another fabric (accept --scan " + std::to_string(info.scan_id) + " judges it on its own)");
      b.schedule.hosts[r].node = it->second.first, b.schedule.hosts[r].port = it->second.second;
    }
  }
  // Every DLID the report lists belongs to its destination (by rank, or by host name in not_ok).
  std::map<std::string, int32_t> rank_of;
  for (size_t r = 0; r < n; ++r) rank_of.emplace(b.schedule.hosts[r].name, static_cast<int32_t>(r));
  for (const RunReportInput::PathRow& x : run.dlids) {
    const std::string row = x.where.substr(0, x.where.rfind('/'));
    auto named = [&](const std::string& name, const char* key) {
      const auto it = rank_of.find(name);
      if (it == rank_of.end()) refuse(source, row + "/" + key, "\"" + name + "\" is no host of schedule " + run.schedule);
      return it->second;
    };
    const int32_t dst = x.dst >= 0 ? x.dst : named(x.dst_name, "dst");
    if (x.src < 0) named(x.src_name, "src");
    const schedule::Host& h = b.schedule.hosts[static_cast<size_t>(dst)];
    const fabric::Port& port = c.fabric.nodes[static_cast<size_t>(h.node)].ports[h.port];
    if (x.dlid != 0 && !port.owns_lid(x.dlid))  // 0: RoCE, no LIDs
      refuse(source, x.where, "DLID " + std::to_string(x.dlid) + " is no LID of " + h.name + " (" + std::to_string(port.base_lid) +
                                  (port.lmc ? ".." + std::to_string(port.base_lid + port.lid_count() - 1) : std::string()) + ")");
  }
  if (!run.scan_id && run.port_guids.empty())
    b.warning = source + ": names no scan_id and no nodes[].port_guid (an older ibroute run): bound to schedule " + run.schedule +
                " by its name and its " + std::to_string(n) + " ranks only";
  return b;
}

}  // namespace ibroute::workflow
