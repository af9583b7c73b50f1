#include "diagnosis_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "ibroute/fabric/printf_text.hpp"
#include "ibroute/fabric/routes.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/diagnosis.hpp"

namespace ibroute::workflow {

using fabric::printf_text;
using nlohmann::json;

namespace {

// Suspects by the part they name; evidence from several sources adds up (1 - the product of the
// chances that each is wrong).
struct Suspects {
  std::map<std::string, json> by_where;
  json& at(const std::string& where, const json& base) {
    auto [it, fresh] = by_where.emplace(where, base);
    if (fresh) it->second["evidence"] = json::array(), it->second["confidence"] = 0.0;
    return it->second;
  }
  // A fact already stated adds nothing: neither a line nor confidence.
  void add(json& s, double confidence, const std::string& evidence) {
    for (const json& e : s["evidence"])
      if (e == evidence) return;
    s["confidence"] = 1 - (1 - s["confidence"].get<double>()) * (1 - std::clamp(confidence, 0.0, 1.0));
    s["evidence"].push_back(evidence);
  }
  // The share of its planned rate the part's traffic ran at, where a run measured it (the
  // `faults` check reads it): the lowest any evidence gives.
  static void ran_at(json& s, double share) {
    s["share_of_plan"] = s.contains("share_of_plan") ? std::min(s["share_of_plan"].get<double>(), share) : share;
  }
};

json link_base(const FabricContext& c, int32_t link) {
  const int32_t node = c.links.node(link);
  return {{"kind", "link"},
          {"where", link_name(c, link)},
          {"guid", fabric::guid_hex(c.fabric.nodes[node].guid)},
          {"port", c.links.port(link)},
          {"action", "reseat or replace the cable; if it stays, replace the port's transceiver or the switch port"}};
}

json host_base(const schedule::Host& h, int32_t rank) {
  const std::string host = h.name.substr(0, h.name.find(' '));
  return {
      {"kind", "host"},
      {"where", host},
      {"host", h.name},
      {"rank", rank},
      {"action", "check the HCA (PCIe link width and speed: lspci -vv; firmware; its cable), then the host's load"}};
}

void from_run(const FabricContext& c, DiagnosisInput& in, Suspects& out, json& evidence) {
  if (in.simulated) {
    evidence["run"] =
        "none: a simulation plays the plan's own paths by max-min fair sharing, which gives every pair at least its "
        "planned rate";
    return;
  }
  if (!in.plan || (in.pair_gbps.empty() && !in.run)) {
    evidence["run"] = "no per-pair rates";
    return;
  }
  // A link is judged on 8 pairs or more; a small run's host links carry n - 1 (at least 3).
  const size_t n = in.plan->hosts.size();
  const schedule::RunDiagnosis d = in.pair_gbps.empty()
                                       ? *in.run
                                       : schedule::diagnose_run(c.eval, *in.plan, std::move(in.pair_gbps), 0, 10,
                                                                std::clamp<size_t>(n > 1 ? n - 1 : 1, 3, 8));
  json found = json::array();
  for (const schedule::RunSuspect& x : d.suspects)
    found.push_back({{"link", link_name(c, x.link)},
                     {"rank", x.rank},
                     {"receive", x.receive},
                     {"factor", x.factor},
                     {"transfers", x.transfers},
                     {"slow_share", x.slow_share},
                     {"others", x.others},
                     {"confidence", x.confidence}});
  evidence["run"] = {{"pairs", d.pairs}, {"median_share_of_plan", d.median_share}, {"suspects", std::move(found)}};
  for (const schedule::RunSuspect& x : d.suspects) {
    // Below 0.9 of plan everywhere, the shares are against the run's own median pair.
    const std::string share = printf_text(
        d.median_share < 0.9 ? "%.0f %% of the run's median pair" : "%.0f %% of their planned rate", 100 * x.factor);
    json* s = nullptr;
    if (x.rank >= 0) {
      s = &out.at(in.plan->hosts[static_cast<size_t>(x.rank)].name,
                  host_base(in.plan->hosts[static_cast<size_t>(x.rank)], x.rank));
      out.add(
          *s, x.confidence,
          std::to_string(x.transfers) + (x.receive ? " transfers into it at " : " transfers from it at ") + share +
              printf_text(" (%.0f %% of them slow), over every path: its own link, HCA or host", 100 * x.slow_share));
    } else {
      s = &out.at(link_name(c, x.link), link_base(c, x.link));
      out.add(*s, x.confidence,
              std::to_string(x.transfers) + " transfers over it at " + share +
                  printf_text("; the other transfers of the same senders at %.0f %%", 100 * x.others));
    }
    Suspects::ran_at(*s, x.factor);
    if (x.alternative >= 0) {
      out.add(*s, 0,
              "as well explained by " + link_name(c, x.alternative) +
                  ": this run cannot tell them apart (accept --confirm runs transfers over each that avoid the other)");
      (*s)["alternative"] = link_name(c, x.alternative);
    }
  }
}

// What the scan before had and this one lacks: hosts, and cables by both ends' ports.
void from_changes(const FabricContext& c, const ScanChanges& ch, Suspects& out) {
  const std::string since = "in scan " + std::to_string(ch.previous) + ", not in scan " + std::to_string(c.scan_id);
  for (const std::string& h : ch.hosts_gone) {
    const json base{{"kind", "host"},
                    {"where", h.substr(0, h.find(' '))},
                    {"host", h},
                    {"rank", nullptr},
                    {"action", "check the host: power, its HCA (ibstat), its cable and the switch port it hangs off"}};
    out.add(out.at(h, base), 0.9, since);
  }
  for (const LostCable& l : ch.cables_gone) {
    const json base{
        {"kind", "link"},
        {"where", cable_name(c.fabric, l)},
        {"guid", fabric::guid_hex(c.fabric.nodes[l.a].guid)},
        {"port", l.pa},
        {"action",
         "reseat or replace the cable (both ends: the ports above), then re-run OpenSM if routes still point at it"}};
    out.add(out.at(base["where"], base), 0.9, "cabled " + since);
  }
}

// A host that sends slower than the others over all its transfers, any path: its HCA or the host.
void from_nodes(const DiagnosisInput& in, Suspects& out) {
  if (!in.plan || in.node_send_gbps.size() != in.plan->hosts.size()) return;
  std::vector<char> sends(in.plan->hosts.size(), in.plan->all_to_all());
  for (int32_t r : in.plan->senders) sends[static_cast<size_t>(r)] = 1;
  std::vector<double> rates;
  for (size_t r = 0; r < sends.size(); ++r)
    if (sends[r] && in.node_send_gbps[r] >= 0) rates.push_back(in.node_send_gbps[r]);
  if (rates.size() < 3) return;
  std::nth_element(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2), rates.end());
  const double median = rates[rates.size() / 2];
  if (!(median > 0)) return;
  for (size_t r = 0; r < sends.size(); ++r) {
    const double ratio = in.node_send_gbps[r] / median;
    if (!sends[r] || in.node_send_gbps[r] < 0 || ratio > 0.85) continue;
    const schedule::Host& h = in.plan->hosts[r];
    json& s = out.at(h.name, host_base(h, static_cast<int32_t>(r)));
    out.add(s, std::clamp((1 - ratio - 0.1) / 0.3, 0.0, 1.0),
            printf_text("sends at %.3g Gb/s over its sending time, %.0f %%", in.node_send_gbps[r], 100 * ratio) +
                printf_text(" of the median host's %.3g Gb/s", median));
    Suspects::ran_at(s, ratio);
  }
}

// What a switch's up-links cost the all-to-all: the transfers its down-links bring per phase
// (hosts: those that leave it, H (N - H) / (N - 1)) over its up-link capacity, against the same
// for its level's regular switch (common down / common up, at least 1: a full-bisection level).
// `share`: the least time it adds beyond that, 0 where it has the up-links it needs.
struct UplinkCost {
  double share = 0;
  std::string text;
};

UplinkCost uplink_cost(const FabricContext& c, int32_t sw) {
  const fabric::FabricStructure& st = c.structure;
  const int level = st.level[static_cast<size_t>(sw)];
  double down = 0, up = 0;
  int hosts = 0, ups = 0;
  const fabric::Node& node = c.fabric.nodes[static_cast<size_t>(sw)];
  for (int p = 1; p <= node.num_ports(); ++p) {
    const fabric::Port& port = node.ports[p];
    if (!fabric::port_usable(port)) continue;
    const int peer = st.level[static_cast<size_t>(port.peer_node)];
    const double g = c.links.gbps(c.links.id(sw, p));
    if (peer == level + 1)
      up += g, ++ups;
    else if (peer >= 0 && peer < level)
      down += g, hosts += peer == 0;
  }
  const double n = static_cast<double>(st.hosts.size());
  if (level == 1 && n > 1) down *= (n - hosts) / (n - 1);  // what stays on the leaf needs no up-link
  if (level < 1 || level > static_cast<int>(st.per_level.size())) return {0, "not in the tree's levels"};
  const fabric::LevelInfo& lv = st.per_level[static_cast<size_t>(level - 1)];
  double regular = lv.common_up > 0 ? static_cast<double>(lv.common_down) / lv.common_up : 1.0;
  if (level == 1 && n > 1)
    regular *= (n - std::min<double>(lv.common_down, n - 1)) / (n - 1);  // the same reckoning as `down`
  regular = std::max(1.0, regular);
  const double need = up > 0 ? down / up : (down > 0 ? INFINITY : 0);
  UplinkCost out;
  out.share = std::isfinite(need) ? std::max(0.0, need / regular - 1) : 1.0;
  char buf[240];
  if (out.share > 0)
    std::snprintf(buf, sizeof buf,
                  "its %d up-link%s %.2f times its rate in an all-to-all where its level's switches carry %.2f: %.0f "
                  "%% more time",
                  ups, ups == 1 ? " carries" : "s carry", need, regular, 100 * out.share);
  else
    std::snprintf(buf, sizeof buf,
                  "costs the all-to-all nothing: its %d up-link%s %.2f times its rate, within its level's %.2f", ups,
                  ups == 1 ? " carries" : "s carry", need, regular);
  out.text = buf;
  return out;
}

// What a technician does about a missing cable: both ends' empty ports, or (an up-link) the
// switch's empty ports and the switches its level's others reach that it does not.
std::string empty_ports(const fabric::Node& node) {
  std::string list;
  int shown = 0, more = 0;
  for (int p = 1; p <= node.num_ports(); ++p) {
    if (fabric::port_usable(node.ports[p])) continue;
    if (shown == 6) {
      ++more;
      continue;
    }
    list += (shown++ ? ", " : "") + std::to_string(p);
  }
  if (shown == 0) return node.desc + " (no empty port)";
  return node.desc + " (empty port" + (shown + more > 1 ? "s " : " ") + list +
         (more ? " and " + std::to_string(more) + " more" : "") + ")";
}

std::string missing_action(const FabricContext& c, int32_t a, int32_t b) {
  const fabric::Fabric& f = c.fabric;
  if (b >= 0)
    return "find the unplugged or dead cable between " + empty_ports(f.nodes[a]) + " and " + empty_ports(f.nodes[b]) +
           " (ibroute diff against an earlier scan names its ports)";
  const int level = c.structure.level[static_cast<size_t>(a)];
  auto ups_of = [&](size_t i) {
    std::set<int32_t> up;
    for (int p = 1; p <= f.nodes[i].num_ports(); ++p)
      if (const fabric::Port& port = f.nodes[i].ports[p];
          port.connected() && c.structure.level[static_cast<size_t>(port.peer_node)] == level + 1)
        up.insert(port.peer_node);
    return up;
  };
  // Its peers: the switches of its level that share an upper switch with it (its pod, in a tree of pods).
  const std::set<int32_t> own = ups_of(static_cast<size_t>(a));
  std::map<int32_t, int> reached;  // upper switches: by how many peers
  int peers = 0;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (!f.nodes[i].is_switch() || c.structure.level[i] != level || static_cast<int32_t>(i) == a) continue;
    const std::set<int32_t> up = ups_of(i);
    if (std::none_of(up.begin(), up.end(), [&](int32_t u) { return own.count(u) > 0; })) continue;
    ++peers;
    for (int32_t u : up) ++reached[u];
  }
  std::string lacks;
  int listed = 0;
  for (const auto& [u, k] : reached)
    if (2 * k > peers && !own.count(u) && listed++ < 4)
      lacks += (lacks.empty() ? "" : ", ") + f.nodes[static_cast<size_t>(u)].desc;
  return "check the cabling plan at " + empty_ports(f.nodes[a]) +
         (lacks.empty()
              ? std::string(": its level's switches reach no switch it lacks")
              : "; most of its peers (the switches of its level that share an upper switch with it) also reach " +
                    lacks) +
         "; if the plan has it so by design, nothing to fix";
}

// The scan: links down or not active, narrower or slower than their level, missing (pairs short
// of a cable that the scan before does not name).
void from_scan(const FabricContext& c, const ScanChanges* ch, Suspects& out) {
  const fabric::FabricStructure& st = c.structure;
  auto named = [&](const fabric::LinkRef& l, double confidence, const std::string& what) {
    if (l.a_port < 0) return;
    const int32_t link = c.links.id(l.a_node, l.a_port);
    out.add(out.at(link_name(c, link), link_base(c, link)), confidence,
            what + " (scan " + std::to_string(c.scan_id) + ")");
  };
  for (const fabric::LinkRef& l : st.inactive) named(l, 0.9, "cabled, but the port is not active");
  for (const fabric::LinkRef& l : st.slow) {
    const fabric::Port& p = c.fabric.nodes[l.a_node].ports[l.a_port];
    named(l, 0.8,
          printf_text("runs at %.0f Gb/s", c.links.gbps(c.links.id(l.a_node, l.a_port))) + " (" +
              std::to_string(p.width) + "x " + p.speed +
              printf_text(") where its level's links run at %.0f Gb/s", st.link_gbps));
  }
  // Missing cables: one fact per switch pair (two levels) or switch (above), ranked by what the
  // switch's shortfall costs the exchange — a by-design switch with fewer up-links than its
  // level's others but no fewer than it needs costs nothing and stays a finding.
  std::map<std::pair<int32_t, int32_t>, int> short_of;
  for (const fabric::LinkRef& l : st.missing) {
    const bool named = ch && std::any_of(ch->cables_gone.begin(), ch->cables_gone.end(), [&](const LostCable& x) {
                         return (x.a == l.a_node && x.b == l.b_node) || (x.a == l.b_node && x.b == l.a_node);
                       });
    if (!named) ++short_of[{l.a_node, l.b_node}];
  }
  for (const auto& [pair, count] : short_of) {
    const auto [a, b] = pair;
    const UplinkCost cost = uplink_cost(c, a);
    const std::string where =
        c.fabric.nodes[a].desc + (b >= 0 ? " -- " + c.fabric.nodes[b].desc : std::string(": up-links"));
    json s{{"kind", "link"},  {"where", where + " (missing)"}, {"guid", fabric::guid_hex(c.fabric.nodes[a].guid)},
           {"port", nullptr}, {"cost_share", cost.share},      {"action", missing_action(c, a, b)}};
    const std::string what = b >= 0 ? std::to_string(count) + (count == 1 ? " cable" : " cables") +
                                          " fewer than between the other pairs of these levels"
                                    : std::to_string(count) + " up-link" + (count == 1 ? "" : "s") +
                                          " fewer than the other switches of its level";
    out.add(out.at(s["where"], s), cost.share > 0 ? std::min(0.9, 0.5 + 2 * cost.share) : 0.2,
            what + " (scan " + std::to_string(c.scan_id) + "); " + cost.text);
  }
}

}  // namespace

schedule::RunDiagnosis run_diagnosis_of(const FabricContext& c, const RunReportInput::RunDiagnosisRead& r,
                                        const std::string& source) {
  schedule::RunDiagnosis d;
  d.pairs = r.pairs, d.median_share = r.median_share;
  if (r.suspects.empty()) return d;
  std::map<std::string, int32_t> by_name;
  for (size_t l = 0; l < c.links.size(); ++l)
    by_name.emplace(link_name(c, static_cast<int32_t>(l)), static_cast<int32_t>(l));
  for (const RunReportInput::RunSuspectRead& x : r.suspects) {
    const auto it = by_name.find(x.link);
    if (it == by_name.end())
      throw InputError(source + ": " + x.path + ": \"" + x.link + "\" is no link of scan " + std::to_string(c.scan_id));
    d.suspects.push_back({it->second, x.rank, x.receive, x.factor, x.transfers, x.slow_share, x.others, x.confidence});
  }
  return d;
}

json diagnosis_json(const FabricContext& c, DiagnosisInput in) {
  Suspects out;
  json evidence = json::object();
  from_run(c, in, out, evidence);
  from_nodes(in, out);
  from_scan(c, in.changes, out);
  for (const ErrorPort& e : in.errors) {
    const json base{
        {"kind", "link"},
        {"where", e.link},
        {"guid", e.guid.empty() ? json(nullptr) : json(e.guid)},
        {"port", e.port >= 0 ? json(e.port) : json(nullptr)},
        {"action", "reseat or replace the cable; errors that keep rising point at the cable or its transceiver"}};
    out.add(out.at(e.link, base), std::min(0.9, 0.4 + 0.1 * std::log10(static_cast<double>(e.errors) + 1)),
            e.what + " during the run");
  }
  evidence["errors"] = in.errors.size();
  // Links where most transfers were skipped or failed: the worst few (a stalled receiver's own link
  // stands out; the links before it carry its transfers among many others).
  std::vector<BadLink> bad = in.bad;
  auto share = [](const BadLink& b) {
    const uint64_t all = b.transfers + b.skipped + b.failed;
    return all ? static_cast<double>(b.skipped + b.failed) / static_cast<double>(all) : 0.0;
  };
  std::stable_sort(bad.begin(), bad.end(), [&](const BadLink& a, const BadLink& b) { return share(a) > share(b); });
  for (size_t i = 0; i < bad.size() && i < 5 && share(bad[i]) >= 0.5; ++i) {
    const BadLink& b = bad[i];
    const uint64_t all = b.transfers + b.skipped + b.failed;
    const json base{{"kind", "link"},
                    {"where", b.link},
                    {"guid", nullptr},
                    {"port", nullptr},
                    {"action", "find why transfers over it hang: the receiving host (its HCA, its load) or the cable"}};
    out.add(out.at(b.link, base), share(b) * std::min(1.0, static_cast<double>(all) / 32.0),
            std::to_string(b.skipped) + " skipped and " + std::to_string(b.failed) + " failed of " +
                std::to_string(all) + " transfers over it");
  }
  if (in.changes) from_changes(c, *in.changes, out);
  std::vector<json> list;
  for (auto& [where, s] : out.by_where) list.push_back(std::move(s));
  std::stable_sort(list.begin(), list.end(), [](const json& a, const json& b) {
    return a["confidence"].get<double>() > b["confidence"].get<double>();
  });
  json suspects = json::array();
  for (json& s : list) suspects.push_back(std::move(s));
  return {{"suspects", suspects}, {"evidence", evidence}};
}

std::string diagnosis_text(const json& d, size_t most) {
  const json& list = d["suspects"];
  size_t likely = 0;
  for (const json& s : list) likely += s["confidence"].get<double>() >= 0.5;
  std::string out = "diagnosis        " +
                    (likely ? std::to_string(likely) + " likely suspect(s)" : std::string("no likely suspect")) +
                    (list.size() > likely ? ", " + std::to_string(list.size() - likely) + " less likely" : "") + "\n";
  for (size_t i = 0; i < list.size() && i < most; ++i) {
    const json& s = list[i];
    out += "  " + std::to_string(i + 1) + "." + printf_text(" %.2f  ", s["confidence"].get<double>());
    out += s["kind"].get<std::string>() + " " + s["where"].get<std::string>() + ": ";
    for (size_t k = 0; k < s["evidence"].size(); ++k) out += (k ? "; " : "") + s["evidence"][k].get<std::string>();
    out += "\n     -> " + s["action"].get<std::string>() + "\n";
  }
  if (d.contains("confirmation") && d["confirmation"].value("run", false))
    for (const json& v : d["confirmation"]["verdicts"])
      out += "  confirmation run: " + v["link"].get<std::string>() + " " + v["verdict"].get<std::string>() +
             printf_text(" (its transfers at %.0f %% of the controls' rate)",
                         v["controls"].get<double>() > 0 ? 100 * v["share"].get<double>() / v["controls"].get<double>()
                                                         : 100.0) +
             "\n";
  else if (d.contains("confirmation"))
    out += "  confirmation run: not made (" + d["confirmation"].value("why", std::string()) + ")\n";
  return out;
}

}  // namespace ibroute::workflow
