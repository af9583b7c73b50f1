#include "ibroute/schedule/validate.hpp"

#include <unordered_map>

#include "ibroute/schedule/admission.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

bool Validation::ok() const {
  for (const Check& c : checks)
    if (!c.ok) return false;
  return true;
}

std::vector<HostIdentity> identify_hosts(const Fabric& f, const std::vector<Host>& hosts) {
  std::vector<HostIdentity> out;
  for (const Host& h : hosts) {
    const Node& n = f.nodes[h.node];
    const Port& p = n.ports[h.port];
    out.push_back({h.name, n.guid, p.guid, p.base_lid, p.lmc});
  }
  return out;
}

std::vector<Host> resolve_hosts(const Fabric& f, const ScheduleDoc& doc, std::vector<std::string>& problems) {
  std::unordered_map<uint64_t, std::pair<int32_t, int>> by_guid;
  for (size_t i = 0; i < f.nodes.size(); ++i)
    if (!f.nodes[i].is_switch())
      for (int p = 1; p <= f.nodes[i].num_ports(); ++p) by_guid.emplace(f.nodes[i].ports[p].guid, std::pair{static_cast<int32_t>(i), p});
  std::vector<Host> hosts;
  for (const HostIdentity& id : doc.identities) {
    auto it = by_guid.find(id.port_guid);
    if (it == by_guid.end()) {
      problems.push_back(id.name + ": port " + guid_hex(id.port_guid) + " is not in this scan");
      hosts.push_back({-1, 0, id.name});
      continue;
    }
    const Port& p = f.nodes[it->second.first].ports[it->second.second];
    if (p.base_lid != id.base_lid || p.lmc != id.lmc)
      problems.push_back(id.name + ": LID " + std::to_string(id.base_lid) + "/LMC " + std::to_string(id.lmc) + " in the schedule, " +
                         std::to_string(p.base_lid) + "/LMC " + std::to_string(p.lmc) + " in this scan");
    hosts.push_back({it->second.first, static_cast<uint8_t>(it->second.second), id.name});
  }
  return hosts;
}

std::string check_all_to_all(size_t n, const std::vector<Phase>& phases) {
  Schedule s;
  s.hosts.resize(n);
  s.phases = phases;
  return check_pairs(s);
}

std::string check_pairs(const Schedule& s) {
  const size_t n = s.hosts.size();
  const std::vector<int32_t> snd = sender_ranks(s), rcv = receiver_ranks(s);
  // One byte per (sender, receiver) pair: the schedule itself holds as many transfers.
  std::vector<int32_t> spos(n, -1), rpos(n, -1);
  for (size_t i = 0; i < snd.size(); ++i) {
    if (snd[i] < 0 || static_cast<size_t>(snd[i]) >= n || spos[snd[i]] >= 0) return "sender " + std::to_string(snd[i]) + " is not a rank or listed twice";
    spos[snd[i]] = static_cast<int32_t>(i);
  }
  for (size_t j = 0; j < rcv.size(); ++j) {
    if (rcv[j] < 0 || static_cast<size_t>(rcv[j]) >= n || rpos[rcv[j]] >= 0) return "receiver " + std::to_string(rcv[j]) + " is not a rank or listed twice";
    rpos[rcv[j]] = static_cast<int32_t>(j);
  }
  std::vector<char> seen(snd.size() * rcv.size(), 0);
  std::vector<char> recv(n);
  for (size_t k = 0; k < s.phases.size(); ++k) {
    const Phase& ph = s.phases[k];
    const std::string at = "phase " + std::to_string(k) + ": ";
    if (ph.dst.size() != n || ph.dlid.size() != n) return at + "does not list every rank";
    std::fill(recv.begin(), recv.end(), 0);
    for (size_t i = 0; i < n; ++i) {
      const int32_t d = ph.dst[i];
      if (d < 0) continue;
      if (static_cast<size_t>(d) >= n || static_cast<size_t>(d) == i) return at + "rank " + std::to_string(i) + " sends to " + std::to_string(d);
      if (spos[i] < 0) return at + "rank " + std::to_string(i) + " sends but is not a sender";
      if (rpos[d] < 0) return at + "rank " + std::to_string(d) + " receives but is not a receiver";
      if (recv[d]++) return at + "rank " + std::to_string(d) + " receives twice";
      const size_t pair = static_cast<size_t>(spos[i]) * rcv.size() + static_cast<size_t>(rpos[d]);
      if (seen[pair]) return "pair " + std::to_string(i) + " -> " + std::to_string(d) + " appears twice";
      seen[pair] = true;
    }
  }
  for (size_t i = 0; i < snd.size(); ++i)
    for (size_t j = 0; j < rcv.size(); ++j)
      if (snd[i] != rcv[j] && !seen[i * rcv.size() + j]) return "pair " + std::to_string(snd[i]) + " -> " + std::to_string(rcv[j]) + " is missing";
  return "";
}

namespace {

// Where the first broken transfer's route ends: "phase 3: node1-001 -> node1-040 (DLID 57) dead_end
// at ibswitch03[10]" — the switch and port to look at, with an example pair.
std::string first_broken(const EvalContext& ctx, const std::vector<Host>& hosts, const Schedule& s) {
  PathFinder finder(ctx.fabric, ctx.links);
  std::vector<int32_t> path;
  for (size_t k = 0; k < s.phases.size(); ++k)
    for (size_t i = 0; i < s.phases[k].dst.size(); ++i) {
      const int32_t d = s.phases[k].dst[i];
      if (d < 0 || static_cast<size_t>(d) >= hosts.size()) continue;
      const RouteStatus st = finder.path(hosts[i].node, hosts[i].port, s.phases[k].dlid[i], path);
      if (st == RouteStatus::ok) continue;
      std::string at = "its first hop";
      if (!path.empty()) {
        const int32_t last = path.back();
        at = ctx.fabric.nodes[ctx.links.node(last)].desc + "[" + std::to_string(ctx.links.port(last)) + "]";
      }
      return "e.g. phase " + std::to_string(k) + ": " + hosts[i].name + " -> " + hosts[static_cast<size_t>(d)].name + " (DLID " +
             std::to_string(s.phases[k].dlid[i]) + ") " + std::string(to_string(st)) + (st == RouteStatus::dead_end ? " at " : " after ") + at +
             " (ibroute scans --problems lists where every broken route ends)";
    }
  return "";
}

}  // namespace

Validation validate(const EvalContext& ctx, const ScheduleDoc& doc, const fabric::ProgressFn& progress) {
  Validation v;
  const Schedule& s = doc.schedule;
  std::vector<std::string> problems;
  std::vector<Host> hosts = resolve_hosts(ctx.fabric, doc, problems);
  std::string first = problems.empty() ? "" : problems[0] + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : "");
  v.checks.push_back({"fabric", problems.empty(),
                      problems.empty() ? std::to_string(hosts.size()) + " hosts: same port GUIDs, LIDs and LMC" : first});
  std::string pairs = check_pairs(s);
  if (s.all_to_all())
    v.checks.push_back({"all_to_all", pairs.empty(),
                        pairs.empty() ? std::to_string(s.phases.size()) + " phases, every ordered pair once, every rank at most once per phase" : pairs});
  else
    v.checks.push_back({"groups", pairs.empty(),
                        pairs.empty() ? std::to_string(s.phases.size()) + " phases, " + std::to_string(s.senders.size()) + " senders to " +
                                            std::to_string(s.receivers.size()) + " receivers, every pair once, every rank at most once per phase"
                                      : pairs});
  bool matched = true;
  for (const Host& h : hosts) matched &= h.node >= 0;
  if (!matched) return v;

  size_t foreign = 0;
  std::string example;
  for (size_t k = 0; k < s.phases.size(); ++k)
    for (size_t i = 0; i < s.phases[k].dst.size(); ++i) {
      int32_t d = s.phases[k].dst[i];
      if (d < 0 || static_cast<size_t>(d) >= hosts.size()) continue;
      const Port& p = ctx.fabric.nodes[hosts[d].node].ports[hosts[d].port];
      if (!p.owns_lid(s.phases[k].dlid[i])) {
        if (!foreign++) example = "phase " + std::to_string(k) + ": DLID " + std::to_string(s.phases[k].dlid[i]) + " is not one of " + hosts[d].name + "'s";
      }
    }
  v.checks.push_back({"dlids", foreign == 0, foreign == 0 ? "every DLID belongs to its destination" : example + " (" + std::to_string(foreign) + " transfers)"});
  v.load = evaluate(ctx, hosts, s.phases, false, progress);
  // Unknown is not lost: a route through a switch whose table was not read is said apart.
  const size_t lost = v.load.broken - v.load.unknown;
  const std::string broken = (lost ? std::to_string(lost) + " transfers have no working route" : std::string()) + (lost && v.load.unknown ? ", " : "") +
                             (v.load.unknown ? std::to_string(v.load.unknown) + " cross a switch whose table was not read (routes unknown)" : "");
  v.checks.push_back({"routes", v.load.broken == 0,
                      v.load.broken == 0 ? "every transfer has a working route" : broken + "; " + first_broken(ctx, hosts, s)});
  std::string worst;
  if (!v.load.over.empty()) {
    const OverLink* w = &v.load.over[0];
    for (const OverLink& o : v.load.over)
      if (o.load - o.capacity > w->load - w->capacity) w = &o;
    worst = std::to_string(v.load.over_count) + " link-phases over the bound; worst: " + describe_link(ctx.fabric, ctx.links, w->link) +
            " carries " + std::to_string(w->load) + " in phase " + std::to_string(w->phase) + " (capacity " + std::to_string(w->capacity) + ")";
  }
  // Every phase must fit its slots (one each, or the schedule's phase_slots) at the host link rate:
  // its worst link's transfers take that long.
  if (s.timing.slot_s > 0 && s.timing.message_size > 0 && ctx.structure.host_gbps > 0) {
    const double message_s = static_cast<double>(s.timing.message_size) * 8 / (ctx.structure.host_gbps * 1e9);
    size_t short_phases = 0;
    std::string first_short;
    for (size_t k = 0; k < v.load.phase_time.size(); ++k) {
      const double have = static_cast<double>(s.slots.empty() ? 1 : s.slots[k]) * s.timing.slot_s;
      const double need = v.load.phase_time[k] * message_s;
      if (need <= have * (1 + 1e-6)) continue;
      if (!short_phases++)
        first_short = "phase " + std::to_string(k) + " needs " + std::to_string(need * 1e6) + " us at the link rate, its slots give " +
                      std::to_string(have * 1e6) + " us";
    }
    v.checks.push_back({"timing", short_phases == 0,
                        short_phases == 0 ? "every phase fits its slots at the host link rate"
                                          : first_short + " (" + std::to_string(short_phases) + " phases too short)"});
  }
  v.checks.push_back({"congestion", v.load.over.empty(),
                      v.load.over.empty() ? "at most " + std::to_string(v.load.max_load) + " transfers on any link direction (bound " + std::to_string(ctx.structure.transfer_bound) + ")" : worst});
  return v;
}

}  // namespace ibroute::schedule
