// RunJob: one rank's inputs of `ibroute run` and, on rank 0, the report after it.
#include "run_job.hpp"

#include <algorithm>
#include <filesystem>

#include "counter_window.hpp"
#include "export_files.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/validate.hpp"
#include "run_follow.hpp"
#include "text_input.hpp"

namespace ibroute::workflow {

using namespace ibroute::schedule;
using namespace ibroute::runner;

RunJob::RunJob(RunRequest request, int world, int rank, RunHooks hooks)
    : req_(std::move(request)), hooks_(std::move(hooks)) {
  if (req_.counters == "off") counters_why_ = "not asked for (--counters off)";
  load_inputs(world, rank);
  if (!req_.svg.empty() && !fabric_) throw InputError("--svg needs --db: the picture shows the scan's links");
  std::optional<OwnEpoch> first_own;
  if (!req_.follow.empty() && rank != 0) first_own = read_first_slice(rank);
  cfg_ =
      run_config(req_, doc_.schedule, first_own ? first_own->round.starts.back() : slot_starts(doc_.schedule).back());
  if (!req_.follow.empty()) follow_epochs(req_.follow, doc_, cfg_.follow), cfg_.follow.first_own = std::move(first_own);
  if (rank == 0 && fabric_) warning_ = fabric_->incomplete_warning();
  if (rank == 0 && req_.counters != "off") read_counters_before();
}

RunJob::~RunJob() = default;

RankMapping RunJob::mapping() const {
  RankMapping map;
  for (const HostIdentity& h : doc_.identities)
    map.port_guids.push_back(h.port_guid), map.base_lids.push_back(h.base_lid);
  map.placement = placement_;
  return map;
}

// The schedule and the hosts' identities from the one source asked for; the scan of --db beside.
void RunJob::load_inputs(int world, int rank) {
  const RunRequest& o = req_;
  const bool first_rank = rank == 0;
  std::string file = o.schedule_file;
  if ((o.schedule.empty() ? 0 : 1) + (o.schedule_file.empty() ? 0 : 1) + (o.follow.empty() ? 0 : 1) != 1)
    throw InputError("give one of --schedule (with --db), --schedule-file or --follow DIR");
  // Rank 0 stores the run; the other ranks only read (a shared file system: one writer).
  if (!o.db.empty())
    store_ =
        std::make_unique<store::FabricStore>(o.db, first_rank ? store::Access::read_write : store::Access::read_only);
  if (!o.schedule.empty()) {
    if (!store_) throw InputError("--schedule needs --db");
    store::ScheduleInfo info = store_->schedule_info(o.schedule);
    schedule_id_ = info.id;
    doc_.schedule = store_->load_schedule(info.id);
    store::ScanInfo scan = store_->scan(info.scan_id);
    fabric_ = std::make_unique<FabricContext>(*store_, o.scan ? o.scan : std::optional<int64_t>(info.scan_id));
    // The hosts as the schedule's own scan names them: that scan is loaded once (twice only when
    // --scan routes the run over another one).
    doc_.identities = fabric_->scan_id == info.scan_id
                          ? identify_hosts(fabric_->fabric, doc_.schedule.hosts)
                          : identify_hosts(store_->load_fabric(info.scan_id, false), doc_.schedule.hosts);
    doc_.fabric = {info.scan_id, scan.started_at, static_cast<uint8_t>(scan.lmc)};
  } else if (!o.follow.empty()) {
    // The epoch current now, read through its own directory (DIR/current may move on): whole at
    // rank 0, the host table elsewhere (the rank's own slice once it knows its host).
    const uint64_t k = current_epoch_of(o.follow);
    file = (std::filesystem::path(o.follow) / epoch_dir_name(k) / "schedule.json").string();
    doc_ = first_rank ? read_first_epoch(o.follow, k) : read_epoch_table(o.follow, k);
  } else {
    try {
      doc_ = from_json(read_file(file));
    } catch (const InputError& e) {
      throw InputError(file + ": " + e.what());
    }
  }
  if (o.schedule.empty() && store_) {
    fabric_ = std::make_unique<FabricContext>(*store_, o.scan);
    std::vector<std::string> problems;
    doc_.schedule.hosts = resolve_hosts(fabric_->fabric, doc_, problems);
    if (!problems.empty())
      throw InputError(file + " does not fit scan " + std::to_string(fabric_->scan_id) + ": " + problems.front());
  }
  if (!o.placement.empty()) read_placement(world);
}

// --placement FILE: the schedule's host of every MPI rank, a line each.
void RunJob::read_placement(int world) {
  const std::string& path = req_.placement;
  std::vector<int32_t> seen(doc_.schedule.hosts.size(), -1);
  const HostNames names(doc_.identities);
  for (const ListedHost& h : host_lines(read_file(path, kMaxHostList))) {
    const std::string& line = h.name;
    // Resolved by the name itself (a node description is up to 64 bytes: an FQDN and " mlx5_0"),
    // never by its quoted form, which is cut for messages.
    const std::string where = path + " line " + std::to_string(h.line);
    if (line.size() > 256 ||
        std::any_of(line.begin(), line.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
      throw InputError(where + ": '" + shown_text(line) +
                       "' is no host name (control characters, or longer than 256 bytes)");
    const auto r = static_cast<int32_t>(names.rank(line, where));
    if (seen[static_cast<size_t>(r)] >= 0)
      throw InputError(path + ": '" + shown_text(line) + "' given for ranks " +
                       std::to_string(seen[static_cast<size_t>(r)]) + " and " + std::to_string(placement_.size()));
    seen[static_cast<size_t>(r)] = static_cast<int32_t>(placement_.size());
    placement_.push_back(r);
  }
  if (placement_.size() != static_cast<size_t>(world))
    throw InputError(path + " places " + std::to_string(placement_.size()) + " ranks but " + std::to_string(world) +
                     " were started");
}

// A following rank other than 0: its own slice of the first epoch, found by its host (the
// placement's, else its port's GUID), with the epoch's timing; the phases stay rank 0's to read.
OwnEpoch RunJob::read_first_slice(int rank) {
  const uint64_t guid = !placement_.empty()
                            ? doc_.identities[static_cast<size_t>(placement_[static_cast<size_t>(rank)])].port_guid
                            : hooks_.local_port().port_guid;
  Schedule meta;
  OwnEpoch own = read_own_epoch(req_.follow, doc_.epoch, guid, &meta);
  if (!own.has_slice)
    throw InputError("port GUID " + fabric::guid_hex(guid) + " is not a host of epoch " + std::to_string(doc_.epoch) +
                     " (a run on another fabric? else map ranks with --placement)");
  Schedule& s = doc_.schedule;
  s.method = std::move(meta.method), s.bound = meta.bound, s.timing = meta.timing, s.slots = std::move(meta.slots);
  return own;
}

// The first counter snapshot of the run (rank 0), or nothing and why. auto: only where the run's
// own port is InfiniBand (RoCE has no subnet to ask) and without failing the run; on: failures are errors.
void RunJob::read_counters_before() {
  if (!fabric_) {
    counters_why_ = "no scan to read the ports of (--db)";
    return;
  }
  if (req_.counters == "auto") {
    try {
      if (hooks_.local_port().ethernet) {
        counters_why_ = "rank 0's port is RoCE: no InfiniBand subnet whose port counters MADs could read";
        return;
      }
    } catch (const std::exception& e) {
      counters_why_ = std::string("rank 0 has no usable RDMA port (") + e.what() + ")";
      return;
    }
  }
  counters_before_ = live_counters(store_.get(), *fabric_, "run-before", counters_why_);
  if (!counters_before_ && req_.counters == "on") throw InputError("--counters on: " + counters_why_);
}

}  // namespace ibroute::workflow
