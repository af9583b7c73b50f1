#include <charconv>
#include <cstdint>
#include <unordered_map>
#include <nlohmann/json.hpp>
#include <sstream>

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
json timing_json(const Timing& t) {
  return {{"message_size", t.message_size}, {"rate", t.rate}, {"slot_s", t.slot_s}};
}
json hosts_json(const ScheduleDoc& doc) {
  json hosts = json::array();
  for (size_t r = 0; r < doc.identities.size(); ++r) {
    const HostIdentity& h = doc.identities[r];
    hosts.push_back({{"rank", r}, {"name", h.name}, {"node_guid", fabric::guid_hex(h.node_guid)},
                     {"port_guid", fabric::guid_hex(h.port_guid)}, {"base_lid", h.base_lid}, {"lmc", h.lmc}});
  }
  return hosts;
}
json header(const ScheduleDoc& doc, const char* format) {
  const Schedule& s = doc.schedule;
  return {{"format", format}, {"version", kFormatVersion}, {"name", s.name}, {"created_at", doc.created_at},
          {"method", s.method}, {"bound", s.bound}, {"fabric", fabric_json(doc.fabric)}, {"timing", timing_json(s.timing)}};
}

// Reading: every value is checked where it is read, and every failure is an InputError naming the
// JSON pointer of the value (RFC 6901), e.g. "/phases/3/7/dlid: 65550 is not a unicast LID
// (1..49151)". nlohmann's own type_error/out_of_range never reach the caller.
constexpr int64_t kMaxUnicastLid = 0xBFFF;

using json_input::At;
using json_input::fail;
using json_input::shown;

}  // namespace

std::string to_json(const ScheduleDoc& doc) {
  json j = header(doc, "ibroute-schedule");
  j["hosts"] = hosts_json(doc);
  json phases = json::array();
  for (const Phase& ph : doc.schedule.phases) {
    json p = json::array();
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] >= 0) p.push_back({{"src", i}, {"dst", ph.dst[i]}, {"dlid", ph.dlid[i]}});
    phases.push_back(std::move(p));
  }
  j["phases"] = std::move(phases);
  return j.dump(1) + "\n";
}

ScheduleDoc from_json(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(std::string("not valid JSON (truncated or corrupted?): ") + e.what());
  }
  const At root{j, ""};
  if (!j.is_object() || !j.contains("format") || j["format"] != "ibroute-schedule")
    throw InputError("not an ibroute schedule (\"format\" is not \"ibroute-schedule\")");
  const At ver = root["version"];
  if (!ver.v.is_number_integer() || ver.v != kFormatVersion)
    fail(ver.path, "schedule format version " + shown(ver.v) + "; this ibroute reads version " + std::to_string(kFormatVersion));
  ScheduleDoc doc;
  Schedule& s = doc.schedule;
  s.name = root["name"].text();
  doc.created_at = root["created_at"].text();
  s.method = root["method"].text();
  s.bound = static_cast<int>(root["bound"].integer(0, 1 << 20, "a transfer bound (0..1048576)"));
  const At fab = root["fabric"];
  doc.fabric.scan_id = fab["scan_id"].integer(0, INT64_MAX, "a scan id (0 or more)");
  doc.fabric.scan_started_at = fab["scan_started_at"].text();
  doc.fabric.lmc = static_cast<uint8_t>(fab["lmc"].integer(0, 7, "an LMC (0..7)"));
  const At tim = root["timing"];
  s.timing.message_size = static_cast<uint64_t>(tim["message_size"].integer(0, INT64_MAX, "a message size in bytes (0 or more)"));
  s.timing.rate = tim["rate"].number(0, 1e15, "a rate in bytes per second (0..1e15)");
  s.timing.slot_s = tim["slot_s"].number(0, 1e6, "a slot in seconds (0..1e6)");

  const At hosts = root["hosts"];
  if (!hosts.v.is_array() || hosts.v.empty()) fail(hosts.path, "\"hosts\" is missing or empty");
  const size_t n = hosts.v.size();
  std::unordered_map<uint64_t, size_t> rank_of_port;
  for (size_t r = 0; r < n; ++r) {
    const At h = hosts[r];
    if (static_cast<size_t>(h["rank"].integer(0, INT64_MAX, "a rank")) != r) fail(h.path + "/rank", "ranks must be 0, 1, 2, ... in order");
    const int64_t base = h["base_lid"].integer(1, kMaxUnicastLid, "a unicast LID (1..49151)");
    const int64_t lmc = h["lmc"].integer(0, 7, "an LMC (0..7)");
    if (base + (int64_t{1} << lmc) - 1 > kMaxUnicastLid)
      fail(h.path + "/lmc", "LIDs " + std::to_string(base) + " + 2^" + std::to_string(lmc) + " go beyond the unicast range (1..49151)");
    HostIdentity id{h["name"].text(), h["node_guid"].guid(), h["port_guid"].guid(), static_cast<uint16_t>(base), static_cast<uint8_t>(lmc)};
    if (auto [it, fresh] = rank_of_port.emplace(id.port_guid, r); !fresh)
      fail(h.path + "/port_guid", shown(h["port_guid"].v) + " is already rank " + std::to_string(it->second));
    s.hosts.push_back({-1, 0, id.name});
    doc.identities.push_back(std::move(id));
  }

  // Memory follows what the file holds: a phase is stored as one entry per host, so the file must
  // not claim more than an all-to-all has (N-1 phases), and its phases must be mostly listed — a
  // small file of empty phases over many hosts would otherwise take gigabytes.
  const At phases = root["phases"];
  if (!phases.v.is_array()) fail(phases.path, "\"phases\" is missing or not a list");
  const size_t k_max = n - 1;
  if (phases.v.size() > k_max)
    fail(phases.path, std::to_string(phases.v.size()) + " phases; an all-to-all of " + std::to_string(n) + " hosts has " +
                          std::to_string(k_max));
  size_t listed = 0;
  for (size_t k = 0; k < phases.v.size(); ++k) listed += phases[k].list().size();
  const size_t cells = n * phases.v.size();
  if (cells > 65536 && listed < cells / 2)
    fail(phases.path, std::to_string(phases.v.size()) + " phases of " + std::to_string(n) + " hosts list only " + std::to_string(listed) +
                          " of their " + std::to_string(cells) + " transfers");
  auto rank = [n](const At& a) {
    if (!a.v.is_number_integer()) fail(a.path, shown(a.v) + " is not an integer (a rank)");
    if (a.v.is_number_unsigned() ? a.v.get<uint64_t>() >= n : (a.v.get<int64_t>() < 0 || static_cast<uint64_t>(a.v.get<int64_t>()) >= n))
      fail(a.path, shown(a.v) + ": rank out of range (0.." + std::to_string(n - 1) + ")");
    return a.v.get<int64_t>();
  };
  for (size_t k = 0; k < phases.v.size(); ++k) {
    const At ph_at = phases[k];
    Phase ph{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)};
    for (size_t i = 0; i < ph_at.v.size(); ++i) {
      const At t = ph_at[i];
      const auto src = static_cast<size_t>(rank(t["src"]));
      const auto dst = static_cast<int32_t>(rank(t["dst"]));
      if (ph.dst[src] >= 0) fail(t.path + "/src", "rank " + std::to_string(src) + " sends twice in phase " + std::to_string(k));
      ph.dst[src] = dst;
      ph.dlid[src] = static_cast<uint16_t>(t["dlid"].integer(1, kMaxUnicastLid, "a unicast LID (1..49151)"));
    }
    s.phases.push_back(std::move(ph));
  }
  return doc;
}

std::string to_csv(const ScheduleDoc& doc) {
  std::ostringstream o;
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
  return o.str();
}

std::string node_slice_json(const ScheduleDoc& doc, size_t rank) {
  json j = header(doc, "ibroute-schedule-slice");
  j["rank"] = rank;
  j["hosts"] = hosts_json(doc);
  json sends = json::array(), receives = json::array();
  for (size_t k = 0; k < doc.schedule.phases.size(); ++k) {
    const Phase& ph = doc.schedule.phases[k];
    if (ph.dst[rank] >= 0) sends.push_back({{"phase", k}, {"dst", ph.dst[rank]}, {"dlid", ph.dlid[rank]}});
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] == static_cast<int32_t>(rank)) receives.push_back({{"phase", k}, {"src", i}, {"dlid", ph.dlid[i]}});
  }
  j["sends"] = std::move(sends);
  j["receives"] = std::move(receives);
  return j.dump(1) + "\n";
}

}  // namespace ibroute::schedule
