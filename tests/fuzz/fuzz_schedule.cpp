// The schedule exchange format (docs/schedule-format.md), versions 1, 2 and 3, whole files, per-node
// slices (1..4) and the slices' host table. What is read must write back and read again to the same
// schedule (groups included), the slice written of it must read back to that rank's transfers, and
// the host table written of it to its hosts.
#include <cstdlib>

#include "fuzz_common.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ibroute::schedule;
  return ibroute::fuzz::run([&] {
    const std::string_view in = ibroute::fuzz::text(data, size);
    if (in.find("ibroute-schedule-hosts") != std::string_view::npos) {
      (void)hosts_file_from_json(in);  // read and range-checked
      return;
    }
    AnyScheduleDoc any = any_from_json(in);
    if (any.slice) return;  // read and range-checked: nothing is written from a slice
    ScheduleDoc doc = std::move(*any.whole);
    const std::string text = to_json(doc);
    ScheduleDoc back;
    try {
      back = from_json(text);
    } catch (const ibroute::InputError& e) {
      std::fprintf(stderr, "fuzz: a schedule that was read does not read back: %s\n", e.what());
      std::abort();
    }
    if (back.schedule.phases != doc.schedule.phases || back.schedule.slots != doc.schedule.slots ||
        back.schedule.senders != doc.schedule.senders || back.schedule.receivers != doc.schedule.receivers ||
        back.identities != doc.identities || to_json(back) != text) {
      std::fprintf(stderr, "fuzz: a schedule changed on the way out and back in\n");
      std::abort();
    }
    (void)to_csv(doc);
    (void)check_pairs(doc.schedule);
    const size_t last = doc.schedule.hosts.size() - 1;
    SliceDoc slice;
    try {
      slice = slice_from_json(SliceWriter(doc).slice(last));
    } catch (const ibroute::InputError& e) {
      std::fprintf(stderr, "fuzz: a slice that was written does not read back: %s\n", e.what());
      std::abort();
    }
    std::vector<SliceTransfer> sends;
    for (size_t k = 0; k < doc.schedule.phases.size(); ++k)
      if (const Phase& ph = doc.schedule.phases[k]; ph.dst[last] >= 0)
        sends.push_back({static_cast<uint32_t>(k), ph.dst[last], ph.dlid[last]});
    if (slice.rank != last || slice.sends != sends || slice.doc.identities[last] != doc.identities[last]) {
      std::fprintf(stderr, "fuzz: a slice does not read back to its rank's sends\n");
      std::abort();
    }
    ScheduleDoc table;
    try {
      table = hosts_file_from_json(hosts_file_json(doc));
    } catch (const ibroute::InputError& e) {
      std::fprintf(stderr, "fuzz: a host table that was written does not read back: %s\n", e.what());
      std::abort();
    }
    if (table.identities != doc.identities || table.schedule.senders != doc.schedule.senders) {
      std::fprintf(stderr, "fuzz: a host table changed on the way out and back in\n");
      std::abort();
    }
  });
}
