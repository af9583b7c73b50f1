// ibroute-run: executes a schedule on the fabric, one process per host under srun or mpirun.
// Every rank reads its inputs (workflow::RunJob); all agree before any transfer; the verbs runner
// runs the schedule; rank 0 measures the clocks, gathers the results and reports.
#include <iostream>
#include <optional>

#include "common.hpp"
#include "data_plane.hpp"
#include "ibroute/fabric/dot.hpp"
#include "ibroute/fabric/error.hpp"
#include "run_job.hpp"
#include "run_options.hpp"
#include "verbs.hpp"
#include "whole_file.hpp"

namespace ibroute::cli {

namespace {

// The verbs adapter's answers about this host's own port, asked only where the run needs them.
workflow::RunHooks verbs_hooks(const RunOptions& o) {
  workflow::RunHooks h;
  h.local_port = [device = o.device, port = o.port, gid = o.gid_index] {
    const auto p = runner::verbs::open_port(device, port, gid);
    return workflow::LocalPort{p.port_guid, p.address.ethernet != 0};
  };
  h.status_name = runner::wc_status_name;
  return h;
}

// --svg: the run's transfers per link, drawn over the scan's links.
void draw_run(const std::string& path, const workflow::FabricContext& c, const schedule::Schedule& s,
              const runner::RunSummary& sum) {
  fabric::DotOptions d;
  d.title = "run of " + s.name + ": transfers per link";
  for (const runner::LinkStat& l : sum.links)
    d.load[{c.links.node(l.link), c.links.port(l.link)}] = {static_cast<long>(l.transfers), 0};
  workflow::write_whole_file(path, fabric::render_svg(fabric::to_dot(c.fabric, d)));
}

}  // namespace

int execute_run(const RunOptions& o) {
  runner::Bootstrap mpi(nullptr, nullptr);
  std::optional<workflow::RunJob> job;
  std::string error;
  try {
    job.emplace(o, mpi.size(), mpi.rank(), verbs_hooks(o));
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Everyone stops if anyone cannot read its inputs (a file missing on one node).
  std::vector<std::string> errors = mpi.agree(error);
  // An error every rank knows: each prints it, then they meet once more, so that a launcher that
  // ends the job at the first failed rank cannot cut another rank off before its message.
  auto fail_everywhere = [&](const std::string& msg) {
    std::cerr << "ibroute: " + msg + "\n" << std::flush;
    mpi.agree("");
    return kExitBadInput;
  };
  if (!error.empty()) return fail_everywhere(error);
  for (size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty()) return fail_everywhere("rank " + std::to_string(r) + ": " + errors[r]);

  const schedule::Schedule& s = job->schedule();
  const runner::RunConfig& cfg = job->config();
  if (!job->warning().empty()) std::cerr << "ibroute: warning: " + job->warning() + "\n";
  if (mpi.rank() == 0)
    std::cerr << "run: " << s.hosts.size() << " ranks, " << s.phases.size() << " phases x " << cfg.rounds << " rounds, "
              << cfg.message_size << " B per transfer every " << static_cast<double>(cfg.slot_ns) / 1000 << " us\n";
  runner::RunOutcome out;
  try {
    out = run_schedule(mpi, s, job->mapping(), cfg);
    if (out.root && !out.merged) throw runner::RunError("the run left no results");
  } catch (const runner::RunError& e) {
    if (e.everywhere) return fail_everywhere(e.what());
    throw InputError(e.what());
  }
  if (!out.root) return kExitOk;

  const workflow::RunEnding end = job->finish(out);
  if (!o.svg.empty()) draw_run(o.svg, *job->fabric(), s, end.summary);
  if (o.json)
    print_json(end.report);
  else
    std::cout << end.text;
  if (out.stop_signal) return 128 + out.stop_signal;
  return end.clean ? kExitOk : kExitFailure;
}

}  // namespace ibroute::cli
