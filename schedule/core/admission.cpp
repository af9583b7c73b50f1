#include "ibroute/schedule/admission.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "ibroute/fabric/error.hpp"

namespace ibroute::schedule {

using namespace ibroute::fabric;

std::string describe_link(const Fabric& f, const LinkIndex& links, int32_t link) {
  const Node& n = f.nodes[links.node(link)];
  int p = links.port(link);
  const Port& port = n.ports[p];
  std::string s = n.desc + "[" + std::to_string(p) + "]";
  if (port.connected()) s += " -> " + f.nodes[port.peer_node].desc + "[" + std::to_string(port.peer_port) + "]";
  return s;
}

std::string rate_text(double bytes_per_s) {
  char buf[64];
  // Rates as commands print them (the plan's and accept's figures go through here): Gb/s as links
  // are sold, the bytes in brackets; three significant digits, never in exponent form ("8000 Gb/s (1000 GB/s)", not
  // "1e+03").
  const double gb = bytes_per_s / 1e9;
  std::snprintf(buf, sizeof buf, gb * 8 >= 100 ? "%.0f Gb/s (%.4g GB/s)" : "%.3g Gb/s (%.3g GB/s)", gb * 8, gb);
  return buf;
}

double fastest_rate(const std::vector<double>& need_s, size_t messages, uint64_t message_size) {
  const double total = std::accumulate(need_s.begin(), need_s.end(), 0.0);
  return total > 0 ? static_cast<double>(messages) * static_cast<double>(message_size) / total : 0;
}

namespace {

// The shortest phase length `floor` such that sum(max(floor, need)) is `target`: the phases that
// need less than one message at the rate asked are stretched to it, or as near as the total allows.
double floor_for(const std::vector<double>& need_s, double upper, double target) {
  auto total = [&](double f) {
    double t = 0;
    for (double n : need_s) t += std::max(f, n);
    return t;
  };
  if (total(upper) <= target) return upper;
  double lo = 0, hi = upper;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (total(mid) <= target ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

PhaseTimes time_phases(const std::vector<double>& need_s, size_t messages, uint64_t message_size, double rate,
                       const std::string& why) {
  if (message_size == 0) throw InputError("the message size must be more than 0 bytes");
  if (rate < 0 || !std::isfinite(rate)) throw InputError("the rate must be positive");
  const double fastest = fastest_rate(need_s, messages, message_size);
  if (need_s.empty() || messages == 0 || !(fastest > 0))
    throw InputError("no transfer of this schedule has a working route: no rate is possible");
  if (rate > fastest * (1 + 1e-9))
    throw InputError("rate " + rate_text(rate) + " per node is more than the fabric carries: at most " +
                     rate_text(fastest) + (why.empty() ? "" : ", because " + why));
  const double m = static_cast<double>(message_size);
  // Each phase's length: what its links need, and at least one message at the rate asked, as far
  // as the round's time at that rate allows.
  const double floor = rate > 0 ? floor_for(need_s, m / rate, static_cast<double>(messages) * m / rate) : 0;
  std::vector<double> len(need_s.size());
  for (size_t k = 0; k < len.size(); ++k) len[k] = std::max(floor, need_s[k]);
  const double shortest = std::max(*std::min_element(len.begin(), len.end()), 1e-12);
  const double longest = *std::max_element(len.begin(), len.end());
  // Whole slots of a fine unit; every phase rounded up (never shorter than it needs).
  const double per = std::clamp(std::floor(kMaxPhaseSlots * shortest / longest), 1.0, double(kSlotsPerPhase));
  double unit = shortest / per;
  PhaseTimes t;
  t.fastest = fastest;
  t.slots.resize(len.size());
  uint32_t g = 0;
  for (size_t k = 0; k < len.size(); ++k) {
    t.slots[k] = static_cast<uint32_t>(std::clamp(std::ceil(len[k] / unit * (1 - 1e-12)), 1.0, double(kMaxPhaseSlots)));
    g = std::gcd(g, t.slots[k]);
  }
  for (uint32_t& s : t.slots) s /= g;
  unit *= g;
  const uint64_t total = std::accumulate(t.slots.begin(), t.slots.end(), uint64_t{0});
  if (std::all_of(t.slots.begin(), t.slots.end(), [&](uint32_t s) { return s == t.slots[0]; })) {
    unit *= t.slots[0];
    t.slots.clear();
  }
  t.timing.message_size = message_size;
  t.timing.slot_s = unit;
  t.timing.rate = static_cast<double>(messages) * m /
                  (t.slots.empty() ? unit * static_cast<double>(len.size()) : unit * static_cast<double>(total));
  return t;
}

std::vector<double> phase_needs(const EvalContext& ctx, const LoadReport& load, uint64_t message_size) {
  const double host = ctx.structure.host_gbps > 0 ? ctx.structure.host_gbps : 1;
  const double message_s = static_cast<double>(message_size) * 8 / (host * 1e9);
  std::vector<double> need(load.phase_time.size());
  for (size_t k = 0; k < need.size(); ++k) need[k] = std::max(load.phase_time[k], 1.0) * message_s;
  return need;
}

double time_schedule(const EvalContext& ctx, const LoadReport& load, uint64_t message_size, double rate, Schedule& s) {
  // The link that carries the most over the round, at its own rate: what a higher rate would need more of.
  std::string why;
  double busiest = 0;
  for (size_t l = 0; l < load.link_total.size(); ++l) {
    const double t = load.link_total[l] / std::max(ctx.gbps[l], 1e-9);
    if (t > busiest) {
      busiest = t;
      why = "its phases take that long on their busiest links; the busiest over the exchange, " +
            describe_link(ctx.fabric, ctx.links, static_cast<int32_t>(l)) + ", carries " +
            std::to_string(load.link_total[l]) + " transfers at " + rate_text(ctx.gbps[l] * 1e9 / 8);
    }
  }
  PhaseTimes t = time_phases(phase_needs(ctx, load, message_size), messages_per_node(s), message_size, rate, why);
  s.timing = t.timing;
  s.slots = std::move(t.slots);
  return t.fastest;
}

size_t messages_per_node(const Schedule& s) {
  std::vector<uint32_t> sent(s.hosts.size(), 0);
  for (const Phase& p : s.phases)
    for (size_t i = 0; i < p.dst.size() && i < sent.size(); ++i) sent[i] += p.dst[i] >= 0;
  return sent.empty() ? 0 : *std::max_element(sent.begin(), sent.end());
}

double planned_seconds(const Schedule& s) { return static_cast<double>(slot_starts(s).back()) * s.timing.slot_s; }

double planned_rate(const Schedule& s) {
  const double t = planned_seconds(s);
  return t > 0 ? static_cast<double>(messages_per_node(s)) * static_cast<double>(s.timing.message_size) / t : 0;
}

}  // namespace ibroute::schedule
