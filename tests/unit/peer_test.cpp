// libibroute-peer (schedule/peer): what a peer reads from a whole schedule, from each node's slice,
// from version-1 and list-encoded files — the same transfers, in order, timed by the schedule.
#include "ibroute/peer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

#include "export_files.hpp"
#include "fabrics.hpp"
#include "ibroute/fabric/synthetic.hpp"
#include "ibroute/schedule/admission.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/hosts.hpp"
#include "ibroute/schedule/patterns.hpp"
#include "ibroute/schedule/planner.hpp"
#include "ibroute/schedule/validate.hpp"
#include "schedule_docs.hpp"

using namespace ibroute::fabric;
using namespace ibroute::schedule;
using ibroute::test::kShiftsOnly;
using ibroute::test::World;
namespace peer = ibroute::peer;

namespace {

std::vector<int32_t> ranks(int from, int to) {
  std::vector<int32_t> r(to - from);
  std::iota(r.begin(), r.end(), from);
  return r;
}

World half_fat_tree() {
  FatTreeSpec t;
  t.leaves = 6, t.hosts_per_leaf = 4, t.uplinks = 2, t.spines = 2, t.lmc = 2, t.shuffle_names = true, t.seed = 11;
  return World(build_fat_tree(t));
}

ScheduleDoc doc_of(const World& w, Schedule s) { return ibroute::test::doc_of(w, std::move(s), "p"); }

// What the schedule says rank r sends and receives, walked here from its phases.
struct Expected {
  std::vector<std::tuple<uint32_t, uint32_t, uint16_t>> sends, receives;
};
Expected expected(const ScheduleDoc& d, uint32_t r) {
  Expected e;
  for (size_t k = 0; k < d.schedule.phases.size(); ++k) {
    const Phase& ph = d.schedule.phases[k];
    if (ph.dst[r] >= 0) e.sends.emplace_back(k, ph.dst[r], ph.dlid[r]);
    for (size_t i = 0; i < ph.dst.size(); ++i)
      if (ph.dst[i] == static_cast<int32_t>(r)) e.receives.emplace_back(k, i, ph.dlid[i]);
  }
  return e;
}

// A slice as versions 1..3 wrote it (every host, transfers as objects), written here from the
// phases: older exports must stay readable.
std::string legacy_slice(const ScheduleDoc& d, uint32_t r, int version) {
  nlohmann::json j = nlohmann::json::parse(to_json(d));
  j["format"] = "ibroute-schedule-slice";
  j["version"] = version;
  j.erase("phases");
  j["rank"] = r;
  const Expected e = expected(d, r);
  j["sends"] = nlohmann::json::array();
  j["receives"] = nlohmann::json::array();
  for (const auto& [k, peer, dlid] : e.sends) j["sends"].push_back({{"phase", k}, {"dst", peer}, {"dlid", dlid}});
  for (const auto& [k, peer, dlid] : e.receives) j["receives"].push_back({{"phase", k}, {"src", peer}, {"dlid", dlid}});
  return j.dump(1);
}

void expect_transfers(const ScheduleDoc& d, const std::vector<peer::Transfer>& got,
                      const std::vector<std::tuple<uint32_t, uint32_t, uint16_t>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(std::make_tuple(got[i].phase, got[i].peer, got[i].dlid), want[i]) << "transfer " << i;
    EXPECT_DOUBLE_EQ(got[i].offset_s, got[i].phase * d.schedule.timing.slot_s);
    EXPECT_EQ(got[i].size, d.schedule.timing.message_size);
  }
}

// Every rank, from the whole file and from its own slice.
void expect_every_rank(const ScheduleDoc& d, const std::string& text, int version) {
  const peer::Schedule whole = peer::Schedule::parse(text, "whole.json");
  EXPECT_FALSE(whole.is_slice());
  EXPECT_FALSE(whole.own_rank());
  EXPECT_EQ(whole.format_version(), version);
  EXPECT_EQ(whole.name(), d.schedule.name);
  EXPECT_EQ(whole.message_size(), d.schedule.timing.message_size);
  EXPECT_DOUBLE_EQ(whole.slot_s(), d.schedule.timing.slot_s);
  ASSERT_EQ(whole.hosts().size(), d.identities.size());
  const SliceWriter slices(d);
  size_t transfers = 0;
  for (uint32_t r = 0; r < d.identities.size(); ++r) {
    const peer::Host& h = whole.hosts()[r];
    EXPECT_EQ(std::make_tuple(h.rank, h.name, h.port_guid, h.base_lid, h.lmc),
              std::make_tuple(r, d.identities[r].name, d.identities[r].port_guid, d.identities[r].base_lid,
                              d.identities[r].lmc));
    EXPECT_EQ(whole.rank_of_port_guid(h.port_guid), r);
    const Expected e = expected(d, r);
    transfers += e.sends.size();
    expect_transfers(d, whole.sends(r), e.sends);
    expect_transfers(d, whole.receives(r), e.receives);
    const peer::Schedule own = peer::Schedule::parse(slices.slice(r), "slice.json");
    EXPECT_TRUE(own.is_slice());
    EXPECT_EQ(own.own_rank(), r);
    EXPECT_EQ(own.format_version(), kSliceVersion);
    EXPECT_EQ(own.hosts()[r].port_guid, d.identities[r].port_guid) << "its own identity is in the slice";
    expect_transfers(d, own.sends(r), e.sends);
    expect_transfers(d, own.receives(r), e.receives);
    EXPECT_THROW(own.sends((r + 1) % d.identities.size()), peer::Error) << "a slice answers for its own rank only";
    const peer::Schedule old = peer::Schedule::parse(legacy_slice(d, r, 3), "old.json");
    EXPECT_EQ(old.hosts()[(r + 1) % d.identities.size()].name, d.identities[(r + 1) % d.identities.size()].name);
    expect_transfers(d, old.sends(r), e.sends);
    expect_transfers(d, old.receives(r), e.receives);
  }
  EXPECT_GT(transfers, 0u);
}

std::string what(const std::function<void()>& f) {
  try {
    f();
  } catch (const peer::Error& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(Peer, AllToAllAndTwoGroupsFromTheWholeFileAndEachSlice) {
  World w = half_fat_tree();
  const std::vector<Host> hosts = all_hosts(w.f);
  const ScheduleDoc a2a = doc_of(w, plan_all_to_all(w.ctx, hosts, kShiftsOnly));
  expect_every_rank(a2a, to_json(a2a), 2);
  const ScheduleDoc groups = doc_of(w, plan_groups(w.ctx, hosts, ranks(0, 8), ranks(8, 24), kShiftsOnly));
  const std::string text = to_json(groups);
  ASSERT_NE(text.find("\"encoding\": \"shift\""), std::string::npos);
  expect_every_rank(groups, text, 2);
  EXPECT_TRUE(peer::Schedule::parse(text).sends(20).empty()) << "a receiver sends nothing";
}

TEST(Peer, ListEncodedAndVersion1FilesRead) {
  World w = half_fat_tree();
  const std::vector<Host> hosts = all_hosts(w.f);
  Schedule s;
  s.hosts = hosts;
  s.phases = random_permutations(hosts.size(), 5, 3);  // not shifts: written transfer by transfer
  apply_lid_policy(w.f, hosts, s.phases, LidPolicy::spread);
  const ScheduleDoc listed = doc_of(w, s);
  const std::string text = to_json(listed);
  ASSERT_NE(text.find("\"src\""), std::string::npos);
  expect_every_rank(listed, text, 2);
  nlohmann::json v1 = nlohmann::json::parse(text);
  v1["version"] = 1;
  expect_every_rank(listed, v1.dump(), 1);
  // A version-1 slice is a version-2 slice without groups.
  EXPECT_EQ(peer::Schedule::parse(legacy_slice(listed, 3, 1)).format_version(), 1);
}

TEST(Peer, HostsByGuidAndNameAndAmbiguity) {
  World w = half_fat_tree();
  ScheduleDoc d = doc_of(w, plan_all_to_all(w.ctx, all_hosts(w.f), kShiftsOnly));
  const peer::Schedule s = peer::Schedule::parse(to_json(d));
  EXPECT_EQ(s.rank_of_name(d.identities[5].name), 5u);
  EXPECT_FALSE(s.rank_of_name("no-such-host"));
  EXPECT_FALSE(s.rank_of_port_guid(0x1));
  d.identities[7].name = d.identities[5].name;  // two HCAs, one description
  EXPECT_NE(what([&] {
              (void)peer::Schedule::parse(to_json(d)).rank_of_name(d.identities[5].name);
            }).find("is ranks 5 and 7"),
            std::string::npos);
  EXPECT_NE(what([&] { (void)s.sends(24); }).find("rank 24 out of range (0..23)"), std::string::npos);
}

TEST(Peer, DamagedSlicesAreRefusedByPlace) {
  World w = half_fat_tree();
  const ScheduleDoc d = doc_of(w, plan_all_to_all(w.ctx, all_hosts(w.f), kShiftsOnly));
  const nlohmann::json good = nlohmann::json::parse(SliceWriter(d).slice(2));
  auto refused = [&](const std::function<void(nlohmann::json&)>& damage, const std::string& needle) {
    nlohmann::json j = good;
    damage(j);
    const std::string msg = what([&] { (void)peer::Schedule::parse(j.dump(), "rank2.json"); });
    EXPECT_EQ(msg.rfind("rank2.json: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  };
  refused(
      [](auto& j) {
        j["sends"]["phase"] = nlohmann::json::array({0, 0});
      },
      "/sends/phase: 2 phases for 23 transfers");
  refused(
      [](auto& j) {
        j["sends"]["phase"] = nlohmann::json::array();
        for (int k = 0; k < 23; ++k) j["sends"]["phase"].push_back(k == 1 ? 0 : k);
      },
      "/sends/phase/1: phase 0 after phase 0 (one transfer per phase, in order)");
  refused(
      [](auto& j) {
        j["sends"]["phase"] = nlohmann::json::array();
        for (int k = 0; k < 23; ++k) j["sends"]["phase"].push_back(k + 1);
      },
      "/sends/phase/22: 23 is not a phase (0..22)");
  refused([](auto& j) { j["sends"]["dst"][0] = 2; }, "/sends/dst/0: rank 2 is the slice's own");
  refused([](auto& j) { j["receives"]["src"][4] = 24; }, "/receives/src/4: 24: rank out of range (0..23)");
  refused([](auto& j) { j["receives"]["dlid"][0] = 60000; }, "/receives/dlid/0: 60000 is not a unicast LID");
  refused([](auto& j) { j["receives"]["dlid"].erase(0); }, "/receives/dlid: 22 DLIDs for 23 transfers");
  refused([](auto& j) { j["rank"] = -1; }, "/rank: -1: rank out of range");
  refused([](auto& j) { j["host"]["rank"] = 3; }, "/host/rank: not the slice's rank");
  refused([](auto& j) { j["hosts_file"] = "../etc/x.json"; },
          "/hosts_file: '../etc/x.json' is not a file name in the slice's own folder");
  refused([](auto& j) { j["phases"] = 0; }, "/phases: 0 is not a number of phases");
  refused([](auto& j) { j["hosts_count"] = 1 << 24; },
          "/hosts_count: 16777216 is not a number of hosts (2 .. 1048576)");
  refused([](auto& j) { j.erase("sends"); }, "/sends");
  refused([](auto& j) { j["version"] = 5; }, "/version: schedule format version 5; this ibroute reads versions 1..4");
  refused([](auto& j) { j["format"] = "ibroute-slice"; }, "not an ibroute schedule");
  refused([](auto& j) { j["sends"] = nlohmann::json::array(); },
          "/sends: a list is not an object");  // an older slice's list in a version 4
  EXPECT_NE(what([] {
              (void)peer::Schedule::parse("{\"format\": \"ibroute-schedule-slice\", \"ver");
            }).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(what([] { (void)peer::Schedule::load("/nonexistent/s.json"); }).find("/nonexistent/s.json: no such file"),
            std::string::npos);
}

// A compact slice in a folder: the peers' names from the host table export wrote beside it; a
// table of another schedule refused; no table: the peers by rank only.
TEST(Peer, ACompactSliceTakesItsPeersFromTheHostTableBesideIt) {
  World w = half_fat_tree();
  const ScheduleDoc d = doc_of(w, plan_all_to_all(w.ctx, all_hosts(w.f), kShiftsOnly));
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("peer-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto put = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  put("rank00004-x.json", SliceWriter(d).slice(4));
  const std::string slice = (dir / "rank00004-x.json").string();
  const peer::Schedule alone = peer::Schedule::load(slice);
  EXPECT_EQ(alone.hosts()[5].name, "");
  EXPECT_EQ(alone.hosts()[5].port_guid, 0u);
  EXPECT_FALSE(alone.rank_of_port_guid(0)) << "an unnamed peer is no match";
  EXPECT_EQ(alone.rank_of_name(d.identities[4].name), 4u);
  put("hosts.json", hosts_file_json(d));
  const peer::Schedule s = peer::Schedule::load(slice);
  for (uint32_t r = 0; r < d.identities.size(); ++r) {
    EXPECT_EQ(s.hosts()[r].name, d.identities[r].name);
    EXPECT_EQ(s.rank_of_port_guid(d.identities[r].port_guid), r);
  }
  ScheduleDoc other = d;
  other.schedule.name = "q";
  put("hosts.json", hosts_file_json(other));
  EXPECT_NE(what([&] { (void)peer::Schedule::load(slice); }).find("the host table of another schedule"),
            std::string::npos);
  put("hosts.json", "{\"format\": \"ibroute-schedule\"}");
  EXPECT_NE(what([&] { (void)peer::Schedule::load(slice); }).find("hosts.json: not an ibroute slices' host table"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// ibroute watch's epochs as a peer reads them: the newest published, a node's own slice found by
// its port GUID (none once its host is dropped), and the round every node switches at.
TEST(Peer, EpochsAreFoundByTheirLinkAndEachNodeTakesItsOwnSlice) {
  World w = half_fat_tree();
  ScheduleDoc d = doc_of(w, plan_all_to_all(w.ctx, all_hosts(w.f), kShiftsOnly));
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("peer-epochs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(peer::newest_epoch(dir.string())) << "nothing published yet";
  d.epoch = 1, d.epoch_from_unix_ns = 1'700'000'000'000'000'000;
  ibroute::workflow::publish_epoch(dir, d, 3);
  // Epoch 2 without rank 3's host.
  ScheduleDoc e = doc_of(w, plan_all_to_all(
                                w.ctx,
                                [&] {
                                  std::vector<Host> h = all_hosts(w.f);
                                  h.erase(h.begin() + 3);
                                  return h;
                                }(),
                                kShiftsOnly));
  e.epoch = 2, e.epoch_from_unix_ns = d.epoch_from_unix_ns + 5'000'000'000;
  ibroute::workflow::publish_epoch(dir, e, 3);
  EXPECT_THROW(ibroute::workflow::publish_epoch(dir, e, 3), ibroute::InputError) << "an epoch is never rewritten";
  const std::optional<peer::Epoch> newest = peer::newest_epoch(dir.string());
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->number, 2u);
  EXPECT_EQ(std::filesystem::read_symlink(dir / "schedule.json"), std::filesystem::path("current") / "schedule.json");
  const peer::Schedule whole = peer::Schedule::load((dir / "schedule.json").string());
  EXPECT_EQ(whole.epoch_from_unix_ns(), e.epoch_from_unix_ns);
  EXPECT_EQ(whole.epoch(), 2u);
  EXPECT_EQ(whole.hosts().size(), d.identities.size() - 1);
  // Every remaining host finds its own slice, with its own transfers; the dropped one finds none.
  for (size_t r = 0; r < d.identities.size(); ++r) {
    const std::optional<peer::Schedule> mine = peer::load_epoch(*newest, d.identities[r].port_guid);
    if (r == 3) {
      EXPECT_FALSE(mine);
      continue;
    }
    ASSERT_TRUE(mine) << r;
    const uint32_t rank = mine->own_rank().value();
    EXPECT_EQ(mine->hosts()[rank].port_guid, d.identities[r].port_guid);
    EXPECT_EQ(mine->sends(rank).size(), e.identities.size() - 1);
    EXPECT_EQ(mine->epoch(), 2u);
  }
  // A slice file that holds another rank's slice (rank 0's name, rank 1's content): refused, not
  // sent on.
  {
    auto file_of = [&](const char* prefix) {
      for (const auto& f : std::filesystem::directory_iterator(newest->dir))
        if (f.path().filename().string().rfind(prefix, 0) == 0) return f.path();
      return std::filesystem::path();
    };
    const std::filesystem::path r0 = file_of("rank00000-"), r1 = file_of("rank00001-");
    ASSERT_FALSE(r0.empty() || r1.empty());
    std::ostringstream old;
    old << std::ifstream(r0).rdbuf();
    const std::string keep = old.str();
    std::filesystem::copy_file(r1, r0, std::filesystem::copy_options::overwrite_existing);
    std::string msg;
    try {
      (void)peer::load_epoch(*newest, e.identities[0].port_guid);
    } catch (const peer::Error& x) {
      msg = x.what();
    }
    EXPECT_NE(msg.find("holds rank 1's slice, not rank 0's"), std::string::npos) << msg;
    std::ofstream(r0) << keep;
    EXPECT_TRUE(peer::load_epoch(*newest, e.identities[0].port_guid));
  }
  // The handover: the first round that starts at or after the epoch's time.
  const int64_t t0 = d.epoch_from_unix_ns;
  EXPECT_EQ(peer::handover_round(e.epoch_from_unix_ns, t0, 0.5), 10u);
  EXPECT_EQ(peer::handover_round(e.epoch_from_unix_ns + 1, t0, 0.5), 11u);
  EXPECT_EQ(peer::handover_round(t0 - 7, t0, 0.5), 0u);
  EXPECT_THROW(peer::handover_round(t0, t0, 0), peer::Error);
  // Values operators have given: no wrapped or zero round, one error each.
  EXPECT_EQ(peer::handover_round(0, INT64_MIN, 1.0), 9223372037u);  // 2^63 ns later, in whole seconds rounded up
  EXPECT_EQ(peer::handover_round(INT64_MAX, INT64_MIN, 1.0), 18446744074u);
  for (double bad :
       {1e-20, 1e-300, 0.0, -1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()})
    EXPECT_THROW(peer::handover_round(t0 + 1, t0, bad), peer::Error) << bad;
  EXPECT_GE(peer::handover_round(INT64_MAX, INT64_MIN, 1e-9),
            18'446'744'073'709'000'000u);  // the whole clock in nanoseconds
  // Older epochs go; the newest `keep` stay.
  for (uint64_t k = 3; k <= 6; ++k) {
    e.epoch = k;
    ibroute::workflow::publish_epoch(dir, e, 3);
  }
  std::vector<std::string> left;
  for (const auto& x : std::filesystem::directory_iterator(dir))
    if (x.path().filename().string().rfind("epoch-", 0) == 0) left.push_back(x.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"epoch-000004", "epoch-000005", "epoch-000006"}));
  std::filesystem::remove(dir / "current");
  std::filesystem::create_symlink("elsewhere", dir / "current");
  EXPECT_THROW((void)peer::newest_epoch(dir.string()), peer::Error);
  std::filesystem::remove_all(dir);
}

// `ibroute run --placement` names a rank's host as the schedule file does, in any form.
TEST(Placement, EveryFormOfAHostNamesItsRankAndAmbiguityIsRefused) {
  World w = half_fat_tree();
  ScheduleDoc d = doc_of(w, plan_all_to_all(w.ctx, all_hosts(w.f), kShiftsOnly));
  const HostIdentity& h = d.identities[9];
  for (const std::string& spec :
       {h.name, ibroute::fabric::guid_hex(h.node_guid), ibroute::fabric::guid_hex(h.port_guid),
        std::to_string(h.base_lid), std::to_string(h.base_lid + 3)})
    EXPECT_EQ(rank_named(d.identities, spec, "p.txt line 1"), 9u) << spec;
  ibroute::test::expect_input_error([&] { rank_named(d.identities, "49000", "p.txt line 2"); },
                                    "p.txt line 2: no host of the schedule is '49000'");
  ibroute::test::expect_input_error(
      [&] { rank_named(d.identities, "nosuch", "p.txt line 3"); },
      "p.txt line 3: no host of the schedule is 'nosuch' (give a hostname, node description");
  // Hosts as they describe themselves ("h0010 HCA-1") named as users type them, here and in libibroute-peer.
  d.identities[9].name = "h0010 HCA-1";
  d.identities[10].name = "h0010 HCA-2";
  d.identities[11].name = "h0011 mlx5_0";
  for (const std::string& spec :
       {std::string("h0010/HCA-1"), std::string("h0010 HCA-1 ") + ibroute::fabric::guid_hex(h.node_guid)})
    EXPECT_EQ(rank_named(d.identities, spec, "p.txt"), 9u) << spec;
  EXPECT_EQ(rank_named(d.identities, "h0011", "p.txt"), 11u);
  EXPECT_EQ(rank_named(d.identities, "h0010/HCA-2", "p.txt"), 10u);
  ibroute::test::expect_input_error([&] { rank_named(d.identities, "h0110", "p.txt"); }, "; did you mean 'h0010'?");
  ibroute::test::expect_input_error([&] { rank_named(d.identities, "h0010", "p.txt"); },
                                    "'h0010' names 2 hosts of the schedule");
  {
    const ibroute::peer::Schedule s = ibroute::peer::Schedule::parse(to_json(d));
    EXPECT_EQ(s.rank_of_name("h0011"), 11u);
    EXPECT_EQ(s.rank_of_name("h0010/HCA-1"), 9u);
    EXPECT_EQ(s.rank_of_name("h0011/mlx5_0"), 11u);
    EXPECT_FALSE(s.rank_of_name("h0012").has_value());
    EXPECT_THROW((void)s.rank_of_name("h0010"), ibroute::peer::Error);
    EXPECT_EQ(s.ranks_of_names("h00[11],h0010/HCA-2"), (std::vector<std::uint32_t>{11, 10}));  // a list, Slurm's form
    EXPECT_THROW((void)s.ranks_of_names("h0011,h0012"), ibroute::peer::Error);
  }
  d.identities[9].name = h.name;
  d.identities[4].name = h.name;  // two ranks, one description
  ibroute::test::expect_input_error([&] { rank_named(d.identities, h.name, "p.txt line 4"); },
                                    "names 2 hosts of the schedule (rank 4 " + h.name + " port ");
  EXPECT_EQ(rank_named(d.identities, ibroute::fabric::guid_hex(h.port_guid), "p.txt"), 9u)
      << "the GUID still tells them apart";
}
