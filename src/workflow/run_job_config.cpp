// The run's settings (runner::RunConfig) from a request and the schedule's timing: every option
// range-checked here, once, with the option named.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "ibroute/fabric/error.hpp"
#include "run_job.hpp"
#include "text_input.hpp"

namespace ibroute::workflow {

namespace {

// A comma-separated list of numbers within +-limit (tests' clock hooks).
std::vector<double> parse_numbers(const std::string& text, double limit, const char* option) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !(std::abs(x) <= limit))
      throw InputError(std::string(option) + ": '" + shown_text(item) + "' is not a number within +-" +
                       std::to_string(static_cast<int64_t>(limit)));
    v.push_back(x);
  }
  return v;
}

// "500us", "2ms", "0.5s", or plain nanoseconds; the whole text quoted when it is none of them.
int64_t parse_duration_ns(const std::string& text, const char* option) {
  static const std::pair<const char*, double> units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"", 1}};
  for (const auto& [u, f] : units) {
    const size_t n = std::strlen(u);
    if (text.size() <= n || text.compare(text.size() - n, n, u) != 0) continue;
    const std::string num = text.substr(0, text.size() - n);
    if (num.back() == 'u' || num.back() == 'm' || num.back() == 'n') continue;  // "ms" read as "s"
    std::vector<double> v;
    try {
      v = parse_numbers(num, n ? 1e6 : 1e15, option);
    } catch (const InputError&) {
      break;
    }
    if (v.size() == 1 && v[0] >= 0) return static_cast<int64_t>(v[0] * f);
    break;
  }
  throw InputError(std::string(option) + ": '" + shown_text(text) + "' is not a duration (e.g. 500us, 2ms, 1s)");
}

// The message size, the slot and the rounds: the schedule's slot at its own rate and message
// size, scaled to the run's.
void set_timing(const RunRequest& o, const schedule::Schedule& s, uint64_t round_slots, runner::RunConfig& cfg) {
  cfg.message_size = o.message_size.empty()
                         ? s.timing.message_size
                         : static_cast<uint64_t>(parse_quantity(o.message_size, true, "--message-size"));
  if (cfg.message_size == 0) cfg.message_size = 64 * 1024;
  cfg.message_size = (cfg.message_size + 7) / 8 * 8;
  const double rate = o.rate.empty() ? s.timing.rate : parse_quantity(o.rate, false, "--rate");
  if (!(rate > 0)) throw InputError("the schedule carries no rate: give --rate BYTES_PER_S");
  if (s.timing.slot_s > 0 && s.timing.rate > 0 && s.timing.message_size > 0)
    cfg.slot_per_message = s.timing.slot_s * s.timing.rate / static_cast<double>(s.timing.message_size);
  if (!(cfg.slot_per_message > 1e-9 && cfg.slot_per_message <= 1e9))
    throw InputError("the schedule's timing is out of range: slot_s x rate / message_size");
  cfg.slot_ns = cfg.slot_at(rate);
  const double round_s = static_cast<double>(cfg.slot_ns) * 1e-9 * static_cast<double>(round_slots);
  cfg.rounds = o.rounds         ? o.rounds
               : o.duration > 0 ? std::max<uint32_t>(1, static_cast<uint32_t>(o.duration / round_s + 0.5))
                                : 1;
  // Planned times are nanoseconds in 64 bits: a run of more than ~100 years is a mistake in the input.
  if (round_s * static_cast<double>(cfg.rounds) > 3e9)
    throw InputError("the run would last " + std::to_string(round_s * cfg.rounds / 86400 / 365) +
                     " years (slots x slot time x rounds): check the schedule's timing, --rate and --rounds");
  if (o.find_rate) {
    if (!o.trace_dir.empty())
      throw InputError("--trace and --find-rate: trace a run at the rate found, not the search");
    if (!(o.max_skipped >= 0 && o.max_skipped <= 1)) throw InputError("--max-skipped: give a share 0..1");
    if (o.find_rate_steps < 1 || o.find_rate_steps > 64) throw InputError("--find-rate-steps: give 1 .. 64");
    if (!(o.step_s >= 0.01 && o.step_s <= 3600)) throw InputError("--step-duration: give 0.01 .. 3600 seconds");
    if (!o.follow.empty()) throw InputError("--follow and --find-rate: search the rate on a fixed schedule");
    cfg.find_rate = true;
    cfg.max_skipped_share = o.max_skipped;
    cfg.find_rate_steps = o.find_rate_steps;
    cfg.find_rate_step_ns = static_cast<int64_t>(o.step_s * 1e9);
    cfg.rounds = std::max<uint32_t>(2, static_cast<uint32_t>(o.step_s / round_s));
  }
}

// The clock tracking, progress and anomaly settings.
void set_tracking(const RunRequest& o, runner::RunConfig& cfg) {
  if (!(o.resync_s >= 0 && o.resync_s <= 3600)) throw InputError("--resync: give 0 (never) .. 3600 seconds");
  if (!(o.progress_s >= 0 && o.progress_s <= 86400)) throw InputError("--progress: give 0 (none) .. 86400 seconds");
  if (o.resync_samples < 1 || o.resync_samples > 1000) throw InputError("--resync-samples: give 1 .. 1000");
  if (o.max_anomalies > 1'000'000) throw InputError("--max-anomalies: at most 1000000 per rank");
  cfg.sync_samples = o.sync_samples;
  cfg.resync_interval_ns = static_cast<int64_t>(o.resync_s * 1e9);
  cfg.resync_samples = o.resync_samples;
  cfg.progress_interval_ns = static_cast<int64_t>(o.progress_s * 1e9);
  cfg.anomaly_cap = o.max_anomalies;
  if (!o.late_threshold.empty()) cfg.late_threshold_ns = parse_duration_ns(o.late_threshold, "--late-threshold");
}

}  // namespace

runner::RunConfig run_config(const RunRequest& o, const schedule::Schedule& s, uint64_t round_slots) {
  runner::RunConfig cfg;
  cfg.device = o.device, cfg.port = o.port, cfg.gid_index = o.gid_index, cfg.sl = static_cast<uint8_t>(o.sl);
  cfg.unreliable = o.transport == "uc";
  set_timing(o, s, round_slots, cfg);
  set_tracking(o, cfg);
  cfg.skip_after = std::max<uint32_t>(1, o.skip_after);
  cfg.drain_ns = static_cast<int64_t>(o.drain_s * 1e9);
  cfg.finish_timeout_ns = static_cast<int64_t>(o.finish_timeout_s * 1e9);
  cfg.verify = !o.no_verify;
  cfg.trace_dir = o.trace_dir;
  cfg.schedule_name = s.name;
  cfg.follow.dead_after_ns = static_cast<int64_t>(o.dead_after_s * 1e9);
  for (double us : parse_numbers(o.test_skew_us, 1e12, "--test-clock-skew-us"))
    cfg.test_clock_skew_ns.push_back(static_cast<int64_t>(us * 1000));
  cfg.test_clock_ppm = parse_numbers(o.test_ppm, 1e5, "--test-clock-ppm");
  cfg.test_stall_rank = o.test_stall_rank, cfg.test_die_rank = o.test_die_rank, cfg.test_die_at = o.test_die_at;
  cfg.test_bad_rkey_rank = o.test_bad_rkey_rank;
  return cfg;
}

}  // namespace ibroute::workflow
