#include "open_shop.hpp"

#include <algorithm>
#include <deque>
#include <numeric>

namespace ibroute::schedule {

namespace {

using Matrix = std::vector<std::vector<uint64_t>>;

// Every line padded to `length`: each row's deficit first on its own diagonal entry (as far as its
// column lacks too), the rest north-west corner.
void pad(Matrix& m, uint64_t length) {
  const size_t g = m.size();
  std::vector<uint64_t> row(g, length), col(g, length);
  for (size_t x = 0; x < g; ++x)
    for (size_t y = 0; y < g; ++y) row[x] -= m[x][y], col[y] -= m[x][y];
  for (size_t x = 0; x < g; ++x) {
    const uint64_t add = std::min(row[x], col[x]);
    m[x][x] += add, row[x] -= add, col[x] -= add;
  }
  for (size_t x = 0, y = 0; x < g; ++x)
    while (row[x] > 0 && y < g) {
      const uint64_t add = std::min(row[x], col[y]);
      m[x][y] += add, row[x] -= add, col[y] -= add;
      if (col[y] == 0) ++y;
    }
}

// A perfect matching kept over the entries still positive: rows whose entry ran out are matched
// again along an augmenting path (breadth first: the shortest, which in a dense matrix is short).
struct Matching {
  const Matrix& m;
  std::vector<int64_t> col_of, row_of;
  explicit Matching(const Matrix& mat) : m(mat), col_of(mat.size(), -1), row_of(mat.size(), -1) {}

  bool augment(size_t start) {
    const size_t g = m.size();
    std::vector<int64_t> via(g, -1);  // the row a column was reached from
    std::deque<size_t> rows{start};
    while (!rows.empty()) {
      const size_t u = rows.front();
      rows.pop_front();
      for (size_t y = 0; y < g; ++y) {
        if (m[u][y] == 0 || via[y] >= 0) continue;
        via[y] = static_cast<int64_t>(u);
        if (row_of[y] >= 0) {
          rows.push_back(static_cast<size_t>(row_of[y]));
          continue;
        }
        for (int64_t col = static_cast<int64_t>(y); col >= 0;) {  // flip the path back to `start`
          const size_t r = static_cast<size_t>(via[static_cast<size_t>(col)]);
          const int64_t before = col_of[r];
          col_of[r] = col, row_of[static_cast<size_t>(col)] = static_cast<int64_t>(r);
          col = r == start ? -1 : before;
        }
        return true;
      }
    }
    return false;
  }
};

}  // namespace

uint64_t open_shop_length(const Matrix& durations) {
  const size_t g = durations.size();
  uint64_t longest = 0;
  std::vector<uint64_t> col(g, 0);
  for (size_t x = 0; x < g; ++x) {
    longest = std::max(longest, std::accumulate(durations[x].begin(), durations[x].end(), uint64_t{0}));
    for (size_t y = 0; y < g; ++y) col[y] += durations[x][y];
  }
  for (uint64_t c : col) longest = std::max(longest, c);
  return longest;
}

std::vector<ShopSegment> open_shop(const Matrix& durations) {
  const size_t g = durations.size();
  uint64_t left = open_shop_length(durations);
  Matrix m = durations;
  pad(m, left);
  Matching match(m);
  for (size_t x = 0; x < g; ++x)
    if (!match.augment(x)) return {};  // cannot happen: every line sums to the same (Koenig)
  std::vector<ShopSegment> out;
  while (left > 0) {
    ShopSegment seg{std::vector<uint32_t>(g), left};
    for (size_t x = 0; x < g; ++x) {
      seg.column[x] = static_cast<uint32_t>(match.col_of[x]);
      seg.length = std::min(seg.length, m[x][seg.column[x]]);
    }
    left -= seg.length;
    std::vector<size_t> spent;
    for (size_t x = 0; x < g; ++x)
      if ((m[x][seg.column[x]] -= seg.length) == 0)
        spent.push_back(x), match.row_of[seg.column[x]] = -1, match.col_of[x] = -1;
    out.push_back(std::move(seg));
    if (left > 0)
      for (size_t x : spent)
        if (!match.augment(x)) return out;  // as above; the caller places what is left
  }
  return out;
}

}  // namespace ibroute::schedule
