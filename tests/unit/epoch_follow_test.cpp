// ibroute run --follow's pure core: the connections a following run makes, an epoch translated
// onto the run's ranks (hosts gone, hosts dropped, paths the run has no connection for), and the
// per-stretch counts as they travel to rank 0.
#include "ibroute/runner/epoch_follow.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "ibroute/runner/run_stats.hpp"

using namespace ibroute::runner;
namespace sch = ibroute::schedule;

namespace {

sch::Schedule shifted(size_t n, const std::vector<uint16_t>& lids, uint16_t offset) {
  sch::Schedule s;
  for (size_t i = 0; i < n; ++i) s.hosts.push_back({static_cast<int32_t>(i), 1, "h" + std::to_string(i)});
  s.phases = sch::shift_phases(n);
  for (auto& ph : s.phases)
    for (size_t i = 0; i < n; ++i) ph.dlid[i] = static_cast<uint16_t>(lids[static_cast<size_t>(ph.dst[i])] + offset);
  return s;
}

}  // namespace

TEST(EpochFollow, EveryPairIsConnectedOverEveryDlidOfItsDestination) {
  const std::vector<uint16_t> lids{40, 8, 100, 12};
  const sch::Schedule s = shifted(4, lids, 0);
  const std::vector<Channel> ch = FollowChannels(lids, 2).all();
  EXPECT_EQ(ch.size(), 12u * 4);
  EXPECT_TRUE(std::is_sorted(ch.begin(), ch.end()));
  for (const Channel& c : ch) {
    EXPECT_NE(c.src, c.dst);
    EXPECT_GE(c.dlid, lids[static_cast<size_t>(c.dst)]);
    EXPECT_LT(c.dlid, lids[static_cast<size_t>(c.dst)] + 4);
  }
  for (const Channel& c : channels_of(s)) EXPECT_TRUE(std::binary_search(ch.begin(), ch.end(), c));
  EXPECT_EQ(FollowChannels(lids, 2).off_channels(s), "");
  EXPECT_EQ(FollowChannels(lids, 2).off_channels(shifted(4, lids, 3)), "");
  EXPECT_EQ(FollowChannels(lids, 2).off_channels(shifted(4, lids, 4)),
            "phase 0: transfer 0 -> 1 over DLID 12, which is not one of its destination's LIDs 8..11");
}

// A rank other than 0 keeps only its own channels: exactly those of the whole list it sends or
// receives on, with their places in it as ids — for LIDs near the top of the range too, where a
// destination has fewer DLIDs than 2^LMC.
TEST(EpochFollow, ARanksOwnChannelsAreItsPartOfTheWholeListWithTheirPlaces) {
  for (const std::vector<uint16_t>& lids :
       {std::vector<uint16_t>{40, 8, 100, 12, 0xfffe}, std::vector<uint16_t>{1}, std::vector<uint16_t>{7, 3}}) {
    for (uint8_t lmc : {0, 2, 3}) {
      const FollowChannels fc(lids, lmc);
      const std::vector<Channel> all = fc.all();
      ASSERT_EQ(all.size(), fc.size());
      ASSERT_TRUE(std::is_sorted(all.begin(), all.end()));
      ASSERT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
      for (int32_t me = 0; me < static_cast<int32_t>(lids.size()); ++me) {
        std::vector<Channel> own;
        std::vector<uint32_t> ids;
        fc.own(me, own, ids);
        std::vector<Channel> want;
        std::vector<uint32_t> want_ids;
        for (uint32_t c = 0; c < all.size(); ++c)
          if (all[c].src == me || all[c].dst == me) want.push_back(all[c]), want_ids.push_back(c);
        EXPECT_EQ(own, want) << "rank " << me << ", LMC " << int(lmc);
        EXPECT_EQ(ids, want_ids) << "rank " << me << ", LMC " << int(lmc);
      }
    }
  }
  // 0xfffe at LMC 2: DLIDs 0xfffe and 0xffff only.
  const std::vector<Channel> all = FollowChannels({5, 0xfffe}, 2).all();
  EXPECT_EQ(all.size(), 2u + 4u);
}

// A rank's aggregates keep the channels' ids: what rank 0 decodes against its whole list.
TEST(EpochFollow, StatsShapedFromOwnChannelsDecodeAtRankZero) {
  const std::vector<uint16_t> lids{40, 8, 100, 12};
  const FollowChannels fc(lids, 1);
  std::vector<Channel> own;
  std::vector<uint32_t> ids;
  fc.own(2, own, ids);
  RankStats st = RankStats::shaped(own, ids, 2, 1'000'000);
  const RankStats whole = RankStats::shaped(fc.all(), 2, 1'000'000);
  EXPECT_EQ(st.send_channels, whole.send_channels);
  EXPECT_EQ(st.recv_channels, whole.recv_channels);
  EXPECT_EQ(st.dests, whole.dests);
  EXPECT_EQ(st.dest_of_send, whole.dest_of_send);
  st.send[1].ok = 3, st.arrived[0] = 2;
  const RankStats back = decode(encode(st), fc.all(), lids.size());
  EXPECT_EQ(back.send_channels, whole.send_channels);
  EXPECT_EQ(back.send[1].ok, 3u);
}

TEST(EpochFollow, AnEpochIsTranslatedByPortGuidAndLeavesOutHostsGoneOrDropped) {
  const std::vector<uint16_t> lids{40, 8, 100, 12};
  const std::vector<uint64_t> run_guids{0xa0, 0xa1, 0xa2, 0xa3};
  const sch::Schedule run = shifted(4, lids, 0);
  const std::vector<Channel> ch = FollowChannels(lids, 2).all();
  // The next epoch names the hosts in another order, without host a2 and with a host the run
  // does not have (0xff), over DLID offset 3.
  const std::vector<uint64_t> guids{0xa3, 0xff, 0xa0, 0xa1};
  const std::vector<uint16_t> elids{12, 200, 40, 8};
  const sch::Schedule e = shifted(4, elids, 3);
  EpochOnRun on;
  std::string why;
  ASSERT_TRUE(epoch_on_run(e, guids, run, run_guids, {}, ch, on, why)) << why;
  EXPECT_EQ(on.schedule.hosts, run.hosts);
  ASSERT_EQ(on.schedule.phases.size(), e.phases.size());
  EXPECT_EQ(on.outside, 6u) << "host 0xff's 3 sends and 3 receives";
  size_t kept = 0;
  for (size_t p = 0; p < e.phases.size(); ++p)
    for (size_t h = 0; h < 4; ++h) {
      const int32_t d = e.phases[p].dst[h];
      if (h == 1 || d == 1) continue;
      const auto r = static_cast<size_t>(std::find(run_guids.begin(), run_guids.end(), guids[h]) - run_guids.begin());
      const auto rd = static_cast<int32_t>(
          std::find(run_guids.begin(), run_guids.end(), guids[static_cast<size_t>(d)]) - run_guids.begin());
      EXPECT_EQ(on.schedule.phases[p].dst[r], rd);
      EXPECT_EQ(on.schedule.phases[p].dlid[r], lids[static_cast<size_t>(rd)] + 3);
      ++kept;
    }
  EXPECT_EQ(kept, 6u);
  // Run rank 0 (0xa0) dropped as dead: nothing to or from it any more.
  ASSERT_TRUE(epoch_on_run(e, guids, run, run_guids, {1, 0, 0, 0}, ch, on, why)) << why;
  EXPECT_EQ(on.outside, 6u + 4);
  for (const sch::Phase& ph : on.schedule.phases) {
    EXPECT_EQ(ph.dst[0], -1);
    EXPECT_EQ(std::count(ph.dst.begin(), ph.dst.end(), 0), 0);
  }
}

TEST(EpochFollow, AnEpochOverPathsTheRunDidNotConnectIsRefusedWithTheTransfer) {
  const std::vector<uint16_t> lids{40, 8, 100, 12};
  const std::vector<uint64_t> guids{1, 2, 3, 4};
  const sch::Schedule run = shifted(4, lids, 0);
  const std::vector<Channel> ch = FollowChannels(lids, 1).all();  // DLID offsets 0 and 1
  EpochOnRun on;
  std::string why;
  EXPECT_FALSE(epoch_on_run(shifted(4, lids, 2), guids, run, guids, {}, ch, on, why));
  EXPECT_NE(why.find("h0 -> h1 over DLID 10"), std::string::npos) << why;
  sch::Schedule empty = run;
  empty.phases.clear();
  EXPECT_FALSE(epoch_on_run(empty, guids, run, guids, {}, ch, on, why));
}

TEST(EpochFollow, StretchCountsTravelToRankZeroAndDamagedOnesAreRefused) {
  const std::vector<uint16_t> lids{40, 8, 100, 12};
  const sch::Schedule run = shifted(4, lids, 0);
  const std::vector<Channel> ch = FollowChannels(lids, 0).all();
  RankStats st = RankStats::shaped(ch, 2, 1'000'000);
  st.epochs = {{1, 0, 30, 30, 0, 0, 30 * 64, 0, 5000}, {2, 10, 20, 18, 1, 1, 18 * 64, 1, 7000}};
  const std::vector<uint8_t> bytes = encode(st);
  RankStats back = decode(bytes, ch, 4);
  ASSERT_EQ(back.epochs.size(), 2u);
  EXPECT_EQ(back.epochs[1].from_round, 10u);
  EXPECT_EQ(back.epochs[1].round_ns, 7000);
  EXPECT_EQ(encode(back), bytes);
  RunMerge m(ch, 4, 1'000'000, 10);
  m.add(back);
  RankStats late = back;
  late.rank = 3;
  late.send_channels.clear(), late.send.clear(), late.recv_channels.clear(), late.arrived.clear(), late.corrupt.clear();
  late.dests.clear(), late.late.clear(), late.completion.clear();
  late.epochs[1].from_round = 11;  // this rank switched a round late
  m.add(late);
  ASSERT_EQ(m.epochs.size(), 2u);
  EXPECT_EQ(m.epochs[1].planned, 40u);
  EXPECT_EQ(m.epoch_ranks_agreeing[0], 2u);
  EXPECT_EQ(m.epoch_ranks_agreeing[1], 1u);
  // Counts beyond what was planned, stretches out of order, no round length: refused.
  for (int damage = 0; damage < 3; ++damage) {
    RankStats bad = st;
    if (damage == 0) bad.epochs[1].ok = 100;
    if (damage == 1) bad.epochs[1].from_round = 0, bad.epochs[0].from_round = 5;
    if (damage == 2) bad.epochs[0].round_ns = 0;
    EXPECT_THROW(decode(encode(bad), ch, 4), std::runtime_error) << damage;
  }
}

// A rank other than 0 follows from the host table and its own slice: what it sends is, for every
// rank, drop and host gone, exactly its row of the whole epoch translated (epoch_on_run), and its
// plan the one built from that row; a slice whose round is not the one ordered is refused.
TEST(EpochFollow, ARanksOwnSliceGivesItsRowOfTheWholeEpoch) {
  const std::vector<uint16_t> lids{40, 8, 100, 12, 60};
  const std::vector<uint64_t> run_guids{0xa0, 0xa1, 0xa2, 0xa3, 0xa4};
  const sch::Schedule run = shifted(5, lids, 0);
  const std::vector<Channel> ch = FollowChannels(lids, 2).all();
  const std::vector<uint64_t> guids{0xa3, 0xff, 0xa0, 0xa1, 0xa4};  // a2 gone, 0xff not in the run
  const std::vector<uint16_t> elids{12, 200, 40, 8, 60};
  sch::Schedule e = shifted(5, elids, 2);
  e.slots.assign(e.phases.size(), 1);
  e.slots[1] = 3;  // phases of different lengths
  const uint64_t round_slots = sch::slot_starts(e).back();
  for (const std::vector<char>& dropped : {std::vector<char>{}, std::vector<char>{0, 0, 0, 1, 0}}) {
    EpochOnRun whole;
    std::string why;
    ASSERT_TRUE(epoch_on_run(e, guids, run, run_guids, dropped, ch, whole, why)) << why;
    for (int32_t me = 0; me < 5; ++me) {
      const auto at = std::find(guids.begin(), guids.end(), run_guids[static_cast<size_t>(me)]);
      OwnEpoch own{guids, at != guids.end(),
                   at != guids.end() ? rank_round(e, static_cast<int32_t>(at - guids.begin())) : RankRound{}};
      RankRound mine;
      ASSERT_TRUE(own_on_run(own, run_guids, dropped, ch, me, round_slots, mine, why)) << why;
      const RankRound row = rank_round(whole.schedule, me);
      EXPECT_EQ(mine.sends, row.sends) << "rank " << me;
      EXPECT_EQ(mine.starts.back(), round_slots);
      const SendPlan a(mine, ch, me, 1000), b(whole.schedule, ch, me, 1000);
      ASSERT_EQ(a.per_round(), b.per_round());
      EXPECT_EQ(a.slots(), b.slots());
      for (uint64_t k = 0; k < a.count(3); ++k) {
        EXPECT_EQ(a.at(k).at_ns, b.at(k).at_ns);
        EXPECT_EQ(a.at(k).channel, b.at(k).channel);
        EXPECT_EQ(a.at(k).seq, b.at(k).seq);
      }
      if (me == 2) {
        EXPECT_TRUE(mine.sends.empty()) << "a2 is not in the epoch";
      }
      if (!dropped.empty() && me == 3) {
        EXPECT_TRUE(mine.sends.empty()) << "a3 is dropped";
      }
    }
  }
  OwnEpoch own{guids, true, rank_round(e, 0)};
  RankRound mine;
  std::string why;
  EXPECT_FALSE(own_on_run(own, run_guids, {}, ch, 3, round_slots + 1, mine, why));
  EXPECT_NE(why.find("another epoch"), std::string::npos) << why;
  EXPECT_FALSE(own_on_run(own, run_guids, {}, FollowChannels(lids, 1).all(), 3, round_slots, mine, why));
  EXPECT_NE(why.find("on no connection"), std::string::npos) << why;
}
