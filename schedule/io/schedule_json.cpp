#include <algorithm>
#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/schedule/format.hpp"
#include "json_input.hpp"

namespace ibroute::schedule {

using nlohmann::json;

namespace {

json fabric_json(const FabricRef& f) {
  return {{"scan_id", f.scan_id}, {"scan_started_at", f.scan_started_at}, {"lmc", f.lmc}};
}
json timing_json(const Schedule& s) {
  const Timing& t = s.timing;
  json j{{"message_size", t.message_size}, {"rate", t.rate}, {"slot_s", t.slot_s}};
  if (!s.slots.empty()) j["phase_slots"] = s.slots;
  return j;
}
json host_json(const HostIdentity& h, size_t rank) {
  return {{"rank", rank},
          {"name", h.name},
          {"node_guid", fabric::guid_hex(h.node_guid)},
          {"port_guid", fabric::guid_hex(h.port_guid)},
          {"base_lid", h.base_lid},
          {"lmc", h.lmc}};
}
json hosts_json(const ScheduleDoc& doc) {
  json hosts = json::array();
  for (size_t r = 0; r < doc.identities.size(); ++r) hosts.push_back(host_json(doc.identities[r], r));
  return hosts;
}
json header(const ScheduleDoc& doc, const char* format) {
  const Schedule& s = doc.schedule;
  json j{{"format", format},
         {"version", format_version_for(s)},
         {"name", s.name},
         {"created_at", doc.created_at},
         {"method", s.method},
         {"bound", s.bound},
         {"fabric", fabric_json(doc.fabric)},
         {"timing", timing_json(s)}};
  if (doc.epoch) j["epoch"] = doc.epoch, j["epoch_from_unix_ns"] = doc.epoch_from_unix_ns;
  return j;
}

// Reading: every value is checked where it is read, and every failure is an InputError naming the
// JSON pointer of the value (RFC 6901), e.g. "/phases/3/7/dlid: 65550 is not a unicast LID
// (1..49151)". nlohmann's own type_error/out_of_range never reach the caller.
constexpr int64_t kMaxUnicastLid = 0xBFFF;

using json_input::At;
using json_input::fail;
using json_input::shown;

// Offsets are hex digits: one per transfer while every LMC is at most 4, else two.
int offset_digits(const ScheduleDoc& doc) {
  for (const HostIdentity& h : doc.identities)
    if (h.lmc > 4) return 2;
  return 1;
}
// Every DLID is one of its destination's LIDs (else the compact form cannot say it).
bool offsets_fit(const ScheduleDoc& doc) {
  for (const Phase& ph : doc.schedule.phases)
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      const HostIdentity& d = doc.identities[ph.dst[i]];
      if (ph.dlid[i] < d.base_lid || ph.dlid[i] - d.base_lid >= (1 << d.lmc)) return false;
    }
  return true;
}
void append_hex(std::string& out, int v, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (digits == 2) out += kHex[(v >> 4) & 15];
  out += kHex[v & 15];
}
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// In memory a phase has one entry per host: refuse a file whose phases take far more memory than
// it lists transfers (a small file must not claim gigabytes; the pattern bounds the phases).
void check_claim(const std::string& at, size_t n, size_t phases, size_t listed) {
  const size_t cells = n * phases;
  if (cells > (size_t{1} << 20) && listed * 64 < cells)
    fail(at, std::to_string(phases) + " phases of " + std::to_string(n) + " hosts list only " + std::to_string(listed) +
                 " transfers (" + std::to_string(cells) + " cells in memory)");
}

// A group: distinct ranks of 0..n-1, at least one.
std::vector<int32_t> read_group(const At& a, size_t n) {
  a.list();
  if (a.size() == 0 || a.size() > n)
    fail(a.path, std::to_string(a.size()) + " ranks; a group has 1.." + std::to_string(n));
  std::vector<int32_t> out;
  std::vector<char> seen(n, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    const auto r =
        static_cast<int32_t>(a[i].integer(0, static_cast<int64_t>(n) - 1, "a rank (0.." + std::to_string(n - 1) + ")"));
    if (seen[r]++) fail(a[i].path, "rank " + std::to_string(r) + " is listed twice");
    out.push_back(r);
  }
  return out;
}

// The largest ring a file may place an all-to-all's N ranks on: every shift of it still has at
// least 3N/4 - 16 transfers, so memory follows what the file lists.
size_t max_ring(size_t n) { return n + n / 4 + 16; }

// A ring's places (encoding "ring"): its size and one distinct place per rank.
Ring read_ring(const At& ph_at, size_t n) {
  Ring r;
  r.size = static_cast<size_t>(
      ph_at["size"].integer(static_cast<int64_t>(n), static_cast<int64_t>(max_ring(n)),
                            "ring places (" + std::to_string(n) + ".." + std::to_string(max_ring(n)) + ")"));
  const At places = ph_at["places"].list();
  if (places.size() != n)
    fail(places.path, std::to_string(places.size()) + " places for " + std::to_string(n) + " ranks");
  std::vector<char> taken(r.size, 0);
  for (size_t i = 0; i < n; ++i) {
    const auto q = static_cast<uint32_t>(
        places[i].integer(0, static_cast<int64_t>(r.size) - 1, "a place (0.." + std::to_string(r.size - 1) + ")"));
    if (taken[q]++) fail(places[i].path, "place " + std::to_string(q) + " is held twice");
    r.place.push_back(q);
  }
  return r;
}

// The compact forms: per phase its shift and one offset per sender, checked against the groups
// ("shift") or, for an all-to-all from version 3, against the ring its shifts run over ("ring").
void read_shift_phases(const At& ph_at, int64_t version, ScheduleDoc& doc) {
  Schedule& s = doc.schedule;
  const size_t n = s.hosts.size();
  const std::vector<int32_t> snd = sender_ranks(s), rcv = receiver_ranks(s);
  const std::string encoding = ph_at["encoding"].text();
  const bool on_ring = encoding == "ring" && version >= 3 && s.all_to_all();
  if (encoding != "shift" && !on_ring)
    fail(ph_at.path + "/encoding",
         encoding == "ring" ? "\"ring\" is an all-to-all's encoding from version 3"
                            : "unknown phase encoding (this ibroute reads \"shift\" and, from version 3, \"ring\")");
  const Ring ring = on_ring ? read_ring(ph_at, n) : Ring{};
  const std::vector<int32_t> at = on_ring ? ranks_at(ring) : std::vector<int32_t>{};
  // Shifts 0..m-1 of the groups, 1..size-1 of a ring; the fewest transfers one of them can have.
  const int64_t lo = on_ring ? 1 : 0,
                m = on_ring ? static_cast<int64_t>(ring.size) : static_cast<int64_t>(std::max(snd.size(), rcv.size()));
  const size_t fewest = on_ring ? 2 * n - std::min(2 * n, ring.size) : std::min(snd.size(), rcv.size());
  const int digits = static_cast<int>(ph_at["offset_digits"].integer(1, 2, "1 or 2 (hex digits per offset)"));
  const At shifts = ph_at["shifts"].list(), offsets = ph_at["offsets"].list();
  if (shifts.size() > static_cast<size_t>(m - lo))
    fail(shifts.path, std::to_string(shifts.size()) + " phases; " +
                          (on_ring ? "this ring has " : "these groups have ") + std::to_string(m - lo) + " shifts");
  if (offsets.size() != shifts.size())
    fail(offsets.path,
         std::to_string(offsets.size()) + " offset lines for " + std::to_string(shifts.size()) + " shifts");
  check_claim(shifts.path, n, shifts.size(), shifts.size() * fewest);
  std::vector<char> used(static_cast<size_t>(m), 0);
  for (size_t k = 0; k < shifts.size(); ++k) {
    const auto shift = static_cast<int32_t>(
        shifts[k].integer(lo, m - 1, "a shift (" + std::to_string(lo) + ".." + std::to_string(m - 1) + ")"));
    if (used[shift]++) fail(shifts[k].path, "shift " + std::to_string(shift) + " appears twice");
    const std::string line = offsets[k].text();
    if (line.size() != snd.size() * digits)
      fail(offsets[k].path, std::to_string(line.size()) + " characters for " + std::to_string(snd.size()) +
                                " senders of " + std::to_string(digits) + " digit(s)");
    Phase ph = on_ring ? ring_phase(ring, at, static_cast<size_t>(shift)) : group_shift_phase(n, snd, rcv, shift);
    for (size_t i = 0; i < snd.size(); ++i) {
      const int32_t r = snd[i], d = ph.dst[r];
      const char* c = line.data() + i * digits;
      // Named only when something fails: this loop runs phases x senders times (10^8 at 10 000 hosts).
      auto at = [&] { return offsets[k].path + " (sender " + std::to_string(i) + ")"; };
      if (d < 0) {
        if (c[0] != '.' || c[digits - 1] != '.')
          fail(at(), "an offset where shift " + std::to_string(shift) + " has no transfer (expected '.')");
        continue;
      }
      int off = 0;
      for (int x = 0; x < digits; ++x) {
        const int h = hex_value(c[x]);
        if (h < 0)
          fail(at(),
               std::string("'") + (c[x] >= 0x20 && c[x] < 0x7f ? std::string(1, c[x]) : "?") + "' is not a hex digit");
        off = off * 16 + h;
      }
      const HostIdentity& dst = doc.identities[d];
      if (off >= (1 << dst.lmc))
        fail(at(),
             "offset " + std::to_string(off) + " beyond the " + std::to_string(1 << dst.lmc) + " LIDs of " + dst.name);
      ph.dlid[r] = static_cast<uint16_t>(dst.base_lid + off);
    }
    s.phases.push_back(std::move(ph));
  }
}

}  // namespace

std::string to_json(const ScheduleDoc& doc) {
  const Schedule& s = doc.schedule;
  json j = header(doc, "ibroute-schedule");
  j["hosts"] = hosts_json(doc);
  if (!s.all_to_all()) j["groups"] = {{"senders", s.senders}, {"receivers", s.receivers}};
  std::vector<int32_t> shifts = shifts_of(s);
  std::optional<std::pair<Ring, std::vector<int32_t>>> ring;
  if (shifts.empty() && s.all_to_all()) ring = ring_of(s);
  if (ring && ring->first.size > max_ring(s.hosts.size())) ring.reset();
  if (ring) shifts = ring->second;
  if (!shifts.empty() && offsets_fit(doc)) {
    // Compact: the shift of each phase and one offset per sender: O(N) JSON values, not O(N^2).
    const int digits = offset_digits(doc);
    const std::vector<int32_t> snd = sender_ranks(s);
    json offsets = json::array();
    for (const Phase& ph : s.phases) {
      std::string line;
      line.reserve(snd.size() * digits);
      for (int32_t r : snd) {
        const int32_t d = ph.dst[r];
        if (d < 0)
          line.append(digits, '.');
        else
          append_hex(line, ph.dlid[r] - doc.identities[d].base_lid, digits);
      }
      offsets.push_back(std::move(line));
    }
    if (ring) {  // an all-to-all over a ring with empty places: version 3
      j["version"] = 3;
      j["phases"] = {{"encoding", "ring"},          {"offset_digits", digits},     {"size", ring->first.size},
                     {"places", ring->first.place}, {"shifts", std::move(shifts)}, {"offsets", std::move(offsets)}};
    } else {
      j["phases"] = {{"encoding", "shift"},
                     {"offset_digits", digits},
                     {"shifts", std::move(shifts)},
                     {"offsets", std::move(offsets)}};
    }
  } else {
    json phases = json::array();
    for (const Phase& ph : s.phases) {
      json p = json::array();
      for (size_t i = 0; i < ph.dst.size(); ++i)
        if (ph.dst[i] >= 0) p.push_back({{"src", i}, {"dst", ph.dst[i]}, {"dlid", ph.dlid[i]}});
      phases.push_back(std::move(p));
    }
    j["phases"] = std::move(phases);
  }
  return j.dump(1) + "\n";
}

namespace {

// The document's format and version: `format` is "ibroute-schedule" or "-slice"; returns the version.
int64_t read_format(const json& j, const char* format) {
  const At root{j, ""};
  const std::string_view f = format;
  if (!j.is_object() || !j.contains("format") || j["format"] != format)
    throw InputError(std::string("not an ") +
                     (f.ends_with("slice")   ? "ibroute schedule slice"
                      : f.ends_with("hosts") ? "ibroute slices' host table"
                                             : "ibroute schedule") +
                     " (\"format\" is not \"" + format + "\")");
  const At ver = root["version"];
  const int newest = f.ends_with("slice") ? kSliceVersion : f.ends_with("hosts") ? 1 : kFormatVersion;
  if (!ver.v.is_number_integer() || ver.v < 1 || ver.v > newest)
    fail(ver.path, std::string(f.ends_with("hosts") ? "host table" : "schedule format") + " version " + shown(ver.v) +
                       "; this ibroute reads versions 1.." + std::to_string(newest));
  return ver.v.get<int64_t>();
}

json parse_json(std::string_view text) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // The parser's own words without its "[json.exception.parse_error.101] " tag.
    std::string what = e.what();
    if (what.starts_with("[json.exception."))
      what.erase(0, what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2);
    const bool csv = text.starts_with("phase,");
    throw InputError(std::string(csv ? "a CSV export, not the JSON format this reads (ibroute export --format json)"
                                     : "not valid JSON (truncated or corrupted?)") +
                     ": " + what.substr(0, 160));
  }
}

// What a schedule and its slices share: name, method, fabric, timing, hosts and (version 2) groups.
void read_meta(const At& root, int64_t version, ScheduleDoc& doc);
void read_hosts(const At& root, int64_t version, ScheduleDoc& doc);
void read_header(const At& root, int64_t version, ScheduleDoc& doc) {
  read_meta(root, version, doc);
  read_hosts(root, version, doc);
}

void read_fabric(const At& root, ScheduleDoc& doc) {
  doc.schedule.name = root["name"].text();
  doc.created_at = root["created_at"].text();
  const At fab = root["fabric"];
  doc.fabric.scan_id = fab["scan_id"].integer(0, INT64_MAX, "a scan id (0 or more)");
  doc.fabric.scan_started_at = fab["scan_started_at"].text();
  doc.fabric.lmc = static_cast<uint8_t>(fab["lmc"].integer(0, 7, "an LMC (0..7)"));
  if (root.has("epoch")) {  // ibroute watch's epochs (docs/epochs.md)
    doc.epoch = static_cast<uint64_t>(root["epoch"].integer(1, int64_t{1} << 53, "an epoch number (1 or more)"));
    doc.epoch_from_unix_ns = root["epoch_from_unix_ns"].integer(0, INT64_MAX, "a time in ns since 1970 (0 or more)");
  }
}

// A host's identity (a row of "hosts", or a compact slice's own "host").
HostIdentity read_identity(const At& h) {
  const int64_t base = h["base_lid"].integer(1, kMaxUnicastLid, "a unicast LID (1..49151)");
  const int64_t lmc = h["lmc"].integer(0, 7, "an LMC (0..7)");
  if (base + (int64_t{1} << lmc) - 1 > kMaxUnicastLid)
    fail(h.path + "/lmc",
         "LIDs " + std::to_string(base) + " + 2^" + std::to_string(lmc) + " go beyond the unicast range (1..49151)");
  return HostIdentity{h["name"].text(), h["node_guid"].guid(), h["port_guid"].guid(), static_cast<uint16_t>(base),
                      static_cast<uint8_t>(lmc)};
}

void read_meta(const At& root, int64_t version, ScheduleDoc& doc) {
  Schedule& s = doc.schedule;
  read_fabric(root, doc);
  s.method = root["method"].text();
  s.bound = static_cast<int>(root["bound"].integer(0, 1 << 20, "a transfer bound (0..1048576)"));
  const At tim = root["timing"];
  s.timing.message_size =
      static_cast<uint64_t>(tim["message_size"].integer(0, INT64_MAX, "a message size in bytes (0 or more)"));
  s.timing.rate = tim["rate"].number(0, 1e15, "a rate in bytes per second (0..1e15)");
  s.timing.slot_s = tim["slot_s"].number(0, kMaxSlotSeconds, "a slot in seconds (0..1e6)");
  if (version >= 3 && tim.has("phase_slots")) {  // its length is checked against the phases once they are read
    const At slots = tim["phase_slots"].list();
    s.slots.reserve(slots.size());
    for (size_t k = 0; k < slots.size(); ++k)
      s.slots.push_back(static_cast<uint32_t>(
          slots[k].integer(1, kMaxPhaseSlots, "slots of a phase (1.." + std::to_string(kMaxPhaseSlots) + ")")));
  }
}

void read_hosts(const At& root, int64_t version, ScheduleDoc& doc) {
  const bool v1 = version == 1;
  Schedule& s = doc.schedule;
  const At hosts = root["hosts"];
  if (!hosts.v.is_array() || hosts.v.empty()) fail(hosts.path, "\"hosts\" is missing or empty");
  const size_t n = hosts.v.size();
  std::unordered_map<uint64_t, size_t> rank_of_port;
  for (size_t r = 0; r < n; ++r) {
    const At h = hosts[r];
    if (static_cast<size_t>(h["rank"].integer(0, INT64_MAX, "a rank")) != r)
      fail(h.path + "/rank", "ranks must be 0, 1, 2, ... in order");
    HostIdentity id = read_identity(h);
    if (auto [it, fresh] = rank_of_port.emplace(id.port_guid, r); !fresh)
      fail(h.path + "/port_guid", shown(h["port_guid"].v) + " is already rank " + std::to_string(it->second));
    s.hosts.push_back({-1, 0, id.name});
    doc.identities.push_back(std::move(id));
  }
  if (!v1 && root.has("groups")) {
    const At g = root["groups"];
    s.senders = read_group(g["senders"], n);
    s.receivers = read_group(g["receivers"], n);
  }
}

// A rank field: an integer in 0..n-1.
int32_t read_rank(const At& a, size_t n) {
  if (!a.v.is_number_integer()) fail(a.path, shown(a.v) + " is not an integer (a rank)");
  if (a.v.is_number_unsigned() ? a.v.get<uint64_t>() >= n
                               : (a.v.get<int64_t>() < 0 || static_cast<uint64_t>(a.v.get<int64_t>()) >= n))
    fail(a.path, shown(a.v) + ": rank out of range (0.." + std::to_string(n - 1) + ")");
  return static_cast<int32_t>(a.v.get<int64_t>());
}

// The most phases a schedule of these hosts and groups can have: its shifts, and from version 3
// one phase per transfer at the most (transfers that waited are packed into phases of their own).
size_t max_phases(const Schedule& s, int64_t version) {
  const size_t shifts = s.all_to_all() ? s.hosts.size() - 1 : std::max(s.senders.size(), s.receivers.size());
  if (version < 3) return shifts;
  const size_t pairs = s.all_to_all() ? s.hosts.size() * (s.hosts.size() - 1) : s.senders.size() * s.receivers.size();
  return std::max(shifts, pairs);
}

// timing.phase_slots, where given, has one entry per phase.
void check_slots(const At& root, const Schedule& s, size_t phases) {
  if (!s.slots.empty() && s.slots.size() != phases)
    fail(root.path + "/timing/phase_slots",
         std::to_string(s.slots.size()) + " entries for " + std::to_string(phases) + " phases");
}

// A schedule without phases moves nothing, and its slices could not name a phase: refused as a
// slice is.
void check_some_phases(const At& phases, size_t count) {
  if (count == 0) fail(phases.path, "no phases (a schedule moves at least one transfer)");
}

// A whole schedule, its phases in either encoding.
ScheduleDoc schedule_of(const json& j, int64_t version) {
  const At root{j, ""};
  ScheduleDoc doc;
  Schedule& s = doc.schedule;
  read_header(root, version, doc);
  const size_t n = s.hosts.size();
  const At phases = root["phases"];
  if (version > 1 && phases.v.is_object()) {
    read_shift_phases(phases, version, doc);
    check_some_phases(phases, s.phases.size());
    check_slots(root, s, s.phases.size());
    return doc;
  }
  // Memory follows what the file holds: a phase is stored as one entry per host, so the file must
  // not claim more than its pattern has (N-1 phases for an all-to-all, max(|S|, |R|) for two
  // groups), and its phases must be mostly listed — a small file of empty phases over many hosts
  // would otherwise take gigabytes.
  if (!phases.v.is_array()) fail(phases.path, "\"phases\" is missing or not a list");
  const size_t k_max = max_phases(s, version);
  check_some_phases(phases, phases.v.size());
  check_slots(root, s, phases.v.size());
  if (phases.v.size() > k_max)
    fail(phases.path,
         std::to_string(phases.v.size()) + " phases; " +
             (s.all_to_all() ? "an all-to-all of " + std::to_string(n) + " hosts has " : "these groups have ") +
             std::to_string(k_max));
  size_t listed = 0;
  for (size_t k = 0; k < phases.v.size(); ++k) listed += phases[k].list().size();
  check_claim(phases.path, n, phases.v.size(), listed);
  for (size_t k = 0; k < phases.v.size(); ++k) {
    const At ph_at = phases[k];
    Phase ph{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)};
    for (size_t i = 0; i < ph_at.v.size(); ++i) {
      const At t = ph_at[i];
      const auto src = static_cast<size_t>(read_rank(t["src"], n));
      const int32_t dst = read_rank(t["dst"], n);
      if (ph.dst[src] >= 0)
        fail(t.path + "/src", "rank " + std::to_string(src) + " sends twice in phase " + std::to_string(k));
      if (static_cast<size_t>(dst) == src) fail(t.path + "/dst", "rank " + std::to_string(src) + " sends to itself");
      ph.dst[src] = dst;
      ph.dlid[src] = static_cast<uint16_t>(t["dlid"].integer(1, kMaxUnicastLid, "a unicast LID (1..49151)"));
    }
    s.phases.push_back(std::move(ph));
  }
  return doc;
}

}  // namespace

int format_version_for(const Schedule& s) {
  return !s.slots.empty() || (!s.hosts.empty() && s.phases.size() > max_phases(s, 2)) ? 3 : 2;
}

ScheduleDoc from_json(std::string_view text) {
  const json j = parse_json(text);
  return schedule_of(j, read_format(j, "ibroute-schedule"));
}

void write_csv(std::ostream& o, const ScheduleDoc& doc) {
  o << "phase,src,dst,src_name,dst_name,dlid,dlid_offset\n";
  const auto& ids = doc.identities;
  for (size_t k = 0; k < doc.schedule.phases.size(); ++k) {
    const Phase& ph = doc.schedule.phases[k];
    for (size_t i = 0; i < ph.dst.size(); ++i) {
      if (ph.dst[i] < 0) continue;
      const HostIdentity& d = ids[ph.dst[i]];
      o << k << ',' << i << ',' << ph.dst[i] << ',' << ids[i].name << ',' << d.name << ',' << ph.dlid[i] << ','
        << int(ph.dlid[i]) - int(d.base_lid) << '\n';
    }
  }
}

std::string to_csv(const ScheduleDoc& doc) {
  std::ostringstream o;
  write_csv(o, doc);
  return o.str();
}

SliceWriter::SliceWriter(const ScheduleDoc& doc) : doc_(doc), n_(doc.schedule.hosts.size()) {
  // Who sends to each rank in each phase: one pass over the schedule instead of one per rank.
  src_of_.assign(doc.schedule.phases.size() * n_, -1);
  for (size_t k = 0; k < doc.schedule.phases.size(); ++k) {
    const Phase& ph = doc.schedule.phases[k];
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] >= 0) src_of_[k * n_ + ph.dst[i]] = static_cast<int32_t>(i);
  }
  // Version 4: only what the node needs. The peers' identities are in the folder's host table
  // (hosts_file_json), written once, not repeated in every slice.
  base_ = header(doc, "ibroute-schedule-slice");
  base_["version"] = kSliceVersion;
  base_["hosts_count"] = n_;
  base_["hosts_file"] = kHostsFile;
  base_["phases"] = doc.schedule.phases.size();
}

namespace {

// One rank's transfers in a slice, as columns.
struct SliceColumns {
  std::vector<uint32_t> sp, rp;  // phases of the sends, of the receives
  std::vector<int32_t> dst, src;
  std::vector<uint16_t> sd, rd;  // DLIDs
};

template <class T>
void append_numbers(std::string& out, const std::vector<T>& v) {
  out += '[';
  char buf[24];
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out.append(buf, std::to_chars(buf, buf + sizeof buf, v[i]).ptr);
  }
  out += ']';
}

// A slice's transfers as columns, written as nlohmann's compact dump writes them (keys in order,
// no spaces) but without a JSON value per number: 10^8 of them in an epoch of 10 000 hosts.
// "phase" is left out where transfer i is in phase i.
void append_columns(std::string& out, const std::vector<uint32_t>& phase, const std::vector<int32_t>& peer,
                    const std::vector<uint16_t>& dlid, const char* key) {
  bool dense = true;
  for (size_t i = 0; i < phase.size() && dense; ++i) dense = phase[i] == i;
  const bool phase_first = std::string_view(key) > "phase";  // "dlid" < "dst" < "phase" < "src"
  out += "{\"dlid\":";
  append_numbers(out, dlid);
  if (!dense && phase_first) out += ",\"phase\":", append_numbers(out, phase);
  out += ",\"", out += key, out += "\":";
  append_numbers(out, peer);
  if (!dense && !phase_first) out += ",\"phase\":", append_numbers(out, phase);
  out += '}';
}

}  // namespace

std::string SliceWriter::slice(size_t rank) const { return slices(rank, rank + 1).front(); }

std::vector<std::string> SliceWriter::slices(size_t first, size_t last) const {
  last = std::min(last, n_);
  std::vector<SliceColumns> cols(last > first ? last - first : 0);
  for (size_t k = 0; k < doc_.schedule.phases.size(); ++k) {
    const Phase& ph = doc_.schedule.phases[k];
    const int32_t* src_of = src_of_.data() + k * n_;
    for (size_t rank = first; rank < last; ++rank) {
      SliceColumns& c = cols[rank - first];
      if (ph.dst[rank] >= 0)
        c.sp.push_back(static_cast<uint32_t>(k)), c.dst.push_back(ph.dst[rank]), c.sd.push_back(ph.dlid[rank]);
      if (const int32_t i = src_of[rank]; i >= 0)
        c.rp.push_back(static_cast<uint32_t>(k)), c.src.push_back(i), c.rd.push_back(ph.dlid[i]);
    }
  }
  std::vector<std::string> out(cols.size());
  // The header dumped with placeholders for the two column sets, which are written straight into
  // the slice in their place. A placeholder is found as its key and value (a key and a colon
  // outside any string: a host's name cannot hold them unescaped); "receives" sorts first.
  const std::string_view receives = "\"receives\":\"\\u0001\"", sends = "\"sends\":\"\\u0001\"";
  for (size_t rank = first; rank < last; ++rank) {
    json j = base_;
    j["rank"] = rank;
    j["host"] = host_json(doc_.identities[rank], rank);
    j["receives"] = j["sends"] = "\x01";
    const std::string head = j.dump();
    const size_t r_at = head.find(receives), s_at = head.find(sends, r_at);
    if (r_at == std::string::npos || s_at == std::string::npos)
      throw std::logic_error("slice: a placeholder is not in the header");
    const SliceColumns& c = cols[rank - first];
    std::string& text = out[rank - first];
    text.reserve(head.size() + 8 * (c.dst.size() + c.src.size()) + 64);
    text.append(head, 0, r_at).append("\"receives\":");
    append_columns(text, c.rp, c.src, c.rd, "src");
    text.append(head, r_at + receives.size(), s_at - r_at - receives.size()).append("\"sends\":");
    append_columns(text, c.sp, c.dst, c.sd, "dst");
    text.append(head, s_at + sends.size()).append("\n");
  }
  return out;
}

std::string hosts_file_json(const ScheduleDoc& doc) {
  json j{{"format", "ibroute-schedule-hosts"},
         {"version", 1},
         {"name", doc.schedule.name},
         {"created_at", doc.created_at},
         {"fabric", fabric_json(doc.fabric)}};
  if (!doc.schedule.all_to_all())
    j["groups"] = {{"senders", doc.schedule.senders}, {"receivers", doc.schedule.receivers}};
  // One host per line: compact, and still read by eye and by grep.
  std::string out = j.dump();
  out.pop_back();
  out += ",\"hosts\":[\n";
  for (size_t r = 0; r < doc.identities.size(); ++r)
    out += host_json(doc.identities[r], r).dump() + (r + 1 < doc.identities.size() ? ",\n" : "\n");
  return out + "]}\n";
}

std::string node_slice_json(const ScheduleDoc& doc, size_t rank) { return SliceWriter(doc).slice(rank); }

namespace {

// A slice's "sends" or "receives": one transfer per phase at most, phases rising, never to itself.
std::vector<SliceTransfer> read_slice_transfers(const At& list, const char* peer_key, size_t rank, size_t n,
                                                size_t k_max) {
  list.list();
  if (list.size() > k_max)
    fail(list.path,
         std::to_string(list.size()) + " transfers; the schedule has at most " + std::to_string(k_max) + " phases");
  std::vector<SliceTransfer> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const At t = list[i];
    SliceTransfer x;
    x.phase = static_cast<uint32_t>(
        t["phase"].integer(0, static_cast<int64_t>(k_max) - 1, "a phase (0.." + std::to_string(k_max - 1) + ")"));
    if (!out.empty() && x.phase <= out.back().phase)
      fail(t.path + "/phase", "phase " + std::to_string(x.phase) + " after phase " + std::to_string(out.back().phase) +
                                  " (one transfer per phase, in order)");
    x.peer = read_rank(t[peer_key], n);
    if (static_cast<size_t>(x.peer) == rank)
      fail(t.path + "/" + peer_key, "rank " + std::to_string(rank) + " is the slice's own");
    x.dlid = static_cast<uint16_t>(t["dlid"].integer(1, kMaxUnicastLid, "a unicast LID (1..49151)"));
    out.push_back(x);
  }
  return out;
}

// Version 4: the transfers as columns (dst or src, dlid, and "phase" unless transfer i is in
// phase i); the same rules as the lists of older slices.
std::vector<SliceTransfer> read_slice_columns(const At& cols, const char* peer_key, size_t rank, size_t n,
                                              size_t k_max) {
  const At peer = cols[peer_key].list(), dlid = cols["dlid"].list();
  if (peer.size() > k_max)
    fail(peer.path, std::to_string(peer.size()) + " transfers; the schedule has " + std::to_string(k_max) + " phases");
  if (dlid.size() != peer.size())
    fail(dlid.path, std::to_string(dlid.size()) + " DLIDs for " + std::to_string(peer.size()) + " transfers");
  const bool dense = !cols.has("phase");
  std::optional<At> phase;
  if (!dense) {
    phase.emplace(cols["phase"].list());
    if (phase->size() != peer.size())
      fail(phase->path, std::to_string(phase->size()) + " phases for " + std::to_string(peer.size()) + " transfers");
  }
  std::vector<SliceTransfer> out;
  out.reserve(peer.size());
  for (size_t i = 0; i < peer.size(); ++i) {
    SliceTransfer x;
    if (dense) {
      x.phase = static_cast<uint32_t>(i);
    } else {
      const At p = (*phase)[i];
      x.phase = static_cast<uint32_t>(
          p.integer(0, static_cast<int64_t>(k_max) - 1, "a phase (0.." + std::to_string(k_max - 1) + ")"));
      if (!out.empty() && x.phase <= out.back().phase)
        fail(p.path, "phase " + std::to_string(x.phase) + " after phase " + std::to_string(out.back().phase) +
                         " (one transfer per phase, in order)");
    }
    x.peer = read_rank(peer[i], n);
    if (static_cast<size_t>(x.peer) == rank) fail(peer[i].path, "rank " + std::to_string(rank) + " is the slice's own");
    x.dlid = static_cast<uint16_t>(dlid[i].integer(1, kMaxUnicastLid, "a unicast LID (1..49151)"));
    out.push_back(x);
  }
  return out;
}

// Version 4: the node's own identity; the others' are in the host table (hosts_file), so the hosts
// here are placeholders (no name, GUID 0) but for its own.
SliceDoc compact_slice_of(const At& root) {
  SliceDoc out;
  ScheduleDoc& doc = out.doc;
  Schedule& s = doc.schedule;
  read_meta(root, 4, doc);
  // The placeholders cost ~100 B per host whatever the file lists: a claim is bounded (a million
  // hosts: 100 MB), not taken at its word.
  const auto n =
      static_cast<size_t>(root["hosts_count"].integer(2, int64_t{1} << 20, "a number of hosts (2 .. 1048576)"));
  out.hosts_file = root["hosts_file"].text();
  if (out.hosts_file.empty() || out.hosts_file.find('/') != std::string::npos || out.hosts_file.starts_with("."))
    fail("/hosts_file", "'" + out.hosts_file + "' is not a file name in the slice's own folder");
  out.rank = static_cast<size_t>(read_rank(root["rank"], n));
  const At h = root["host"];
  if (static_cast<size_t>(h["rank"].integer(0, INT64_MAX, "a rank")) != out.rank)
    fail(h.path + "/rank", "not the slice's rank");
  const HostIdentity me = read_identity(h);
  // Every phase is named by the slots where they are given; the count cannot exceed one per transfer.
  const int64_t most = static_cast<int64_t>(std::min<uint64_t>(uint64_t{n} * (n - 1), uint64_t{1} << 32));
  const auto phases =
      static_cast<size_t>(root["phases"].integer(1, most, "a number of phases (1 .. one per transfer)"));
  check_slots(root, s, phases);
  s.hosts.assign(n, Host{-1, 0, ""});
  doc.identities.assign(n, HostIdentity{});
  s.hosts[out.rank].name = me.name;
  doc.identities[out.rank] = me;
  out.sends = read_slice_columns(root["sends"], "dst", out.rank, n, phases);
  out.receives = read_slice_columns(root["receives"], "src", out.rank, n, phases);
  out.phases = phases;
  return out;
}

SliceDoc slice_of(const json& j, int64_t version) {
  const At root{j, ""};
  if (version >= 4) return compact_slice_of(root);
  SliceDoc out;
  read_header(root, version, out.doc);
  const size_t n = out.doc.schedule.hosts.size();
  out.rank = static_cast<size_t>(read_rank(root["rank"], n));
  const Schedule& s = out.doc.schedule;
  const size_t k_max = s.slots.empty() ? max_phases(s, version) : s.slots.size();  // the slots name every phase
  out.sends = read_slice_transfers(root["sends"], "dst", out.rank, n, k_max);
  out.receives = read_slice_transfers(root["receives"], "src", out.rank, n, k_max);
  out.phases = s.slots.size();
  return out;
}

}  // namespace

SliceDoc slice_from_json(std::string_view text) {
  const json j = parse_json(text);
  return slice_of(j, read_format(j, "ibroute-schedule-slice"));
}

ScheduleDoc hosts_file_from_json(std::string_view text) {
  const json j = parse_json(text);
  read_format(j, "ibroute-schedule-hosts");
  const At root{j, ""};
  ScheduleDoc doc;
  read_fabric(root, doc);
  read_hosts(root, 2, doc);
  return doc;
}

AnyScheduleDoc any_from_json(std::string_view text) {
  const json j = parse_json(text);
  AnyScheduleDoc out;
  if (j.is_object() && j.contains("format") && j["format"] == "ibroute-schedule-slice") {
    out.version = static_cast<int>(read_format(j, "ibroute-schedule-slice"));
    out.slice = slice_of(j, out.version);
  } else {
    out.version = static_cast<int>(read_format(j, "ibroute-schedule"));
    out.whole = schedule_of(j, out.version);
  }
  return out;
}

}  // namespace ibroute::schedule
