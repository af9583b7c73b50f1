// The schedule exchange format (docs/schedule-format.md), versions 1 and 2. What is read must
// write back and read again to the same schedule (groups included).
#include <cstdlib>

#include "fuzz_common.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ibroute::schedule;
  return ibroute::fuzz::run([&] {
    ScheduleDoc doc = from_json(ibroute::fuzz::text(data, size));
    const std::string text = to_json(doc);
    ScheduleDoc back;
    try {
      back = from_json(text);
    } catch (const ibroute::InputError& e) {
      std::fprintf(stderr, "fuzz: a schedule that was read does not read back: %s\n", e.what());
      std::abort();
    }
    if (back.schedule.phases != doc.schedule.phases || back.schedule.senders != doc.schedule.senders ||
        back.schedule.receivers != doc.schedule.receivers || back.identities != doc.identities || to_json(back) != text) {
      std::fprintf(stderr, "fuzz: a schedule changed on the way out and back in\n");
      std::abort();
    }
    (void)to_csv(doc);
    (void)check_pairs(doc.schedule);
    (void)SliceWriter(doc).slice(doc.schedule.hosts.size() - 1);
  });
}
