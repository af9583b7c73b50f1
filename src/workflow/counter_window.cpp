#include "counter_window.hpp"

#include <algorithm>
#include <stdexcept>

#include "ibroute/fabric/live_scan.hpp"
#include "ibroute/schedule/admission.hpp"

namespace ibroute::workflow {

using nlohmann::json;

std::optional<fabric::CounterSnapshot> live_counters(store::FabricStore* store, const FabricContext& c,
                                                     const std::string& label, std::string& why) {
  try {
    fabric::CounterSnapshot s = fabric::read_counters(c.fabric, fabric::LiveScanOptions{});
    if (store) store->save_counters(c.scan_id, label, s);
    return s;
  } catch (const std::runtime_error& e) {
    why = std::string("the counters could not be read (") + e.what() + ")";
    return std::nullopt;
  }
}

namespace {
constexpr size_t kRows = 500;
}  // namespace

std::vector<ErrorPort> error_ports(const fabric::Fabric& f, const fabric::LinkIndex& links, const CounterWindow& w) {
  std::vector<ErrorPort> out;
  for (const fabric::PortDelta& d : w.deltas) {
    if (!d.errors()) continue;
    std::string what;
    for (size_t i = 0; i < fabric::kCounters; ++i)
      if (fabric::counter_info(i).error && d.delta[i])
        what +=
            (what.empty() ? "" : ", ") + std::string(fabric::counter_info(i).ib) + " +" + std::to_string(d.delta[i]);
    out.push_back({schedule::describe_link(f, links, links.id(d.node, d.port)), what, d.errors(),
                   fabric::guid_hex(f.nodes[d.node].guid), d.port});
  }
  std::stable_sort(out.begin(), out.end(), [](const ErrorPort& a, const ErrorPort& b) { return a.errors > b.errors; });
  if (out.size() > kRows) out.resize(kRows);
  return out;
}

std::vector<std::pair<std::string, double>> waiting_shares(const fabric::Fabric& f, const fabric::LinkIndex& links,
                                                           const fabric::LinkMeasures& m) {
  std::vector<const fabric::LinkMeasure*> w;
  for (const fabric::LinkMeasure& x : m.rows)
    if (x.wait_share && *x.wait_share > 0) w.push_back(&x);
  std::stable_sort(w.begin(), w.end(), [](auto* a, auto* b) { return *a->wait_share > *b->wait_share; });
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < w.size() && i < kRows; ++i)
    out.emplace_back(schedule::describe_link(f, links, w[i]->link), *w[i]->wait_share);
  return out;
}

namespace {

json error_links(const fabric::Fabric& f, const fabric::LinkIndex& links, const CounterWindow& w) {
  json list = json::array();
  for (const ErrorPort& e : error_ports(f, links, w))
    list.push_back({{"link", e.link}, {"what", e.what}, {"errors", e.errors}, {"guid", e.guid}, {"port", e.port}});
  return list;
}

json waiting_links(const fabric::Fabric& f, const fabric::LinkIndex& links, const fabric::LinkMeasures& m) {
  json list = json::array();
  for (const auto& [link, share] : waiting_shares(f, links, m)) list.push_back({{"link", link}, {"wait_share", share}});
  return list;
}

}  // namespace

json links_measured_json(const fabric::Fabric& f, const fabric::LinkIndex& links, const CounterWindow* w,
                         const fabric::LinkMeasures* m, const std::string& why, uint64_t rounds, double seconds,
                         double tick_ns) {
  if (!w || !m) return {{"measured", false}, {"why", why}};
  json rows = json::array();
  for (size_t i = 0; i < m->rows.size() && i < kRows; ++i) {
    const fabric::LinkMeasure& x = m->rows[i];
    const std::optional<double> r = x.ratio();
    rows.push_back({{"link", schedule::describe_link(f, links, x.link)},
                    {"planned_bytes", x.planned_bytes},
                    {"measured_bytes", x.measured_bytes},
                    {"ratio", r ? json(*r) : json(nullptr)},
                    {"xmit_wait", x.xmit_wait},
                    {"wait_share", x.wait_share ? json(*x.wait_share) : json(nullptr)},
                    {"errors", x.errors}});
  }
  return {
      {"measured", true},
      {"between", w->between},
      {"rounds", rounds},
      {"seconds", seconds},
      {"xmit_wait_tick_ns", tick_ns > 0 ? json(tick_ns) : json(nullptr)},
      {"planned_links", m->planned_links},
      {"unread_links", m->unread_links},
      {"off_links", m->off_links},
      {"planned_bytes", m->planned_bytes},
      {"measured_bytes", m->measured_bytes},
      {"ratio", m->planned_bytes ? json(static_cast<double>(m->measured_bytes) / static_cast<double>(m->planned_bytes))
                                 : json(nullptr)},
      {"worst_wait_share", m->worst_wait_share ? json(*m->worst_wait_share) : json(nullptr)},
      {"rows", rows},
      {"errors", error_links(f, links, *w)},
      {"waiting", waiting_links(f, links, *m)},
      {"rows_omitted", m->rows.size() > kRows ? m->rows.size() - kRows : 0}};
}

}  // namespace ibroute::workflow
