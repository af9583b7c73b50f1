// The timing rule (admission.hpp): the rate asked is the rate planned. Checked by summing the
// slots the rule hands out, not by the rule's own figure.
#include <gtest/gtest.h>

#include <numeric>

#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/admission.hpp"

using namespace ibroute::schedule;

namespace {

constexpr uint64_t kMessage = 1 << 20;
constexpr double kHost = 32e9 / 8;  // QDR: bytes/s of a host link
const double kMessageS = kMessage / kHost;

// Phases needing `loads[k]` message-times at the host rate.
std::vector<double> needs(const std::vector<double>& loads) {
  std::vector<double> n;
  for (double l : loads) n.push_back(l * kMessageS);
  return n;
}

std::vector<double> lengths(const PhaseTimes& t, size_t phases) {
  std::vector<double> len;
  for (size_t k = 0; k < phases; ++k) len.push_back((t.slots.empty() ? 1 : t.slots[k]) * t.timing.slot_s);
  return len;
}

// Bytes per node over the sum of the phases' lengths.
double achieved(const PhaseTimes& t, size_t phases, size_t messages) {
  const std::vector<double> len = lengths(t, phases);
  return static_cast<double>(messages * kMessage) / std::accumulate(len.begin(), len.end(), 0.0);
}

// The 96-host tree of the issue: 8 phases of 1 transfer per link, 87 of 2.
std::vector<double> tree96() {
  std::vector<double> loads(8, 1.0);
  loads.insert(loads.end(), 87, 2.0);
  return loads;
}

}  // namespace

TEST(Timing, RateAskedIsRatePlanned) {
  const std::vector<double> need = needs(tree96());
  const double fastest = fastest_rate(need, 95, kMessage);
  EXPECT_NEAR(fastest, 95 * kHost / (8 + 2 * 87), 1);
  for (double share : {0.10, 0.25, 0.40, 0.5, 0.52, 1.0}) {  // of a host link; 1.0 below means the fastest
    const double asked = share == 1.0 ? fastest : share * kHost;
    const PhaseTimes t = time_phases(need, 95, kMessage, asked);
    const double got = achieved(t, need.size(), 95);
    EXPECT_GE(got, 0.97 * asked) << share;
    EXPECT_LE(got, asked * (1 + 1e-9)) << share;
    EXPECT_NEAR(t.timing.rate, got, got * 1e-9) << share;  // the figure stored is the rate the slots give
    const std::vector<double> len = lengths(t, need.size());
    for (size_t k = 0; k < len.size(); ++k) {
      EXPECT_GE(len[k], need[k] * (1 - 1e-12)) << share << " phase " << k;  // long enough for its busiest link
      if (asked <= 0.5 * kHost) {
        EXPECT_GE(len[k], kMessage / asked * (1 - 1e-12)) << share << " phase " << k;
      }
    }
  }
  // 12 Gb/s on 32 Gb/s links: two transfers fit one message-time at 12 Gb/s, so every phase is one slot.
  const PhaseTimes t12 = time_phases(need, 95, kMessage, 12e9 / 8);
  EXPECT_TRUE(t12.slots.empty());
  EXPECT_NEAR(t12.timing.slot_s, kMessage / 1.5e9, 1e-12);
}

TEST(Timing, FastestWhenNoRateIsAsked) {
  const std::vector<double> need = needs(tree96());
  const PhaseTimes t = time_phases(need, 95, kMessage, 0);
  const std::vector<double> len = lengths(t, need.size());
  for (size_t k = 0; k < len.size(); ++k) {
    EXPECT_GE(len[k], need[k] * (1 - 1e-12));
    EXPECT_LE(len[k], need[k] * (1 + 1.0 / kSlotsPerPhase));
  }
  EXPECT_EQ(t.slots.front(), 1u);  // reduced by their common divisor: 1 and 2
  EXPECT_EQ(t.slots.back(), 2u);
}

TEST(Timing, MorePhasesThanMessages) {
  // Packed phases of waiting transfers: 12 phases for 10 messages a node. At a low rate the short
  // phases are shortened just enough that the round keeps the rate.
  const std::vector<double> need = needs({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1});
  const PhaseTimes t = time_phases(need, 10, kMessage, 0.25 * kHost);
  EXPECT_GE(achieved(t, need.size(), 10), 0.97 * 0.25 * kHost);
  EXPECT_LE(achieved(t, need.size(), 10), 0.25 * kHost * (1 + 1e-9));
}

TEST(Timing, RefusesMoreThanTheLinksCarry) {
  const std::vector<double> need = needs(tree96());
  const double fastest = fastest_rate(need, 95, kMessage);
  try {
    time_phases(need, 95, kMessage, fastest * 1.05, "l001[13] is busy");
    FAIL() << "no refusal";
  } catch (const ibroute::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at most " + rate_text(fastest)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("l001[13] is busy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(time_phases(need, 95, 0, 0), ibroute::InputError);
  EXPECT_THROW(time_phases({}, 95, kMessage, 0), ibroute::InputError);
}

TEST(Timing, WidelyDifferentPhasesStayInRange) {
  // A phase over a 1x link at SDR next to ones at full rate: slots stay within what a reader takes.
  std::vector<double> loads(50, 1.0);
  loads.push_back(40000.0);
  const PhaseTimes t = time_phases(needs(loads), 50, kMessage, 0);
  ASSERT_FALSE(t.slots.empty());
  for (uint32_t s : t.slots) EXPECT_LE(s, kMaxPhaseSlots);
  EXPECT_GE(lengths(t, loads.size()).back(), 40000 * kMessageS * (1 - 1e-12));
}
