// The leaf pairs as an open shop (open_shop.hpp): where leaves hold unequal host counts, blocks of
// pairs last as long as their largest pair and leave the other leaves idle (3 000 random hosts of
// the 3 456-host tree: 7 848 phases where 6 710 would do); here each leaf moves on to its next pair
// as soon as its own is done, and the exchange takes as long as its busiest leaf needs.
// Internal to schedule/core.
#pragma once

#include <vector>

#include "leaf_blocks.hpp"
#include "leaf_pairs.hpp"

namespace ibroute::schedule {

// Appends the pairs' phases (every transfer between leaves once) to `phases`, each of `n` ranks.
// With `paths`, a pair's receiver is taken in a phase only where one of its paths from the sending
// leaf has room (its DLID set): the pairs' windows no longer move in step, so that what keeps the
// blocks' core links apart does not hold, and unrouted they left 22 % to wait. What a pair could
// not send in its time goes to `leftover` (for packing), else follows (append_leftover_phases).
void leaf_shop_phases(const std::vector<LeafGroup>& groups, size_t n, const LeafPaths* paths,
                      std::vector<Phase>& phases, std::vector<Transfer>* leftover = nullptr);

}  // namespace ibroute::schedule
