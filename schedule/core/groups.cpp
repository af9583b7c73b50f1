// Who sends to whom in which phase: the all-to-all shifts and their two-group generalisation.
#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

Phase shift_phase(size_t n, size_t k) {
  Phase p;
  p.dst.resize(n);
  p.dlid.assign(n, 0);
  for (size_t i = 0; i < n; ++i) p.dst[i] = static_cast<int32_t>((i + k) % n);
  return p;
}

std::vector<Phase> shift_phases(size_t n) {
  std::vector<Phase> out;
  for (size_t k = 1; k < n; ++k) out.push_back(shift_phase(n, k));
  return out;
}

uint32_t phase_slot_count(double time) {
  if (!(time > 1)) return 1;
  return static_cast<uint32_t>(std::min<double>(kMaxPhaseSlots, std::ceil(time - 1e-9)));
}

std::vector<uint64_t> slot_starts(const Schedule& s) {
  std::vector<uint64_t> at(s.phases.size() + 1, 0);
  for (size_t p = 0; p < s.phases.size(); ++p) at[p + 1] = at[p] + (s.slots.empty() ? 1 : s.slots[p]);
  return at;
}

namespace {
std::vector<int32_t> every_rank(size_t n) {
  std::vector<int32_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  return all;
}
}  // namespace

std::vector<int32_t> sender_ranks(const Schedule& s) { return s.all_to_all() ? every_rank(s.hosts.size()) : s.senders; }
std::vector<int32_t> receiver_ranks(const Schedule& s) {
  return s.all_to_all() ? every_rank(s.hosts.size()) : s.receivers;
}

Phase group_shift_phase(size_t n, const std::vector<int32_t>& senders, const std::vector<int32_t>& receivers,
                        int32_t k) {
  const size_t m = std::max(senders.size(), receivers.size());
  Phase p{std::vector<int32_t>(n, -1), std::vector<uint16_t>(n, 0)};
  for (size_t i = 0; i < senders.size(); ++i) {
    const size_t j = (i + static_cast<size_t>(k)) % m;
    if (j < receivers.size() && receivers[j] != senders[i]) p.dst[senders[i]] = receivers[j];
  }
  return p;
}

std::vector<Phase> group_phases(size_t n, const std::vector<int32_t>& senders, const std::vector<int32_t>& receivers) {
  std::vector<Phase> out;
  const size_t m = std::max(senders.size(), receivers.size());
  for (size_t k = 0; k < m; ++k) {
    Phase p = group_shift_phase(n, senders, receivers, static_cast<int32_t>(k));
    bool any = false;
    for (int32_t d : p.dst) any |= d >= 0;
    if (any) out.push_back(std::move(p));
  }
  return out;
}

std::vector<int32_t> shifts_of(const Schedule& s) {
  const std::vector<int32_t> snd = sender_ranks(s), rcv = receiver_ranks(s);
  const size_t n = s.hosts.size(), m = std::max(snd.size(), rcv.size());
  if (m == 0) return {};
  std::vector<int32_t> pos(n, -1);  // receiver position of each rank
  for (size_t j = 0; j < rcv.size(); ++j)
    if (rcv[j] >= 0 && static_cast<size_t>(rcv[j]) < n) pos[rcv[j]] = static_cast<int32_t>(j);
  std::vector<int32_t> shifts;
  for (const Phase& ph : s.phases) {
    if (ph.dst.size() != n) return {};
    // The shift is read off the first transfer, then every cell must agree with it.
    int32_t k = -1;
    for (size_t i = 0; i < snd.size() && k < 0; ++i) {
      if (snd[i] < 0 || static_cast<size_t>(snd[i]) >= n) return {};
      const int32_t d = ph.dst[snd[i]];
      if (d >= 0 && static_cast<size_t>(d) < n && pos[d] >= 0)
        k = static_cast<int32_t>((static_cast<size_t>(pos[d]) + m - i) % m);
    }
    if (k < 0 || group_shift_phase(n, snd, rcv, k).dst != ph.dst) return {};
    shifts.push_back(k);
  }
  return shifts;
}

std::vector<int32_t> ranks_at(const Ring& r) {
  std::vector<int32_t> at(r.size, -1);
  for (size_t i = 0; i < r.place.size(); ++i) at[r.place[i]] = static_cast<int32_t>(i);
  return at;
}

Phase ring_phase(const Ring& r, const std::vector<int32_t>& at, size_t k) {
  const size_t n = r.place.size();
  Phase p;
  p.dst.resize(n);
  p.dlid.assign(n, 0);
  for (size_t i = 0; i < n; ++i) p.dst[i] = at[(r.place[i] + k) % r.size];
  return p;
}

std::optional<std::pair<Ring, std::vector<int32_t>>> ring_of(const Schedule& s) {
  const size_t n = s.hosts.size();
  if (!s.all_to_all() || n < 2 || s.phases.size() + 1 < n) return std::nullopt;
  // Rank 0 at place 0: in phase p (shift p+1) it sends to the rank at place p+1, if any.
  Ring r;
  r.size = s.phases.size() + 1;
  r.place.assign(n, UINT32_MAX);
  r.place[0] = 0;
  for (size_t p = 0; p < s.phases.size(); ++p) {
    if (s.phases[p].dst.size() != n) return std::nullopt;
    const int32_t d = s.phases[p].dst[0];
    if (d < 0) continue;
    if (static_cast<size_t>(d) >= n || r.place[d] != UINT32_MAX) return std::nullopt;
    r.place[d] = static_cast<uint32_t>(p + 1);
  }
  if (std::find(r.place.begin(), r.place.end(), UINT32_MAX) != r.place.end()) return std::nullopt;
  const std::vector<int32_t> at = ranks_at(r);
  std::vector<int32_t> shifts;
  for (size_t p = 0; p < s.phases.size(); ++p) {
    if (ring_phase(r, at, p + 1).dst != s.phases[p].dst) return std::nullopt;
    shifts.push_back(static_cast<int32_t>(p + 1));
  }
  return std::pair{std::move(r), std::move(shifts)};
}

}  // namespace ibroute::schedule
