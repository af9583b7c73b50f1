// A schedule as a file carries it, for the format and peer tests: timed (1 MiB messages at the
// rule's rate), hosts identified by GUID and LID, the fabric it was planned for.
#pragma once

#include <algorithm>
#include <string>
#include <utility>

#include "fabrics.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/validate.hpp"

namespace ibroute::test {

inline schedule::ScheduleDoc doc_of(const World& w, schedule::Schedule s, std::string name) {
  schedule::ScheduleDoc d;
  s.name = std::move(name);
  const schedule::LoadReport r = schedule::evaluate(w.ctx, s.hosts, s.phases, false);
  // At the rate of one message per phase as long as the busiest phase: phases of equal length.
  const std::vector<double> need = schedule::phase_needs(w.ctx, r, 1 << 20);
  const double equal = (1 << 20) / *std::max_element(need.begin(), need.end());
  schedule::time_schedule(w.ctx, r, 1 << 20,
                          std::min(equal, schedule::fastest_rate(need, schedule::messages_per_node(s), 1 << 20)), s);
  d.schedule = std::move(s);
  d.identities = schedule::identify_hosts(w.f, d.schedule.hosts);
  d.fabric = {1, "2026-11-22T00:00:00Z", w.f.max_lmc()};
  d.created_at = "2026-11-22T00:00:01Z";
  return d;
}

}  // namespace ibroute::test
