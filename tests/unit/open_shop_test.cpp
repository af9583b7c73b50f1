// Preemptive open shop (schedule/core/open_shop.hpp): each segment a permutation, the lengths
// adding up to the largest line sum, every pairing given its duration.
#include "open_shop.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace ibroute::schedule;

namespace {

using Matrix = std::vector<std::vector<uint64_t>>;

uint64_t largest_line(const Matrix& d) {
  uint64_t most = 0;
  for (size_t x = 0; x < d.size(); ++x) {
    uint64_t row = 0, col = 0;
    for (size_t y = 0; y < d.size(); ++y) row += d[x][y], col += d[y][x];
    most = std::max({most, row, col});
  }
  return most;
}

void expect_schedule(const Matrix& d) {
  const std::vector<ShopSegment> segs = open_shop(d);
  const size_t g = d.size();
  Matrix given(g, std::vector<uint64_t>(g, 0));
  uint64_t total = 0;
  for (const ShopSegment& s : segs) {
    ASSERT_EQ(s.column.size(), g);
    std::vector<uint32_t> sorted = s.column;
    std::sort(sorted.begin(), sorted.end());
    for (size_t y = 0; y < g; ++y) ASSERT_EQ(sorted[y], y) << "not a permutation";
    EXPECT_GT(s.length, 0u);
    total += s.length;
    for (size_t x = 0; x < g; ++x) given[x][s.column[x]] += s.length;
  }
  EXPECT_EQ(total, largest_line(d));
  EXPECT_EQ(open_shop_length(d), largest_line(d));
  for (size_t x = 0; x < g; ++x)
    for (size_t y = 0; y < g; ++y) EXPECT_GE(given[x][y], d[x][y]) << "pairing " << x << " -> " << y;
}

}  // namespace

TEST(OpenShop, SegmentsArePermutationsThatGiveEveryPairingItsTimeWithinTheLargestLineSum) {
  std::mt19937 rng(11);
  for (size_t g : {1, 2, 3, 5, 8, 13, 40}) {
    for (int round = 0; round < 4; ++round) {
      Matrix d(g, std::vector<uint64_t>(g, 0));
      for (auto& row : d)
        for (auto& v : row) v = rng() % 3 == 0 ? 0 : rng() % 50;  // a third empty: sparse supports too
      if (g > 2) std::fill(d[1].begin(), d[1].end(), 0);          // a row with nothing to do
      expect_schedule(d);
    }
  }
}

TEST(OpenShop, LeafPairsOfUnequalSizesTakeAsLongAsTheBusiestLeaf) {
  // Leaves of 18, 16 and 12 hosts over 8 up-links, each pair n x m / 8 phases (rounded up): the
  // 18-host leaf is busy throughout, the others wait only where their partners are busy.
  const std::vector<uint64_t> hosts = {18, 16, 12, 18, 9};
  Matrix d(hosts.size(), std::vector<uint64_t>(hosts.size(), 0));
  for (size_t x = 0; x < hosts.size(); ++x)
    for (size_t y = 0; y < hosts.size(); ++y)
      if (x != y) d[x][y] = (hosts[x] * hosts[y] + 7) / 8;
  expect_schedule(d);
  EXPECT_EQ(open_shop_length(d), d[0][1] + d[0][2] + d[0][3] + d[0][4]);
}

TEST(OpenShop, NothingToScheduleGivesNoSegments) {
  EXPECT_TRUE(open_shop({}).empty());
  EXPECT_TRUE(open_shop(Matrix(4, std::vector<uint64_t>(4, 0))).empty());
}
