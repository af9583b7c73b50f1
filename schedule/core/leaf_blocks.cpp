#include "leaf_blocks.hpp"

#include <algorithm>
#include <numeric>

namespace ibroute::schedule {

namespace {

struct Group {
  std::vector<int32_t> ranks;  // in ring order
  int up = 1;                  // transfers its up-links carry at once
  bool later = false;          // receives its windows one later than its twin (leaf_block_phases)
};

std::vector<Group> groups_of(const Ring& ring, const Leaves& leaves, size_t period) {
  std::vector<int32_t> ranks = ranks_at(ring);
  std::erase(ranks, -1);
  std::vector<Group> out;
  std::vector<int> slot(leaves.up.size(), -1);
  std::vector<size_t> twins(std::max<size_t>(period, 1), 0);  // groups so far whose first place has this residue
  for (int32_t r : ranks) {
    const int l = leaves.of_rank[static_cast<size_t>(r)];
    int* s = l < 0 ? nullptr : &slot[static_cast<size_t>(l)];
    if (!s || *s < 0) {
      const size_t residue = period > 1 ? ring.place[static_cast<size_t>(r)] % period : 0;
      out.push_back({{}, l < 0 ? 1 : std::max(1, leaves.up[static_cast<size_t>(l)]), period > 1 && twins[residue]++ % 2 == 1});
      if (s) *s = static_cast<int>(out.size() - 1);
    }
    out[s ? static_cast<size_t>(*s) : out.size() - 1].ranks.push_back(r);
  }
  return out;
}

// One leaf pair's exchange as a sequence: the complete bipartite graph as max(n, m) matchings, the
// c-th pairing the smaller side's q-th host with the larger side's (q + c)-th, each in q order.
// Any `width` <= min(n, m) consecutive transfers have distinct senders and receivers (but where a
// window straddles two matchings of exactly `width`), and their receivers are consecutive.
struct Pair {
  const Group* from;
  const Group* to;
  size_t next = 0, width = 1, offset = 0;
  size_t total() const { return from->ranks.size() * to->ranks.size(); }
  std::pair<int32_t, int32_t> at(size_t k) const {
    k = (k + offset) % total();
    const size_t n = from->ranks.size(), m = to->ranks.size();
    const size_t small = std::min(n, m), large = std::max(n, m);
    const size_t q = k % small, c = k / small, other = (q + c) % large;
    return n <= m ? std::pair(from->ranks[q], to->ranks[other]) : std::pair(from->ranks[other], to->ranks[q]);
  }
};

// Transfers a pair exchanges per phase: as many as the fewer up-links carry (and hosts allow).
size_t width_of(const Group& a, const Group& b) {
  return std::max<size_t>(1, std::min({static_cast<size_t>(std::min(a.up, b.up)), a.ranks.size(), b.ranks.size()}));
}

// How far each block moves its pairs' windows on from the block before: a step prime to the
// receiving leaf's host count, so that over the blocks every receiver comes where a window wraps
// round the leaf (two receivers on one up-link: one waits) about as often, and the transfers left
// to pack are spread over the receivers (the 3 456-host tree: 8 230 phases, 0.940, against 8 343
// without; a step of 1: 0.934, 3: 0.940, 5: 0.936).
size_t rotation(size_t hosts) {
  for (size_t step : {7, 11, 13, 5, 3})
    if (std::gcd(step, hosts) == 1) return step;
  return 1;
}

}  // namespace

bool leaf_blocks_may_help(const Leaves& leaves) {
  std::vector<int> hosts(leaves.up.size(), 0);
  for (int l : leaves.of_rank)
    if (l >= 0 && ++hosts[static_cast<size_t>(l)] > std::max(1, leaves.up[static_cast<size_t>(l)])) return true;
  return false;
}

size_t leaf_block_phase_count(const Ring& ring, const Leaves& leaves) {
  const std::vector<Group> groups = groups_of(ring, leaves, 1);
  const size_t g = groups.size();
  size_t fullest = 0;
  for (const Group& gr : groups) fullest = std::max(fullest, gr.ranks.size());
  size_t count = fullest > 0 ? fullest - 1 : 0;
  for (size_t s = 1; s < g; ++s) {
    size_t longest = 0;
    for (size_t x = 0; x < g; ++x) {
      const Group& a = groups[x];
      const Group& b = groups[(x + s) % g];
      const size_t width = width_of(a, b);
      longest = std::max(longest, (a.ranks.size() * b.ranks.size() + width - 1) / width);
    }
    count += longest;
  }
  return count;
}

std::vector<Phase> leaf_block_phases(const Ring& ring, const Leaves& leaves, size_t period) {
  const size_t n = ring.place.size();
  const std::vector<Group> groups = groups_of(ring, leaves, period);
  const size_t g = groups.size();
  std::vector<Phase> out;
  auto fresh = [&] {
    out.push_back({});
    out.back().dst.assign(n, -1), out.back().dlid.assign(n, 0);
    return &out.back();
  };
  // Block 0: every leaf's own exchange, its shifts; no up-link carries any of it.
  size_t fullest = 0;
  for (const Group& gr : groups) fullest = std::max(fullest, gr.ranks.size());
  for (size_t k = 1; k < fullest; ++k) {
    Phase* ph = fresh();
    for (const Group& gr : groups)
      for (size_t x = 0; k < gr.ranks.size() && x < gr.ranks.size(); ++x)
        ph->dst[static_cast<size_t>(gr.ranks[x])] = gr.ranks[(x + k) % gr.ranks.size()];
  }
  std::vector<size_t> sent(n, SIZE_MAX), received(n, SIZE_MAX);  // the phase a rank last sent / received in
  auto pair = [&](size_t x, size_t s) {
    const Group& a = groups[x];
    const Group& b = groups[(x + s) % g];
    const size_t width = width_of(a, b);
    return Pair{&a, &b, 0, width, (b.later ? width : 0) + s * rotation(b.ranks.size())};
  };
  // Blocks 1 .. g-1: leaf x sends to leaf x+s, every pair `width` transfers per phase.
  std::vector<Pair> pairs(g);
  for (size_t s = 1; s < g; ++s) {
    for (size_t x = 0; x < g; ++x) pairs[x] = pair(x, s);
    for (bool left = true; left;) {
      left = false;
      Phase* ph = fresh();
      const size_t p = out.size() - 1;
      for (Pair& pr : pairs) {
        for (size_t taken = 0; taken < pr.width && pr.next < pr.total(); ++taken, ++pr.next) {
          const auto [src, dst] = pr.at(pr.next);
          if (sent[static_cast<size_t>(src)] == p || received[static_cast<size_t>(dst)] == p) break;  // the next phase takes it
          sent[static_cast<size_t>(src)] = received[static_cast<size_t>(dst)] = p;
          ph->dst[static_cast<size_t>(src)] = dst;
        }
        left = left || pr.next < pr.total();
      }
    }
  }
  return out;
}

}  // namespace ibroute::schedule
