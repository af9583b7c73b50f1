// A schedule as a file carries it, for the format and peer tests: timed (1 MiB messages at the
// rule's rate), hosts identified by GUID and LID, the fabric it was planned for.
#pragma once

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
  s.timing = schedule::make_timing(w.ctx, r, 1 << 20, 0);
  d.schedule = std::move(s);
  d.identities = schedule::identify_hosts(w.f, d.schedule.hosts);
  d.fabric = {1, "2026-11-22T00:00:00Z", w.f.max_lmc()};
  d.created_at = "2026-11-22T00:00:01Z";
  return d;
}

}  // namespace ibroute::test
