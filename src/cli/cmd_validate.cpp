// ibroute validate: check a schedule file against a scan (hosts, all-to-all, DLIDs, routes, load).
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/validate.hpp"
#include "options.hpp"
#include "plan_pipeline.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::schedule;

namespace {

struct ValidateOptions : StoreOptions {
  std::string file;
};

int run_validate(const ValidateOptions& o) {
  Progress progress;  // on a terminal: reading, then the load evaluation phase by phase
  progress("reading the schedule", 0, 1);
  const std::string text = read_file(o.file);
  ScheduleDoc doc;
  try {
    doc = from_json(text);
  } catch (const InputError& e) {
    throw InputError(o.file + ": " + e.what());
  }
  store::FabricStore store(o.db, store::Access::read_only);
  ScanContext c(store, o.scan);
  c.require_routes("validating a schedule");
  Validation v = validate(c.eval, doc, [&](std::string_view stage, size_t d, size_t t) { progress(stage, d, t); });
  progress.finish();
  const double rate = planned_rate(doc.schedule);  // bytes each node moves / planned time, as plan prints it
  // The same figures as plan's, over this scan, where the hosts matched (plan_pipeline.hpp).
  std::optional<ExchangeFigures> figures;
  std::optional<RoutingAdvice> advice;
  std::vector<std::string> unmatched;
  if (v.load.phases) {
    const Exchange x{resolve_hosts(c.fabric, doc, unmatched), doc.schedule.senders, doc.schedule.receivers};
    if (unmatched.empty()) figures = exchange_figures(c.eval, x, v.load, &doc.schedule);
    if (figures) advice = advise_if_limited(c, figures->efficiency, x.hosts);
  }
  if (o.json) {
    nlohmann::json j{{"file", o.file},
                     {"schedule", doc.schedule.name},
                     {"planned_for_scan", doc.fabric.scan_id},
                     {"scan_id", c.scan_id},
                     {"ok", v.ok()},
                     {"rate_per_node_gbps", rate * 8 / 1e9},
                     {"efficiency", figures ? efficiency_json(figures->efficiency, advice ? &*advice : nullptr)
                                            : nlohmann::json(nullptr)},
                     {"checks", nlohmann::json::array()}};
    for (const Check& ch : v.checks) j["checks"].push_back({{"check", ch.name}, {"ok", ch.ok}, {"detail", ch.detail}});
    print_json(j);
  } else {
    std::printf("schedule '%s' (planned for scan %lld) against scan %lld:\n", doc.schedule.name.c_str(),
                static_cast<long long>(doc.fabric.scan_id), static_cast<long long>(c.scan_id));
    for (const Check& ch : v.checks)
      std::printf("  %-4s %-11s %s\n", ch.ok ? "ok" : "FAIL", ch.name.c_str(), ch.detail.c_str());
    std::printf("  rate             %s per node as timed (%llu-byte messages, a round in %.3g ms)\n",
                format_rate(rate).c_str(), static_cast<unsigned long long>(doc.schedule.timing.message_size),
                planned_seconds(doc.schedule) * 1e3);
    if (figures) std::fputs(efficiency_text(figures->efficiency, advice ? &*advice : nullptr).c_str(), stdout);
  }
  if (v.ok()) return kExitOk;
  for (const Check& ch : v.checks)
    if (!ch.ok) {
      std::cerr << "ibroute: " << o.file << " does not fit scan " << c.scan_id << ": " << ch.name << ": " << ch.detail
                << "\n";
      break;
    }
  return kExitFailure;
}

}  // namespace

Runner setup_validate(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  auto* c = add_store_command(app, *o, "validate", kWithJson);
  c->add_option("--scan", o->scan, "scan id to check against (default: the newest)");
  c->add_option("file", o->file, "schedule file (JSON, as ibroute export writes it)")->required();
  return [o] { return run_validate(*o); };
}

}  // namespace ibroute::cli
