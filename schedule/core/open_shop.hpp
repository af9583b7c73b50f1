// Preemptive open-shop scheduling of a square matrix of durations: entry (x, y) is how long row x
// must be paired with column y; a row is paired with one column at a time and a column with one
// row. The least possible makespan is the largest row or column sum (Gonzalez and Sahni), reached
// by padding every line to that sum and splitting the padded matrix into permutations
// (Birkhoff-von Neumann): each permutation runs for the smallest entry it uses.
// Leaf pairs of unequal host counts (leaf_blocks.hpp) are scheduled this way, so that no leaf
// waits for another block's largest pair.
// Internal to schedule/core.
#pragma once

#include <cstdint>
#include <vector>

namespace ibroute::schedule {

struct ShopSegment {
  std::vector<uint32_t> column;  // of each row, a permutation; a padded pairing counts as real
  uint64_t length = 0;
};

// The segments, in order; their lengths add up to the largest line sum of `durations` (square,
// every row as long as the number of rows). Pairing (x, y) is given at least durations[x][y] in all.
std::vector<ShopSegment> open_shop(const std::vector<std::vector<uint64_t>>& durations);

// The largest row or column sum: the makespan open_shop reaches.
uint64_t open_shop_length(const std::vector<std::vector<uint64_t>>& durations);

}  // namespace ibroute::schedule
