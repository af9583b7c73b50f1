// ibroute schedules: the schedules a database holds, newest last, with what each was planned for.
#include <cstdio>

#include "commands.hpp"
#include "common.hpp"
#include "options.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

namespace {

struct SchedulesOptions : StoreOptions {};

int run_schedules(const SchedulesOptions& o) {
  store::FabricStore store(o.db, store::Access::read_only);
  const std::vector<store::ScheduleInfo> all = store.schedules();
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const store::ScheduleInfo& s : all)
      list.push_back({{"schedule_id", s.id},
                      {"name", s.name},
                      {"scan_id", s.scan_id},
                      {"created_at", s.created_at},
                      {"method", s.method},
                      {"hosts", s.hosts},
                      {"phases", s.phases},
                      {"bound", s.bound},
                      {"max_load", s.max_load},
                      {"congested", s.congested},
                      {"message_size_bytes", s.timing.message_size},
                      {"rate_bytes_per_s", s.timing.rate},
                      {"slot_s", s.timing.slot_s},
                      {"rate_per_node_gbps", s.timing.rate * 8 / 1e9},
                      {"planning_seconds", s.seconds}});
    print_json({{"db", o.db}, {"schedules", list}});
    return kExitOk;
  }
  if (all.empty()) {
    std::printf("no schedules in %s (ibroute plan makes one)\n", o.db.c_str());
    return kExitOk;
  }
  std::printf("%-4s %-24s %-5s %-20s %6s %7s %5s %6s %10s  %s\n", "id", "name", "scan", "created", "hosts", "phases",
              "worst", "bound", "Gb/s/node", "method");
  // The rate is the plan's per-node rate (bytes each node moves / planned time), as plan prints it.
  for (const store::ScheduleInfo& s : all)
    std::printf("%-4lld %-24s %-5lld %-20s %6lld %7lld %5d %6d %10.1f  %s\n", static_cast<long long>(s.id),
                s.name.c_str(), static_cast<long long>(s.scan_id), s.created_at.c_str(),
                static_cast<long long>(s.hosts), static_cast<long long>(s.phases), s.max_load, s.bound,
                s.timing.rate * 8 / 1e9, s.method.c_str());
  return kExitOk;
}

}  // namespace

Runner setup_schedules(CLI::App& app) {
  auto o = std::make_shared<SchedulesOptions>();
  add_store_command(app, *o, "schedules", kWithJson);
  return [o] { return run_schedules(*o); };
}

}  // namespace ibroute::cli
