// libibroute-peer over the schedule format's own reader (schedule/io): one definition of the
// format, whichever side reads it. A whole file is held decoded (phases × hosts cells: 600 MB at
// 10 000 hosts) — nodes of large fabrics read their per-node slice, which is O(phases).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <system_error>

#include "ibroute/fabric/error.hpp"
#include "ibroute/peer.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/hosts.hpp"

namespace ibroute::peer {

namespace sch = ibroute::schedule;

struct Schedule::Impl {
  sch::ScheduleDoc doc;                // header, hosts, groups; phases only for a whole file
  std::optional<sch::SliceDoc> slice;  // the slice's transfers (its doc moved into `doc`)
  int version = 0;
  std::vector<Host> hosts;
  mutable std::once_flag names_once;  // the name index, built on the first lookup
  mutable std::unique_ptr<sch::HostNames> names;

  std::vector<Transfer> timed(const std::vector<sch::SliceTransfer>& list) const {
    std::vector<Transfer> out;
    out.reserve(list.size());
    const sch::Timing& t = doc.schedule.timing;
    const std::vector<uint32_t>& slots = doc.schedule.slots;  // phases of different lengths (version 3)
    uint64_t start = 0;
    uint32_t at = 0;  // the phase `start` belongs to: transfers come in phase order
    for (const sch::SliceTransfer& x : list) {
      if (slots.empty())
        start = x.phase;
      else
        for (; at < x.phase; ++at) start += slots[at];
      out.push_back(
          {x.phase, static_cast<uint32_t>(x.peer), x.dlid, static_cast<double>(start) * t.slot_s, t.message_size});
    }
    return out;
  }
  void check_rank(uint32_t rank) const {
    if (slice && rank != slice->rank)
      throw Error("this slice is rank " + std::to_string(slice->rank) + "'s; rank " + std::to_string(rank) +
                  " needs its own slice or the whole schedule");
    if (rank >= hosts.size())
      throw Error("rank " + std::to_string(rank) + " out of range (0.." + std::to_string(hosts.size() - 1) + ")");
  }
};

Schedule::Schedule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Schedule::~Schedule() = default;
Schedule::Schedule(Schedule&&) noexcept = default;
Schedule& Schedule::operator=(Schedule&&) noexcept = default;

Schedule Schedule::parse(std::string_view text, const std::string& source) {
  auto impl = std::make_unique<Impl>();
  try {
    sch::AnyScheduleDoc any = sch::any_from_json(text);
    impl->version = any.version;
    if (any.slice) {
      impl->slice = std::move(any.slice);
      impl->doc = std::move(impl->slice->doc);
    } else {
      impl->doc = std::move(*any.whole);
    }
  } catch (const InputError& e) {
    throw Error(source + ": " + e.what());
  }
  for (size_t r = 0; r < impl->doc.identities.size(); ++r) {
    const sch::HostIdentity& h = impl->doc.identities[r];
    impl->hosts.push_back({static_cast<uint32_t>(r), h.name, h.node_guid, h.port_guid, h.base_lid, h.lmc});
  }
  return Schedule(std::move(impl));
}

namespace {
std::string read_whole(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(path + ": no such file");
  // Read in place: a whole schedule of 10 000 hosts is 100 MB, not to be held twice.
  std::ifstream in(path, std::ios::binary);
  std::string text(std::filesystem::file_size(path, ec), '\0');
  if (ec || !in || !in.read(text.data(), static_cast<std::streamsize>(text.size())))
    throw Error(path + ": cannot read");
  return text;
}
}  // namespace

Schedule Schedule::load(const std::string& path) {
  Schedule s = parse(read_whole(path), path);
  Impl& im = *s.impl_;
  if (!im.slice || im.slice->hosts_file.empty()) return s;
  // A compact slice: the peers' identities from the host table beside it, if it is there.
  const std::filesystem::path table = std::filesystem::path(path).parent_path() / im.slice->hosts_file;
  std::error_code ec;
  if (!std::filesystem::exists(table, ec)) return s;
  sch::ScheduleDoc hosts;
  try {
    hosts = sch::hosts_file_from_json(read_whole(table.string()));
  } catch (const InputError& e) {
    throw Error(table.string() + ": " + e.what());
  }
  const size_t me = im.slice->rank;
  if (hosts.identities.size() != im.hosts.size() || hosts.schedule.name != im.doc.schedule.name ||
      hosts.created_at != im.doc.created_at || hosts.identities[me] != im.doc.identities[me])
    throw Error(table.string() + ": the host table of another schedule (not " + im.doc.schedule.name + " of " +
                im.doc.created_at + " with " + std::to_string(im.hosts.size()) + " hosts)");
  im.doc.identities = std::move(hosts.identities);
  for (size_t r = 0; r < im.doc.identities.size(); ++r) {
    const sch::HostIdentity& h = im.doc.identities[r];
    im.hosts[r] = {static_cast<uint32_t>(r), h.name, h.node_guid, h.port_guid, h.base_lid, h.lmc};
  }
  return s;
}

const std::string& Schedule::name() const { return impl_->doc.schedule.name; }
const std::string& Schedule::method() const { return impl_->doc.schedule.method; }
const std::string& Schedule::created_at() const { return impl_->doc.created_at; }
int Schedule::format_version() const { return impl_->version; }
bool Schedule::is_slice() const { return impl_->slice.has_value(); }
std::optional<std::uint32_t> Schedule::own_rank() const {
  if (!impl_->slice) return std::nullopt;
  return static_cast<uint32_t>(impl_->slice->rank);
}
std::uint64_t Schedule::message_size() const { return impl_->doc.schedule.timing.message_size; }
double Schedule::rate() const { return impl_->doc.schedule.timing.rate; }
double Schedule::slot_s() const { return impl_->doc.schedule.timing.slot_s; }
int Schedule::bound() const { return impl_->doc.schedule.bound; }
std::int64_t Schedule::scan_id() const { return impl_->doc.fabric.scan_id; }
std::uint64_t Schedule::epoch() const { return impl_->doc.epoch; }
std::int64_t Schedule::epoch_from_unix_ns() const { return impl_->doc.epoch_from_unix_ns; }
const std::vector<Host>& Schedule::hosts() const { return impl_->hosts; }

std::optional<std::uint32_t> Schedule::rank_of_port_guid(std::uint64_t port_guid) const {
  for (const Host& h : impl_->hosts)
    if (h.port_guid == port_guid && port_guid) return h.rank;  // 0: a compact slice's unnamed peer
  return std::nullopt;
}

std::optional<std::uint32_t> Schedule::rank_of_name(std::string_view name) const {
  if (name.empty()) return std::nullopt;
  // The resolver every ibroute command uses: a hostname, description, host/HCA-2, GUID or LID.
  std::call_once(impl_->names_once, [&] { impl_->names = std::make_unique<sch::HostNames>(impl_->doc.identities); });
  const std::vector<size_t> found = impl_->names->ranks(name);
  if (found.empty()) return std::nullopt;
  if (found.size() > 1)
    throw Error("'" + std::string(name) + "' is ranks " + std::to_string(found[0]) + " and " +
                std::to_string(found[1]) + (found.size() > 2 ? " and more" : "") + "; name the host by port GUID");
  return static_cast<std::uint32_t>(found[0]);
}

std::vector<std::uint32_t> Schedule::ranks_of_names(std::string_view hosts) const {
  std::vector<std::uint32_t> out;
  std::vector<std::string> names;
  try {
    names = sch::host_commas(hosts);
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
  for (const std::string& n : names) {
    const std::optional<std::uint32_t> r = rank_of_name(n);
    if (!r) throw Error("no rank is '" + n + "'");
    out.push_back(*r);
  }
  return out;
}

std::vector<Transfer> Schedule::sends(std::uint32_t rank) const {
  impl_->check_rank(rank);
  if (impl_->slice) return impl_->timed(impl_->slice->sends);
  std::vector<sch::SliceTransfer> list;
  const auto& phases = impl_->doc.schedule.phases;
  for (size_t k = 0; k < phases.size(); ++k)
    if (phases[k].dst[rank] >= 0) list.push_back({static_cast<uint32_t>(k), phases[k].dst[rank], phases[k].dlid[rank]});
  return impl_->timed(list);
}

std::vector<Transfer> Schedule::receives(std::uint32_t rank) const {
  impl_->check_rank(rank);
  if (impl_->slice) return impl_->timed(impl_->slice->receives);
  std::vector<sch::SliceTransfer> list;
  const auto& phases = impl_->doc.schedule.phases;
  for (size_t k = 0; k < phases.size(); ++k)
    for (size_t i = 0; i < phases[k].dst.size(); ++i)
      if (phases[k].dst[i] == static_cast<int32_t>(rank))
        list.push_back({static_cast<uint32_t>(k), static_cast<int32_t>(i), phases[k].dlid[i]});
  return impl_->timed(list);
}

const char* version() { return IBROUTE_VERSION; }

}  // namespace ibroute::peer

namespace ibroute::peer {

std::optional<Epoch> newest_epoch(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::read_symlink(std::filesystem::path(dir) / "current", ec);
  if (ec) return std::nullopt;
  const std::string name = target.filename().string();
  uint64_t k = 0;
  if (name.size() < 7 || name.size() > 21 || name.rfind("epoch-", 0) != 0)
    throw Error(dir + "/current: " + name + " is no epoch");
  for (size_t i = 6; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') throw Error(dir + "/current: " + name + " is no epoch");
    k = k * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return Epoch{k, (std::filesystem::path(dir) / name).string()};
}

std::optional<Schedule> load_epoch(const Epoch& e, std::uint64_t port_guid) {
  const std::filesystem::path table = std::filesystem::path(e.dir) / sch::kHostsFile;
  sch::ScheduleDoc hosts;
  try {
    hosts = sch::hosts_file_from_json(read_whole(table.string()));
  } catch (const InputError& x) {
    throw Error(table.string() + ": " + x.what());
  }
  for (size_t r = 0; r < hosts.identities.size(); ++r) {
    if (hosts.identities[r].port_guid != port_guid) continue;
    char prefix[32];
    std::snprintf(prefix, sizeof prefix, "rank%05zu-", r);
    std::error_code ec;
    for (const std::filesystem::directory_entry& f : std::filesystem::directory_iterator(e.dir, ec))
      if (f.path().filename().string().rfind(prefix, 0) == 0) {
        Schedule s = Schedule::load(f.path().string());
        if (s.epoch() != e.number)
          throw Error(f.path().string() + ": epoch " + std::to_string(s.epoch()) + ", not " + std::to_string(e.number));
        // The slice its name promises, or none a node may send on (sch::check_slice_on_table).
        if (!s.impl_->slice) throw Error(f.path().string() + ": holds no slice, not rank " + std::to_string(r) + "'s");
        try {
          sch::check_slice_on_table(*s.impl_->slice, s.impl_->doc.identities, hosts.identities, r);
        } catch (const InputError& x) {
          throw Error(f.path().string() + ": " + x.what());
        }
        return s;
      }
    throw Error(e.dir + ": no slice of rank " + std::to_string(r) + " (" + hosts.identities[r].name + ")");
  }
  return std::nullopt;
}

std::uint64_t handover_round(std::int64_t from_unix_ns, std::int64_t start_unix_ns, double round_s) {
  // A round of less than a nanosecond (or not a number, or endless) names no round on the clock.
  if (!(round_s >= 1e-9) || !std::isfinite(round_s))
    throw Error("handover_round: a round of " + std::to_string(round_s) + " s (1 ns or more)");
  if (from_unix_ns <= start_unix_ns) return 0;
  // The distance in unsigned arithmetic: from - start may exceed INT64_MAX (start near INT64_MIN).
  const std::uint64_t ns = static_cast<std::uint64_t>(from_unix_ns) - static_cast<std::uint64_t>(start_unix_ns);
  const long double rounds = static_cast<long double>(ns) / (static_cast<long double>(round_s) * 1e9L);
  // Whole nanoseconds on both sides: a round that starts exactly at `from` is the one.
  const long double k = std::ceil(rounds - 1e-12L);
  if (k >= 18446744073709551615.0L)
    throw Error("handover_round: round " + std::to_string(static_cast<double>(k)) + " is beyond 2^64");
  return static_cast<std::uint64_t>(k);
}

}  // namespace ibroute::peer
