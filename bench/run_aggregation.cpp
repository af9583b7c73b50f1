// bench/run_aggregation: the runner's results path at full scale without hardware. Synthetic
// transfers for RANKS ranks x ROUNDS rounds of an all-to-all (default 864 x 414: 60 s of the
// demo plan, 3.1e8 transfers) go through exactly what the data plane calls per transfer
// (RankStats::posted, ::completed), each rank's aggregate through its byte form, rank 0's
// decode and merge, the summary, the JSON report and the database row. Prints JSON.
//
//   run_aggregation [RANKS] [ROUNDS] [DB]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "data_plane.hpp"
#include "fabric_store.hpp"
#include "ibroute/runner/run_plan.hpp"
#include "ibroute/runner/run_report.hpp"
#include "ibroute/runner/run_stats.hpp"
#include "ibroute/schedule/schedule.hpp"
#include "run_report_write.hpp"

using namespace ibroute;
using namespace ibroute::runner;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

long peak_rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

// xorshift: cheap enough not to hide the aggregation's own cost.
struct Rng {
  uint64_t x;
  uint64_t next() {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const size_t ranks = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 864;
  const uint32_t rounds = argc > 2 ? static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10)) : 414;
  const std::string db = argc > 3 ? argv[3] : "/tmp/ibroute-bench-aggregation.db";
  const uint64_t message = 1 << 20;
  const int64_t slot_ns = 168'000;

  schedule::Schedule s;
  s.name = "bench";
  s.hosts.resize(ranks);
  for (size_t i = 0; i < ranks; ++i) s.hosts[i].name = "node" + std::to_string(1000 + i), s.hosts[i].node = -1;
  s.phases = schedule::shift_phases(ranks);
  for (auto& ph : s.phases)
    for (size_t i = 0; i < ranks; ++i) ph.dlid[i] = static_cast<uint16_t>(1 + ph.dst[i] * 4 + (i % 4));
  const std::vector<Channel> channels = channels_of(s);
  const int64_t planned_ns = static_cast<int64_t>(rounds) * static_cast<int64_t>(s.phases.size()) * slot_ns;

  // Every rank aggregates its transfers; rank 0 decodes and merges each message as it comes.
  RunMerge merged(channels, ranks, planned_ns, 1000);
  double aggregate_s = 0, encode_s = 0, merge_s = 0;
  uint64_t transfers = 0;
  size_t biggest_message = 0, all_messages = 0;
  Rng rng{0x9E3779B97F4A7C15ull};
  for (size_t r = 0; r < ranks; ++r) {
    RankStats st = RankStats::shaped(channels, static_cast<int32_t>(r), planned_ns);
    SendPlan plan(s, channels, static_cast<int32_t>(r), slot_ns);
    // Send channel index per plan entry (the data plane keeps the same map).
    std::vector<uint32_t> send_of(plan.per_round());
    for (size_t k = 0; k < plan.per_round(); ++k) {
      const uint32_t ch = plan.at(k).channel;
      send_of[k] = static_cast<uint32_t>(std::lower_bound(st.send_channels.begin(), st.send_channels.end(), ch) -
                                         st.send_channels.begin());
    }
    const uint64_t n = plan.count(rounds);
    const auto t = Clock::now();
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t x = rng.next();
      const uint32_t send = send_of[k % send_of.size()];
      const uint32_t dest = st.dest_of_send[send];
      const auto late = static_cast<int64_t>(x & 0x3ffff);         // 0 .. 262 us
      const auto busy = static_cast<int64_t>(80'000 + (x >> 46));  // 80 .. 342 us
      st.posted(send, dest, late);
      st.completed(send, dest, busy, message,
                   static_cast<int64_t>(k / send_of.size()) * static_cast<int64_t>(s.phases.size()) * slot_ns);
    }
    aggregate_s += since(t);
    transfers += n;
    for (auto& a : st.arrived) a = rounds;  // the receiver's count: everything arrived
    auto te = Clock::now();
    std::vector<uint8_t> bytes = encode(st);
    encode_s += since(te);
    biggest_message = std::max(biggest_message, bytes.size());
    all_messages += bytes.size();
    auto tm = Clock::now();
    merged.add(decode(bytes, channels, ranks));
    merge_s += since(tm);
  }
  auto ts = Clock::now();
  RunSummary sum = summarise(s, merged, {}, nullptr, nullptr);
  RunOutcome out;
  out.root = true;
  out.channels = channels;
  out.rounds_run = rounds;
  out.slot_ns = slot_ns;
  for (size_t r = 1; r < ranks; ++r) {
    RankClock rc;
    rc.rank = static_cast<int32_t>(r);
    rc.before.samples = 200;
    out.clocks.push_back(rc);
  }
  out.merged = std::make_unique<RunMerge>(std::move(merged));
  workflow::RunJsonContext jc{s, message, slot_ns, rounds, 2, 0, out, sum, nullptr, 1'000'000'000, 0};
  const std::string report = workflow::run_report_json(jc).dump();
  const double report_s = since(ts);

  std::filesystem::remove(db);
  uintmax_t before = 0, after = 0;
  { store::FabricStore fs(db, store::Access::create); }
  before = std::filesystem::file_size(db);
  {
    store::FabricStore fs(db, store::Access::read_write);
    store::RunRow row;
    row.ranks = static_cast<int64_t>(ranks), row.rounds = rounds;
    row.planned = static_cast<int64_t>(sum.planned), row.ok = static_cast<int64_t>(sum.ok);
    row.report_json = report;
    fs.save_run(row);
  }
  after = std::filesystem::file_size(db);
  std::filesystem::remove(db);

  // The design before: a 64-byte record per transfer gathered at rank 0, and a report row per
  // transfer (~60 bytes of JSON each, as measured on VM runs).
  const double old_records = static_cast<double>(transfers) * 64, old_json = static_cast<double>(transfers) * 60;
  nlohmann::json j{{"ranks", ranks},
                   {"rounds", rounds},
                   {"transfers", transfers},
                   {"aggregate_ns_per_transfer", aggregate_s * 1e9 / static_cast<double>(transfers)},
                   {"encode_s_all_ranks", encode_s},
                   {"message_bytes_max", biggest_message},
                   {"message_bytes_all", all_messages},
                   {"merge_s", merge_s},
                   {"summary_and_report_s", report_s},
                   {"report_bytes", report.size()},
                   {"db_growth_bytes", after - before},
                   {"peak_rss_kib", peak_rss_kib()},
                   {"old_design_records_bytes", old_records},
                   {"old_design_report_bytes", old_json},
                   {"memory_ratio_old_over_new", old_records / (static_cast<double>(peak_rss_kib()) * 1024)},
                   {"report_ratio_old_over_new", old_json / static_cast<double>(report.size())}};
  std::printf("%s\n", j.dump(1).c_str());
  return 0;
}
