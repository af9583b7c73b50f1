#include "counter_window.hpp"

#include <stdexcept>

#include "ibroute/fabric/live_scan.hpp"

namespace ibroute::cli {

using nlohmann::json;

std::optional<fabric::CounterSnapshot> live_counters(store::FabricStore* store, const FabricContext& c, const std::string& label, std::string& why) {
  try {
    fabric::CounterSnapshot s = fabric::read_counters(c.fabric, fabric::LiveScanOptions{});
    if (store) store->save_counters(c.scan_id, label, s);
    return s;
  } catch (const std::runtime_error& e) {
    why = std::string("the counters could not be read (") + e.what() + ")";
    return std::nullopt;
  }
}

json links_measured_json(const FabricContext& c, const CounterWindow* w, const fabric::LinkMeasures* m, const std::string& why, uint64_t rounds,
                         double seconds, double tick_ns) {
  if (!w || !m) return {{"measured", false}, {"why", why}};
  constexpr size_t kRows = 500;
  json rows = json::array();
  for (size_t i = 0; i < m->rows.size() && i < kRows; ++i) {
    const fabric::LinkMeasure& x = m->rows[i];
    const std::optional<double> r = x.ratio();
    rows.push_back({{"link", link_name(c, x.link)}, {"planned_bytes", x.planned_bytes}, {"measured_bytes", x.measured_bytes},
                    {"ratio", r ? json(*r) : json(nullptr)}, {"xmit_wait", x.xmit_wait},
                    {"wait_share", x.wait_share ? json(*x.wait_share) : json(nullptr)}, {"errors", x.errors}});
  }
  return {{"measured", true},
          {"between", w->between},
          {"rounds", rounds},
          {"seconds", seconds},
          {"xmit_wait_tick_ns", tick_ns > 0 ? json(tick_ns) : json(nullptr)},
          {"planned_links", m->planned_links},
          {"unread_links", m->unread_links},
          {"off_links", m->off_links},
          {"planned_bytes", m->planned_bytes},
          {"measured_bytes", m->measured_bytes},
          {"ratio", m->planned_bytes ? json(static_cast<double>(m->measured_bytes) / static_cast<double>(m->planned_bytes)) : json(nullptr)},
          {"worst_wait_share", m->worst_wait_share ? json(*m->worst_wait_share) : json(nullptr)},
          {"rows", rows},
          {"rows_omitted", m->rows.size() > kRows ? m->rows.size() - kRows : 0}};
}

}  // namespace ibroute::cli
