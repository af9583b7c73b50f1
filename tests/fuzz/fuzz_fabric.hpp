// The fabric the targets that read a file against a fabric share: two leaves, five hosts, one
// spine, built in memory once.
#pragma once

#include "ibroute/fabric/synthetic.hpp"

namespace ibroute::fuzz {

inline const fabric::Fabric& small_fabric() {
  static const fabric::Fabric f = [] {
    fabric::FatTreeSpec t;
    t.leaves = 2, t.hosts_per_leaf = 3, t.uplinks = 1, t.spines = 1, t.hosts = 5;
    return fabric::build_fat_tree(t);
  }();
  return f;
}

}  // namespace ibroute::fuzz
