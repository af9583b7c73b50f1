#pragma once
// The switches joined below each level of a tree: a leaf below level 2, a pod (or a director's
// line cards) below level 3, ... What enters and leaves such a group crosses the links between
// it and the level above, which bounds any plan (efficiency.cpp over the whole exchange,
// lower_bound.cpp per phase).
#include <cstdint>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"

namespace ibroute::schedule {

struct LevelGroups {
  // groups[top - 1][node]: for top = 1 .. levels - 1, the group of switches of levels 1 .. top
  // joined by working links that holds the node, named by one of its switches; -1 where the node
  // is not a switch of those levels.
  std::vector<std::vector<int32_t>> groups;
  int32_t of(int top, int32_t node) const { return groups[static_cast<size_t>(top - 1)][static_cast<size_t>(node)]; }
};

LevelGroups level_groups(const EvalContext& ctx);

}  // namespace ibroute::schedule
