// Schedules: hosts, groups and phases (compact shifts or explicit destinations), read back checked.
#include "fabric_store.hpp"

#include <charconv>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <span>

#include "ibroute/fabric/error.hpp"
#include "column_read.hpp"

namespace ibroute::store {

using namespace ibroute::fabric;
using namespace ibroute::store::column;

namespace {
template <class T>
std::vector<uint8_t> to_le_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t b = 0; b < sizeof(T); ++b) out[i * sizeof(T) + b] = static_cast<uint8_t>(static_cast<uint64_t>(v[i]) >> (8 * b));
  return out;
}
template <class T>
std::vector<T> from_le_bytes(std::span<const uint8_t> bytes, size_t n) {
  std::vector<T> out(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = 0;
    for (size_t b = 0; b < sizeof(T); ++b) x |= uint64_t(bytes[i * sizeof(T) + b]) << (8 * b);
    out[i] = static_cast<T>(x);
  }
  return out;
}
constexpr const char* kScheduleCols =
    "SELECT id, name, scan_id, created_at, method, bound, hosts, phases, message_size, rate, slot_s, max_load, congested, "
    "seconds FROM schedule";
ScheduleInfo read_schedule_row(Stmt& q) {
  ScheduleInfo s;
  const auto [id, where] = row_id(q, "schedule");
  s.id = id;
  s.name = text_col(q, 1, where, "name");
  s.scan_id = int_col(q, 2, 0, kMaxCount, where, "scan_id");
  s.created_at = text_col(q, 3, where, "created_at");
  s.method = text_col(q, 4, where, "method");
  s.bound = static_cast<int>(int_col(q, 5, 0, 1 << 30, where, "bound"));
  s.hosts = int_col(q, 6, 0, 1 << 24, where, "hosts");
  s.phases = int_col(q, 7, 1, 1 << 24, where, "phases");
  s.timing = {static_cast<uint64_t>(int_col(q, 8, 0, kMaxCount, where, "message_size")), real_col(q, 9, where, "rate"),
              real_col(q, 10, where, "slot_s")};
  s.max_load = static_cast<int>(int_col(q, 11, 0, 1 << 30, where, "max_load"));
  s.congested = int_col(q, 12, 0, kMaxCount, where, "congested");
  s.seconds = real_col(q, 13, where, "seconds");
  return s;
}
}  // namespace

bool FabricStore::schedule_exists(const std::string& name) {
  Stmt q(db_, "SELECT 1 FROM schedule WHERE name = ?");
  q.bind(1, name);
  return q.step();
}

bool FabricStore::delete_schedule(const std::string& name) {
  Transaction t(db_);
  Stmt id(db_, "SELECT id FROM schedule WHERE name = ?");
  id.bind(1, name);
  if (!id.step()) return false;
  const int64_t old = id.i64(0);
  Stmt used(db_, "SELECT 1 FROM run WHERE schedule_id = ? LIMIT 1");
  used.bind(1, old);
  if (used.step()) return false;  // a stored run names it: kept with the run
  for (const char* sql : {"DELETE FROM schedule_phase WHERE schedule_id = ?", "DELETE FROM schedule_host WHERE schedule_id = ?",
                          "DELETE FROM schedule WHERE id = ?"}) {
    Stmt d(db_, sql);
    d.bind(1, old).run();
  }
  t.commit();
  return true;
}

int64_t FabricStore::save_schedule(int64_t scan, const schedule::Schedule& s, int max_load, int64_t congested,
                                   double seconds, bool replace) {
  Transaction t(db_);
  if (schedule_exists(s.name)) {
    if (!replace) throw InputError("a schedule named '" + s.name + "' exists (choose another --name, or --replace)");
    Stmt id(db_, "SELECT id FROM schedule WHERE name = ?");
    id.bind(1, s.name);
    id.step();
    int64_t old = id.i64(0);
    for (const char* sql : {"DELETE FROM schedule_phase WHERE schedule_id = ?", "DELETE FROM schedule_host WHERE schedule_id = ?",
                            "DELETE FROM schedule WHERE id = ?"}) {
      Stmt d(db_, sql);
      d.bind(1, old).run();
    }
  }
  Stmt ins(db_, "INSERT INTO schedule(name, scan_id, created_at, method, bound, hosts, phases, message_size, rate, slot_s, "
                "max_load, congested, seconds) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, s.name).bind(2, scan).bind(3, now_iso()).bind(4, s.method).bind(5, int64_t{s.bound})
      .bind(6, int64_t(s.hosts.size())).bind(7, int64_t(s.phases.size())).bind(8, int64_t(s.timing.message_size))
      .bind(9, s.timing.rate).bind(10, s.timing.slot_s).bind(11, int64_t{max_load}).bind(12, congested).bind(13, seconds).run();
  const int64_t id = db_.last_insert_rowid();
  Stmt h(db_, "INSERT INTO schedule_host VALUES (?,?,?,?,?)");
  for (size_t r = 0; r < s.hosts.size(); ++r)
    h.bind(1, id).bind(2, int64_t(r)).bind(3, int64_t{s.hosts[r].node}).bind(4, int64_t{s.hosts[r].port}).bind(5, s.hosts[r].name).run();
  if (!s.all_to_all()) {
    Stmt g(db_, "UPDATE schedule SET senders = ?, receivers = ? WHERE id = ?");
    g.bind_blob(1, to_le_bytes(s.senders)).bind_blob(2, to_le_bytes(s.receivers)).bind(3, id).run();
  }
  Stmt p(db_, "INSERT INTO schedule_phase(schedule_id, phase, dst, dlid, shift, slots) VALUES (?,?,?,?,?,?)");
  const std::vector<int32_t> shifts = schedule::shifts_of(s);
  const std::vector<uint16_t> base = shifts.empty() ? std::vector<uint16_t>{} : base_lids(scan, s.hosts, "schedule " + s.name);
  const std::vector<int32_t> senders = schedule::sender_ranks(s);
  for (size_t k = 0; k < s.phases.size(); ++k) {
    const schedule::Phase& ph = s.phases[k];
    p.bind(1, id).bind(2, int64_t(k));
    if (s.slots.empty()) p.bind_null(6);
    else p.bind(6, int64_t{s.slots[k]});
    std::vector<uint8_t> offsets;  // compact: one byte per sender, where every DLID is base + 0..254
    for (size_t i = 0; i < senders.size() && !shifts.empty(); ++i) {
      const int32_t d = ph.dst[senders[i]];
      const int off = d < 0 ? 0xff : int(ph.dlid[senders[i]]) - int(base[d]);
      if (base.empty() || (d >= 0 && (base[d] == 0 || off < 0 || off >= 0xff))) {
        offsets.clear();
        break;
      }
      offsets.push_back(static_cast<uint8_t>(off));
    }
    if (offsets.size() == senders.size() && !senders.empty())
      p.bind_blob(3, {}).bind_blob(4, offsets).bind(5, int64_t{shifts[k]}).run();
    else
      p.bind_blob(3, to_le_bytes(ph.dst)).bind_blob(4, to_le_bytes(ph.dlid)).bind_null(5).run();
  }
  t.commit();
  return id;
}

std::vector<uint16_t> FabricStore::base_lids(int64_t scan, const std::vector<schedule::Host>& hosts, const std::string& where) {
  std::vector<uint16_t> out;
  Stmt q(db_, "SELECT base_lid FROM port WHERE scan_id = ? AND node_idx = ? AND num = ?");
  for (size_t r = 0; r < hosts.size(); ++r) {
    q.bind(1, scan).bind(2, int64_t{hosts[r].node}).bind(3, int64_t{hosts[r].port});
    if (!q.step()) damaged(where + ", host rank " + std::to_string(r), "no port row for node " + std::to_string(hosts[r].node) + " port " + std::to_string(hosts[r].port));
    out.push_back(static_cast<uint16_t>(int_col(q, 0, 0, kMaxLid, where + ", host rank " + std::to_string(r), "base LID")));
    q.reset();
  }
  return out;
}

std::vector<ScheduleInfo> FabricStore::schedules() {
  std::vector<ScheduleInfo> out;
  Stmt q(db_, std::string(kScheduleCols) + " ORDER BY id");
  while (q.step()) out.push_back(read_schedule_row(q));
  return out;
}

ScheduleInfo FabricStore::schedule_info(const std::string& name_or_id) {
  Stmt q(db_, std::string(kScheduleCols) + " WHERE name = ?1 OR (CAST(id AS TEXT) = ?1 AND NOT EXISTS (SELECT 1 FROM schedule WHERE name = ?1))");
  q.bind(1, name_or_id);
  if (!q.step()) {
    // Name the ones there are (the newest few): the user mistyped, or is in the wrong database.
    std::string there;
    const std::vector<ScheduleInfo> all = schedules();
    for (size_t i = all.size(); i-- > 0 && all.size() - i <= 5;) there += (there.empty() ? "" : ", ") + one_line(all[i].name, 40);
    throw InputError("no schedule named '" + one_line(name_or_id, 60) + "' in " + path_ +
                     (all.empty() ? std::string(" (it holds none: ibroute plan makes one)")
                                  : " (it holds " + std::to_string(all.size()) + ": " + there + (all.size() > 5 ? ", ...; ibroute schedules lists them)" : ")")));
  }
  return read_schedule_row(q);
}

std::vector<schedule::Host> FabricStore::load_schedule_hosts(int64_t id, const ScheduleInfo& info) {
  const std::string sched_where = "schedule " + std::to_string(id);
  const std::vector<NodeShape>& nodes = shape(info.scan_id);
  std::vector<schedule::Host> hosts;
  Stmt h(db_, "SELECT rank, node_idx, port, name FROM schedule_host WHERE schedule_id = ? ORDER BY rank");
  h.bind(1, id);
  while (h.step()) {
    std::string where = sched_where + ", host row " + std::to_string(hosts.size() + 1);
    const int64_t rank = int_col(h, 0, 0, kMaxCount, where, "rank");
    if (rank != static_cast<int64_t>(hosts.size()))
      damaged(where, "rank " + std::to_string(rank) + ", expected " + std::to_string(hosts.size()) + " (ranks have gaps)");
    where = sched_where + ", host rank " + std::to_string(rank);
    const int64_t ni = h.type(1) == SQLITE_INTEGER ? h.i64(1) : -1;
    if (ni < 0 || ni >= static_cast<int64_t>(nodes.size()))
      damaged(where, "node " + shown(h, 1) + " of " + std::to_string(nodes.size()) + " in scan " + std::to_string(info.scan_id));
    if (nodes[ni].type == NodeType::sw) damaged(where, "node " + std::to_string(ni) + " is a switch");
    const int64_t port = h.type(2) == SQLITE_INTEGER ? h.i64(2) : -1;
    if (port < 1 || port > nodes[ni].nports)
      damaged(where, "port " + shown(h, 2) + " of node " + std::to_string(ni) + " with " + std::to_string(nodes[ni].nports) + " ports");
    hosts.push_back({static_cast<int32_t>(ni), static_cast<uint8_t>(port), text_col(h, 3, where, "name")});
  }
  if (static_cast<int64_t>(hosts.size()) != info.hosts)
    damaged(sched_where, std::to_string(hosts.size()) + " host rows for " + std::to_string(info.hosts) + " hosts");
  return hosts;
}

schedule::Schedule FabricStore::load_schedule(int64_t id) {
  Stmt q(db_, std::string(kScheduleCols) + " WHERE id = ?");
  q.bind(1, id);
  if (!q.step()) throw InputError("no schedule " + std::to_string(id));
  ScheduleInfo info = read_schedule_row(q);
  const std::string sched_where = "schedule " + std::to_string(id);
  scan(info.scan_id);  // the scan it was planned on exists, and its row is sound
  schedule::Schedule s;
  s.name = info.name;
  s.method = info.method;
  s.bound = info.bound;
  s.timing = info.timing;
  s.hosts = load_schedule_hosts(id, info);
  const size_t n = s.hosts.size();
  {
    Stmt g(db_, "SELECT senders, receivers FROM schedule WHERE id = ?");
    g.bind(1, id);
    g.step();
    if (!g.is_null(0) || !g.is_null(1)) {
      s.senders = group_col(g, 0, n, sched_where, "senders");
      s.receivers = group_col(g, 1, n, sched_where, "receivers");
    }
  }
  const std::vector<int32_t> senders = schedule::sender_ranks(s), receivers = schedule::receiver_ranks(s);
  const size_t m = std::max(senders.size(), receivers.size());
  std::vector<uint16_t> base;  // read when the first compact phase needs it
  Stmt p(db_, "SELECT phase, dst, dlid, shift, slots FROM schedule_phase WHERE schedule_id = ? ORDER BY phase");
  p.bind(1, id);
  while (p.step()) {
    std::string where = sched_where + ", phase row " + std::to_string(s.phases.size() + 1);
    const int64_t k = int_col(p, 0, 0, kMaxCount, where, "phase");
    if (k != static_cast<int64_t>(s.phases.size()))
      damaged(where, "phase " + std::to_string(k) + ", expected " + std::to_string(s.phases.size()) + " (phases have gaps)");
    where = sched_where + ", phase " + std::to_string(k);
    if (!p.is_null(4)) {  // phases of different lengths
      s.slots.resize(s.phases.size(), 1);
      s.slots.push_back(static_cast<uint32_t>(int_col(p, 4, 1, schedule::kMaxPhaseSlots, where, "slots")));
    } else if (!s.slots.empty()) {
      s.slots.push_back(1);
    }
    if (!p.is_null(3) && s.phases.size() >= std::max<size_t>(m, 1)) damaged(where, "more phases than " + std::to_string(m) + " shifts of its groups");
    // Listed phases may be more than the shifts (waiting transfers packed apart), never more than the transfers.
    if (s.phases.size() >= std::max<size_t>(m, senders.size() * receivers.size()))
      damaged(where, "more phases than the " + std::to_string(senders.size() * receivers.size()) + " transfers of its groups");
    if (!p.is_null(3)) {
      const auto shift = static_cast<int32_t>(int_col(p, 3, 0, static_cast<int64_t>(m) - 1, where, "shift"));
      auto offsets = blob_col(p, 2, where, "dlid");
      if (offsets.size() != senders.size())
        damaged(where, "offsets of " + std::to_string(offsets.size()) + " bytes for " + std::to_string(senders.size()) + " senders");
      if (base.empty()) base = base_lids(info.scan_id, s.hosts, sched_where);
      schedule::Phase ph = schedule::group_shift_phase(n, senders, receivers, shift);
      for (size_t i = 0; i < senders.size(); ++i) {
        const int32_t d = ph.dst[senders[i]];
        if ((d < 0) != (offsets[i] == 0xff))
          damaged(where, "sender " + std::to_string(i) + ": offset " + std::to_string(offsets[i]) + " does not match shift " + std::to_string(shift));
        if (d >= 0) ph.dlid[senders[i]] = static_cast<uint16_t>(std::min<int>(base[d] + offsets[i], kMaxLid));
      }
      s.phases.push_back(std::move(ph));
      continue;
    }
    auto dst = blob_col(p, 1, where, "dst");
    if (dst.size() != n * 4) damaged(where, "dst of " + std::to_string(dst.size()) + " bytes for " + std::to_string(n) + " hosts");
    auto dlid = blob_col(p, 2, where, "dlid");
    if (dlid.size() != n * 2) damaged(where, "dlid of " + std::to_string(dlid.size()) + " bytes for " + std::to_string(n) + " hosts");
    schedule::Phase ph{from_le_bytes<int32_t>(dst, n), from_le_bytes<uint16_t>(dlid, n)};
    for (size_t r = 0; r < n; ++r) {
      if (ph.dst[r] < -1 || ph.dst[r] >= static_cast<int64_t>(n))
        damaged(where, "rank " + std::to_string(r) + " sends to rank " + std::to_string(ph.dst[r]) + " of " + std::to_string(n));
      if (ph.dlid[r] > kMaxLid) damaged(where, "rank " + std::to_string(r) + " sends to DLID " + std::to_string(ph.dlid[r]));
    }
    s.phases.push_back(std::move(ph));
  }
  if (static_cast<int64_t>(s.phases.size()) != info.phases)
    damaged(sched_where, std::to_string(s.phases.size()) + " phase rows for " + std::to_string(info.phases) + " phases");
  return s;
}

}  // namespace ibroute::store
