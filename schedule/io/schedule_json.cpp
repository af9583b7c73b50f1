#include <charconv>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/schedule/format.hpp"

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

uint64_t parse_guid(const std::string& s) {
  std::string_view v = s;
  if (!v.starts_with("0x")) throw InputError("GUID '" + s + "' does not start with 0x");
  v.remove_prefix(2);
  uint64_t g = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), g, 16);
  if (ec != std::errc() || p != v.data() + v.size()) throw InputError("bad GUID '" + s + "'");
  return g;
}

template <class T>
T get(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw InputError(where + ": missing \"" + key + "\"");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError(where + ": \"" + key + "\" has the wrong type");
  }
}

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
  } catch (const json::parse_error& e) {
    throw InputError(std::string("not valid JSON (truncated or corrupted?): ") + e.what());
  }
  const std::string w = "schedule";
  if (!j.is_object() || j.value("format", "") != "ibroute-schedule")
    throw InputError("not an ibroute schedule (\"format\" is not \"ibroute-schedule\")");
  int version = get<int>(j, "version", w);
  if (version != kFormatVersion)
    throw InputError("schedule format version " + std::to_string(version) + "; this ibroute reads version " + std::to_string(kFormatVersion));
  ScheduleDoc doc;
  Schedule& s = doc.schedule;
  s.name = get<std::string>(j, "name", w);
  doc.created_at = get<std::string>(j, "created_at", w);
  s.method = get<std::string>(j, "method", w);
  s.bound = get<int>(j, "bound", w);
  const json& fab = j.contains("fabric") ? j["fabric"] : json();
  doc.fabric.scan_id = get<int64_t>(fab, "scan_id", "fabric");
  doc.fabric.scan_started_at = get<std::string>(fab, "scan_started_at", "fabric");
  doc.fabric.lmc = get<uint8_t>(fab, "lmc", "fabric");
  const json& tim = j.contains("timing") ? j["timing"] : json();
  s.timing.message_size = get<uint64_t>(tim, "message_size", "timing");
  s.timing.rate = get<double>(tim, "rate", "timing");
  s.timing.slot_s = get<double>(tim, "slot_s", "timing");
  const json& hosts = j.contains("hosts") ? j["hosts"] : json();
  if (!hosts.is_array() || hosts.empty()) throw InputError("schedule: \"hosts\" is missing or empty");
  for (size_t r = 0; r < hosts.size(); ++r) {
    const std::string where = "hosts[" + std::to_string(r) + "]";
    if (get<size_t>(hosts[r], "rank", where) != r) throw InputError(where + ": ranks must be 0, 1, 2, ... in order");
    HostIdentity id{get<std::string>(hosts[r], "name", where), parse_guid(get<std::string>(hosts[r], "node_guid", where)),
                    parse_guid(get<std::string>(hosts[r], "port_guid", where)), get<uint16_t>(hosts[r], "base_lid", where),
                    get<uint8_t>(hosts[r], "lmc", where)};
    s.hosts.push_back({-1, 0, id.name});
    doc.identities.push_back(std::move(id));
  }
  const size_t n = hosts.size();
  const json& phases = j.contains("phases") ? j["phases"] : json();
  if (!phases.is_array()) throw InputError("schedule: \"phases\" is missing");
  for (size_t k = 0; k < phases.size(); ++k) {
    const std::string where = "phases[" + std::to_string(k) + "]";
    if (!phases[k].is_array()) throw InputError(where + " is not a list of transfers");
    Phase ph{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)};
    for (const json& t : phases[k]) {
      size_t src = get<size_t>(t, "src", where);
      int64_t dst = get<int64_t>(t, "dst", where);
      if (src >= n || dst < 0 || static_cast<size_t>(dst) >= n) throw InputError(where + ": rank out of range");
      if (ph.dst[src] >= 0) throw InputError(where + ": rank " + std::to_string(src) + " sends twice");
      ph.dst[src] = static_cast<int32_t>(dst);
      ph.dlid[src] = get<uint16_t>(t, "dlid", where);
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
