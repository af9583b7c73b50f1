// RunJob::finish: rank 0's report of a run — its figures, the links measured by the ports'
// counters around it, the repair list — stored, written, drawn, and as text.
#include <sstream>

#include "counter_window.hpp"
#include "diagnosis_report.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/link_measures.hpp"
#include "run_job.hpp"
#include "run_report_write.hpp"
#include "whole_file.hpp"

namespace ibroute::workflow {

using namespace ibroute::schedule;
using namespace ibroute::runner;

namespace {

// The repair list of the run (diagnosis_report.hpp): its pairs over their paths, the scan, the
// ports whose error counters rose — from the run's own figures, not its report read back.
nlohmann::json diagnose(const RunJsonContext& jc, const RunOutcome& out, const std::optional<CounterWindow>& window) {
  const FabricContext& c = *jc.fabric;
  const size_t n = jc.schedule.hosts.size();
  DiagnosisInput in;
  in.plan = &jc.schedule;
  in.pair_gbps = pair_gbps_of(out, n);                 // at any size: the report lists it only up to 2048 ranks
  for (float& g : in.pair_gbps) g = std::max(g, 0.f);  // none arrived: 0, as the report's matrix says it
  if (window) in.errors = error_ports(c.fabric, c.links, *window);
  in.node_send_gbps.assign(n, -1);
  for (const NodeStat& ns : jc.summary.nodes)
    if (ns.rank >= 0 && static_cast<size_t>(ns.rank) < n)
      in.node_send_gbps[static_cast<size_t>(ns.rank)] = ns.send_gbps;
  in.bad = bad_links(jc);
  return diagnosis_json(c, std::move(in));
}

}  // namespace

void RunJob::store_run(const RunSummary& sum, const RunOutcome& out, nlohmann::json& report) {
  store::RunRow row;
  row.schedule_id = schedule_id_;
  if (fabric_) row.scan_id = fabric_->scan_id;
  row.ranks = static_cast<int64_t>(doc_.schedule.hosts.size()), row.rounds = out.rounds_run;
  row.planned = static_cast<int64_t>(sum.planned), row.ok = static_cast<int64_t>(sum.ok);
  row.skipped = static_cast<int64_t>(sum.skipped);
  row.failed = static_cast<int64_t>(sum.failed + sum.timeout + sum.lost);
  row.missing = static_cast<int64_t>(sum.missing_ranks.size());
  row.report_json = report.dump();
  report["run_id"] = store_->save_run(row);
}

RunEnding RunJob::finish(const RunOutcome& out) {
  const Schedule& s = doc_.schedule;
  RunSummary sum =
      summarise(s, *out.merged, out.missing, fabric_ ? &fabric_->fabric : nullptr, fabric_ ? &fabric_->links : nullptr);
  const RunJsonContext jc{s,
                          cfg_.message_size,
                          out.slot_ns,
                          cfg_.find_rate ? out.rounds_run : cfg_.rounds,
                          cfg_.skip_after,
                          cfg_.sl,
                          out,
                          sum,
                          fabric_.get(),
                          cfg_.resync_interval_ns,
                          cfg_.max_skipped_share,
                          cfg_.unreliable,
                          cfg_.slot_per_message,
                          hooks_.status_name};
  RunEnding end;
  end.report = run_report_json(jc);
  // The ports' counters after the run beside the first reading, measured against what the run
  // sent over each link by the scan's routes (a failure now is reported: the run's figures stand).
  std::optional<CounterWindow> window;
  std::optional<fabric::LinkMeasures> measures;
  if (counters_before_)
    if (std::optional<fabric::CounterSnapshot> after =
            live_counters(store_.get(), *fabric_, "run-after", counters_why_)) {
      window = CounterWindow{"around the run (rank 0)", counter_deltas(*counters_before_, *after)};
      std::vector<uint64_t> sent(fabric_->links.size(), 0);
      for (const LinkStat& l : sum.links) sent[static_cast<size_t>(l.link)] = l.bytes;
      measures = fabric::measure_links(window->deltas, fabric_->links, sent, sum.seconds, req_.xmit_wait_tick_ns);
    }
  if (fabric_) {
    end.report["links_measured"] = links_measured_json(fabric_->fabric, fabric_->links, window ? &*window : nullptr,
                                                       measures ? &*measures : nullptr, counters_why_, out.rounds_run,
                                                       sum.seconds, req_.xmit_wait_tick_ns);
    end.report["diagnosis"] = diagnose(jc, out, window);
  }
  if (store_ && !req_.no_store) store_run(sum, out, end.report);
  if (!req_.output.empty()) write_whole_file(req_.output, end.report.dump(1) + "\n");
  std::ostringstream text;
  print_run_summary(jc, text);
  if (end.report.contains("diagnosis")) text << diagnosis_text(end.report["diagnosis"]);
  end.text = text.str();
  end.clean = cfg_.find_rate ? out.best_step < out.steps.size()
                             : sum.ok == sum.planned && sum.corrupt == 0 && sum.missing_ranks.empty();
  end.summary = std::move(sum);  // last: the report, the text and the verdict are made from it
  return end;
}

}  // namespace ibroute::workflow
