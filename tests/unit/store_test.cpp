#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "fabric_store.hpp"
#include "fabrics.hpp"
#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/link_measures.hpp"
#include "ibroute/fabric/routes.hpp"

using namespace ibroute::test;
using ibroute::store::FabricStore;

namespace {
struct TempDb {
  std::string path;
  TempDb() {
    path = (std::filesystem::temp_directory_path() /
            ("ibroute-unit-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
               .string();
    std::filesystem::remove(path);
  }
  ~TempDb() { std::filesystem::remove(path); }
};
}  // namespace

TEST(FabricStore, RoundTripsFabricAndRoutes) {
  TempDb tmp;
  TwoLeaves t;
  t.f.problems.push_back({"unanswered_port", 0x1000, 3, "L1 port 3 ..."});
  RouteSet r = resolve_routes(t.f);
  FabricStore s(tmp.path, ibroute::store::Access::create);
  int64_t id = s.save_scan({.source = "offline", .origin = "unit"}, t.f, r);
  EXPECT_EQ(s.latest_scan(), id);
  auto info = s.scan(id);
  EXPECT_EQ(info.switches, 4);
  EXPECT_EQ(info.cas, 4);
  EXPECT_EQ(info.links, 8);
  EXPECT_EQ(info.lmc, 1);
  EXPECT_EQ(info.routes, 24);

  Fabric g = s.load_fabric(id, true);
  ASSERT_EQ(g.nodes.size(), t.f.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(g.nodes[i].guid, t.f.nodes[i].guid);
    EXPECT_EQ(g.nodes[i].desc, t.f.nodes[i].desc);
    EXPECT_EQ(g.nodes[i].lft, t.f.nodes[i].lft);
    for (size_t p = 1; p < g.nodes[i].ports.size(); ++p) {
      EXPECT_EQ(g.nodes[i].ports[p].peer_node, t.f.nodes[i].ports[p].peer_node);
      EXPECT_EQ(g.nodes[i].ports[p].base_lid, t.f.nodes[i].ports[p].base_lid);
      EXPECT_EQ(g.nodes[i].ports[p].speed, t.f.nodes[i].ports[p].speed);
    }
  }
  ASSERT_EQ(g.problems.size(), 1u);
  EXPECT_EQ(g.problems[0].port, 3);

  RouteSet back = s.load_routes(id);
  EXPECT_EQ(back.dlids, r.dlids);
  EXPECT_EQ(back.ingress, r.ingress);
  EXPECT_EQ(back.status, r.status);
  EXPECT_EQ(back.hops, r.hops);

  auto one = s.route(id, t.l1, 13);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, RouteStatus::ok);
  EXPECT_EQ(one->hops, (std::vector<Hop>{{t.l1, 4}, {t.s2, 2}, {t.l2, 1}}));
  EXPECT_FALSE(s.route(id, t.s1, 13));  // not an ingress switch
}

TEST(FabricStore, RoutesStoredLaterAreAnsweredFromTheTablesMeanwhile) {
  TempDb tmp;
  TwoLeaves t;
  const RouteSet r = resolve_routes(t.f);
  FabricStore s(tmp.path, ibroute::store::Access::create);
  const int64_t id = s.save_scan_tables({.source = "live", .origin = "watch"}, t.f);
  EXPECT_EQ(s.scan(id).routes, 0);
  const RouteSet meanwhile = s.load_routes(id);
  EXPECT_EQ(meanwhile.dlids, r.dlids);
  EXPECT_EQ(meanwhile.ingress, r.ingress);
  EXPECT_EQ(meanwhile.status, r.status);
  EXPECT_EQ(meanwhile.hops, r.hops);
  auto one = s.route(id, t.l1, 13);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, RouteStatus::ok);
  EXPECT_EQ(one->hops, (std::vector<Hop>{{t.l1, 4}, {t.s2, 2}, {t.l2, 1}}));
  EXPECT_FALSE(s.route(id, t.s1, 13));   // not an ingress switch, as when stored
  EXPECT_FALSE(s.route(id, t.l1, 999));  // no such LID

  s.save_routes(id, r, {{"broken_route", 0x1000, -1, "3 route(s) dead_end at L1"}});
  EXPECT_EQ(s.scan(id).routes, 24);
  const RouteSet back = s.load_routes(id);
  EXPECT_EQ(back.status, r.status);
  EXPECT_EQ(back.hops, r.hops);
  ASSERT_EQ(s.load_fabric(id, false).problems.size(), 1u);  // what resolving the routes found, stored with them
  EXPECT_EQ(s.route(id, t.l1, 13)->hops, one->hops);
  EXPECT_THROW(s.save_routes(id, r, {}), std::logic_error);  // once
}

TEST(FabricStore, KeepsSeveralScans) {
  TempDb tmp;
  TwoLeaves t;
  FabricStore s(tmp.path, ibroute::store::Access::create);
  int64_t a = s.save_scan({.source = "live", .origin = "x"}, t.f, resolve_routes(t.f));
  t.f.nodes[t.s1].ports[2].state = PortState::down;
  t.f.complete = false;
  int64_t b = s.save_scan({.source = "live", .origin = "x", .complete = false}, t.f, resolve_routes(t.f));
  EXPECT_EQ(s.scans().size(), 2u);
  EXPECT_TRUE(s.scan(a).complete);
  EXPECT_FALSE(s.scan(b).complete);
  EXPECT_THROW(s.scan(99), ibroute::InputError);
}

// The version before this one (7: no lft.rows_to) is refused read-only, naming migrate, and
// migrated by a writer; a cut table then keeps its rows_to.
TEST(FabricStore, MigratesTheVersionBefore) {
  TempDb tmp;
  { FabricStore s(tmp.path, ibroute::store::Access::create); }
  {
    sqlite3* db = nullptr;
    sqlite3_open(tmp.path.c_str(), &db);
    ASSERT_EQ(
        sqlite3_exec(db, "ALTER TABLE lft DROP COLUMN rows_to; UPDATE meta SET value='7' WHERE key='schema_version'",
                     nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(db);
  }
  try {
    FabricStore s(tmp.path, ibroute::store::Access::read_only);
    ADD_FAILURE();
  } catch (const ibroute::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has schema version 7; run 'ibroute migrate"), std::string::npos) << e.what();
  }
  FabricStore s(tmp.path, ibroute::store::Access::create);
  EXPECT_EQ(s.found_version(), 7);
  EXPECT_TRUE(s.migrated());
  TwoLeaves t;
  t.f.nodes[t.s1].lft_rows_to = 3;
  const int64_t id = s.save_scan({.source = "offline", .origin = "x"}, t.f, resolve_routes(t.f));
  EXPECT_EQ(s.load_fabric(id, true).nodes[t.s1].lft_rows_to, 3u);
}

TEST(FabricStore, RefusesForeignFiles) {
  TempDb tmp;
  EXPECT_THROW(FabricStore(tmp.path, ibroute::store::Access::read_write), ibroute::InputError);  // absent
  { FabricStore s(tmp.path, ibroute::store::Access::create); }
  {
    sqlite3* db = nullptr;
    sqlite3_open(tmp.path.c_str(), &db);
    sqlite3_exec(db, "UPDATE meta SET value='9' WHERE key='schema_version'", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  try {
    FabricStore s(tmp.path, ibroute::store::Access::create);
    ADD_FAILURE();
  } catch (const ibroute::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 9"), std::string::npos);
  }
  FabricStore fresh(tmp.path + "2", ibroute::store::Access::create);
  EXPECT_THROW(fresh.latest_scan(), ibroute::InputError);
  std::filesystem::remove(tmp.path + "2");
}

TEST(FabricStore, HopsEncoding) {
  std::vector<Hop> h{{3, 1}, {40, 13}, {7, 0}};
  EXPECT_EQ(ibroute::store::encode_hops(h), "3:1 40:13 7:0");
  EXPECT_EQ(ibroute::store::decode_hops("3:1 40:13 7:0"), h);
  EXPECT_TRUE(ibroute::store::decode_hops("").empty());
  EXPECT_THROW(ibroute::store::decode_hops("3:1 x"), ibroute::InputError);
}

namespace {
std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void exec_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}
}  // namespace

TEST(FabricStore, Version4Fields) {
  TempDb tmp;
  TwoLeaves t;
  t.f.nodes[t.l1].sysimg_guid = 0xabc0000000000001;
  t.f.nodes[t.h[0]].node_desc = "mlx5_0 HCA-1";
  FabricStore s(tmp.path, ibroute::store::Access::create);
  int64_t a = s.save_scan({.source = "offline", .origin = "unit"}, t.f, resolve_routes(t.f));
  t.f.has_lfts = false;
  int64_t b = s.save_scan({.source = "offline", .origin = "unit"}, t.f, RouteSet{});
  EXPECT_TRUE(s.scan(a).has_lfts);
  EXPECT_FALSE(s.scan(b).has_lfts);
  Fabric g = s.load_fabric(a, true);
  EXPECT_TRUE(g.has_lfts);
  EXPECT_EQ(g.nodes[t.l1].sysimg_guid, 0xabc0000000000001u);
  EXPECT_EQ(g.nodes[t.l2].sysimg_guid, 0u);
  EXPECT_EQ(g.nodes[t.h[0]].node_desc, "mlx5_0 HCA-1");
  EXPECT_EQ(g.nodes[t.h[1]].node_desc, "");
  EXPECT_FALSE(s.load_fabric(b, false).has_lfts);
  EXPECT_TRUE(s.load_routes(b).ingress.empty());
}

TEST(FabricStore, ReadOnlyRefusesOlderSchemaAndMigrateUpgrades) {
  TempDb tmp;
  TwoLeaves t;
  {
    FabricStore s(tmp.path, ibroute::store::Access::create);
    s.save_scan({.source = "offline", .origin = "unit"}, t.f, resolve_routes(t.f));
  }
  exec_sql(tmp.path,
           "ALTER TABLE node DROP COLUMN sysimg_guid; ALTER TABLE node DROP COLUMN node_desc;"
           "ALTER TABLE scan DROP COLUMN has_lfts; UPDATE meta SET value='3' WHERE key='schema_version'");
  const std::string before = file_bytes(tmp.path);
  try {
    FabricStore s(tmp.path, ibroute::store::Access::read_only);
    ADD_FAILURE();
  } catch (const ibroute::InputError& e) {
    EXPECT_EQ(std::string(e.what()), tmp.path + " has schema version 3; run 'ibroute migrate --db " + tmp.path +
                                         "' (this ibroute reads version " +
                                         std::to_string(ibroute::store::kSchemaVersion) + ")");
  }
  EXPECT_EQ(file_bytes(tmp.path), before);
  EXPECT_FALSE(std::filesystem::exists(tmp.path + "-journal"));
  {
    FabricStore s(tmp.path, ibroute::store::Access::read_write);
    EXPECT_TRUE(s.migrated());
    EXPECT_EQ(s.found_version(), 3);
  }
  FabricStore s(tmp.path, ibroute::store::Access::read_only);
  EXPECT_FALSE(s.migrated());
  EXPECT_EQ(s.found_version(), ibroute::store::kSchemaVersion);
  Fabric g = s.load_fabric(1, true);
  EXPECT_TRUE(g.has_lfts);
  EXPECT_EQ(g.nodes[t.l1].sysimg_guid, 0u);
  EXPECT_EQ(s.load_routes(1).dlids.size(), 12u);
  // A read-only store cannot write.
  EXPECT_ANY_THROW(s.save_scan({.source = "offline", .origin = "unit"}, t.f, resolve_routes(t.f)));
}

// Each damage: an UPDATE on a good database, what reads it, and what the one-line error says.
namespace {
// TwoLeaves' scan stored in a new database, then `sql` run on it behind the store's back.
void store_then_damage(const TempDb& tmp, const char* sql) {
  TwoLeaves t;
  FabricStore(tmp.path, ibroute::store::Access::create)
      .save_scan({.source = "offline", .origin = "unit"}, t.f, resolve_routes(t.f));
  exec_sql(tmp.path, sql);
}
}  // namespace

TEST(FabricStore, DamagedRowsAreInputErrors) {
  struct Case {
    const char* sql;
    const char* needle;
  };
  // h1..h4 = nodes 0..3, L1 = 4, L2 = 5, S1 = 6, S2 = 7 (TwoLeaves)
  const Case cases[] = {
      {"UPDATE port SET peer_node = 256 WHERE node_idx = 0 AND num = 1", "peer node 256 of 8"},
      {"UPDATE port SET peer_port = 9 WHERE node_idx = 0 AND num = 1", "peer port 9 of node 4 with 4 ports"},
      {"UPDATE port SET peer_port = 2 WHERE node_idx = 0 AND num = 1", "points to node 1 port 1"},
      {"UPDATE port SET peer_node = NULL, peer_port = NULL WHERE node_idx = 4 AND num = 1", "points nowhere"},
      {"UPDATE port SET base_lid = 65538 WHERE node_idx = 0", "base LID 65538"},
      {"UPDATE port SET lmc = 40 WHERE node_idx = 0", "LMC 40"},
      {"UPDATE port SET width = 3 WHERE node_idx = 0", "width 3"},
      {"UPDATE port SET speed = 'WARP' WHERE node_idx = 0", "speed 'WARP'"},
      {"UPDATE port SET state = 'sleepy' WHERE node_idx = 0", "state 'sleepy'"},
      {"UPDATE port SET guid = '0x12zz' WHERE node_idx = 0", "GUID '0x12zz'"},
      {"UPDATE node SET nports = 300 WHERE idx = 0", "nports 300"},
      {"UPDATE node SET type = 'toaster' WHERE idx = 0", "type 'toaster'"},
      {"UPDATE node SET guid = 'x' || guid WHERE idx = 3", "is not a GUID"},
      {"UPDATE node SET idx = 9 WHERE idx = 7", "indices have gaps"},
      {"UPDATE lft SET ports = x'0109' WHERE node_idx = 4", "LID 1 to port 9 of 4"},
      {"UPDATE lft SET ports = zeroblob(50000) WHERE node_idx = 4", "table of 50000 LIDs"},
      {"UPDATE lft SET node_idx = 0 WHERE node_idx = 4", "is not a switch"},
      {"UPDATE scan SET lmc = 257", "scan 1: lmc 257"},
  };
  for (const Case& c : cases) {
    TempDb tmp;
    store_then_damage(tmp, c.sql);
    FabricStore s(tmp.path, ibroute::store::Access::read_only);
    try {
      s.load_fabric(1, true);
      ADD_FAILURE() << c.sql;
    } catch (const ibroute::InputError& e) {
      std::string what = e.what();
      EXPECT_TRUE(what.starts_with("database damaged: ") || what.find("lmc 257") != std::string::npos) << what;
      EXPECT_NE(what.find(c.needle), std::string::npos) << c.sql << " -> " << what;
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
  }
}

TEST(FabricStore, DamagedRoutesAndLidsAreInputErrors) {
  struct Case {
    const char* sql;
    const char* needle;
  };
  const Case cases[] = {
      {"UPDATE route SET hops = '4:3 0:1' WHERE ingress = 4 AND dlid = 12", "not a switch"},
      {"UPDATE route SET hops = '4:3 99:1' WHERE ingress = 4 AND dlid = 12", "hop to node 99 of 8"},
      {"UPDATE route SET hops = '4:7' WHERE ingress = 4 AND dlid = 12", "port 7 of node 4 with 4 ports"},
      {"UPDATE route SET hops = '4:3 junk' WHERE ingress = 4 AND dlid = 12", "not node:port"},
      {"UPDATE route SET status = 9 WHERE ingress = 4 AND dlid = 12", "status 9"},
      {"UPDATE route SET ingress = 0 WHERE ingress = 4", "not a switch"},
      {"DELETE FROM route WHERE ingress = 4 AND dlid = 12", "routes do not cover the LIDs"},
      {"UPDATE lid SET node_idx = 42 WHERE lid = 12", "owner node 42 of 8"},
      {"UPDATE lid SET port = 3 WHERE lid = 12", "owner port 3"},
  };
  for (const Case& c : cases) {
    TempDb tmp;
    store_then_damage(tmp, c.sql);
    FabricStore s(tmp.path, ibroute::store::Access::read_only);
    try {
      s.load_routes(1);
      ADD_FAILURE() << c.sql;
    } catch (const ibroute::InputError& e) {
      std::string what = e.what();
      EXPECT_TRUE(what.starts_with("database damaged: scan 1")) << what;
      EXPECT_NE(what.find(c.needle), std::string::npos) << c.sql << " -> " << what;
    }
  }
  // route() checks the one row it reads.
  TempDb tmp;
  TwoLeaves t;
  {
    FabricStore(tmp.path, ibroute::store::Access::create)
        .save_scan({.source = "offline", .origin = "unit"}, t.f, resolve_routes(t.f));
  }
  exec_sql(tmp.path, "UPDATE route SET hops = '4:3 2:1' WHERE ingress = 4 AND dlid = 12");
  FabricStore s(tmp.path, ibroute::store::Access::read_only);
  EXPECT_TRUE(s.route(1, t.l1, 14));
  EXPECT_THROW(s.route(1, t.l1, 12), ibroute::InputError);
}

TEST(FabricStore, DamagedFileIsOneLineInputError) {
  TempDb tmp;
  TwoLeaves t;
  {
    FabricStore(tmp.path, ibroute::store::Access::create)
        .save_scan({.source = "offline", .origin = "unit"}, t.f, resolve_routes(t.f));
  }
  // Overwrite everything after the first page with garbage.
  auto size = std::filesystem::file_size(tmp.path);
  {
    std::fstream f(tmp.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    for (auto i = 4096u; i < size; ++i) f.put(static_cast<char>((i * 2654435761u) >> 13));
  }
  const std::string before = file_bytes(tmp.path);
  try {
    FabricStore s(tmp.path, ibroute::store::Access::read_only);
    s.scans();
    s.load_fabric(1, true);
    ADD_FAILURE();
  } catch (const ibroute::InputError& e) {
    std::string what = e.what();
    EXPECT_TRUE(what.starts_with("database damaged: ")) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_EQ(file_bytes(tmp.path), before);
}

// The change of a counter between two readings: plain, wrapped (taken modulo its width), stopped
// at its maximum (PortCounters saturate), and 64 bits wide.
TEST(Counters, ChangesWrapAndSaturation) {
  using namespace ibroute::fabric;
  CounterChange c = counter_change(10, 17, 16);
  EXPECT_EQ(c.delta, 7u);
  EXPECT_FALSE(c.wrapped || c.saturated);
  c = counter_change(4294967000u, 100, 32);
  EXPECT_EQ(c.delta, 100u + 4294967296u - 4294967000u);
  EXPECT_TRUE(c.wrapped);
  c = counter_change(65000, 65535, 16);
  EXPECT_EQ(c.delta, 535u);
  EXPECT_TRUE(c.saturated);
  c = counter_change(UINT64_MAX - 5, 4, 64);
  EXPECT_EQ(c.delta, 10u);
  EXPECT_TRUE(c.wrapped);
  EXPECT_FALSE(c.saturated);  // a 64-bit counter wraps, it does not stop
  EXPECT_EQ(counter_bits(Counter::xmit_data, true), 64);
  EXPECT_EQ(counter_bits(Counter::xmit_data, false), 32);
  EXPECT_EQ(counter_bits(Counter::symbol_errors, true), 16);
}

// Deltas by port: a port only in one snapshot is left out; a port whose counters were 64 bits
// before and 32 after (extended counters lost) is compared at 32 bits; errors summed.
TEST(Counters, DeltasByPort) {
  using namespace ibroute::fabric;
  CounterSnapshot a, b;
  PortSample p;
  p.node = 3, p.port = 1, p.extended = true;
  p.v[static_cast<size_t>(Counter::xmit_data)] = (uint64_t{1} << 33) + 5;
  a.ports.push_back(p);
  p.port = 2;
  a.ports.push_back(p);
  PortSample q = a.ports[0];
  q.extended = false;
  q.v[static_cast<size_t>(Counter::xmit_data)] = 25;  // the low 32 bits moved by 20
  q.v[static_cast<size_t>(Counter::symbol_errors)] = 3;
  q.v[static_cast<size_t>(Counter::link_downed)] = 1;
  b.ports.push_back(q);
  const std::vector<PortDelta> d = counter_deltas(a, b);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].port, 1);
  EXPECT_EQ(d[0].delta[static_cast<size_t>(Counter::xmit_data)], 20u);
  EXPECT_EQ(d[0].errors(), 4u);
  EXPECT_EQ(d[0].wrapped, 0u);
}

// Snapshots in the database: saved, listed, read back the same (64-bit counts whole, unanswered
// ports as such); a counter beyond its width is refused naming the row; migration from version 6
// adds the tables.
TEST(Counters, MeasuredAgainstPlannedPerLink) {
  using namespace ibroute::fabric;
  TwoLeaves t;
  LinkIndex links(t.f);
  std::vector<uint32_t> total(links.size(), 0);
  const int32_t up = links.id(t.l1, 3), down = links.id(t.s1, 2), host = links.id(t.h[0], 1), spare = links.id(t.l2, 4);
  total[static_cast<size_t>(up)] = 4, total[static_cast<size_t>(down)] = 4, total[static_cast<size_t>(host)] = 3;
  auto delta = [&](int32_t node, int port, uint64_t words, uint64_t wait) {
    PortDelta d;
    d.node = node, d.port = port;
    d.delta[static_cast<size_t>(Counter::xmit_data)] = words;
    d.delta[static_cast<size_t>(Counter::xmit_wait)] = wait;
    return d;
  };
  // 1000 B per transfer and round, 2 rounds: the up-link as planned (+1 % headers), the spine's
  // down-port at half, the host link not read, a spare up-link carrying 8 MiB nobody planned.
  std::vector<PortDelta> deltas{delta(t.l1, 3, 8080 / 4, 500'000), delta(t.s1, 2, 4000 / 4, 0),
                                delta(t.l2, 4, (8u << 20) / 4, 0), delta(t.l1, 1, 0, 0)};
  LinkMeasures m = measure_links(deltas, links, planned_bytes(total, 2000), 0.01, 10);
  ASSERT_EQ(m.rows.size(), 3u) << "a read link that neither was planned nor moved anything is no row";
  EXPECT_EQ(m.rows[0].link, spare) << "the largest gap first";
  EXPECT_FALSE(m.rows[0].ratio());
  EXPECT_EQ(m.planned_links, 3u);
  EXPECT_EQ(m.unread_links, 1u);
  EXPECT_EQ(m.planned_bytes, 16000u) << "the read links only: the totals compare like with like";
  EXPECT_EQ(m.measured_bytes, 12080u);
  EXPECT_EQ(m.off_links, 2u) << "the half-loaded spine port and the spare link";
  const LinkMeasure& u =
      *std::find_if(m.rows.begin(), m.rows.end(), [&](const LinkMeasure& x) { return x.link == up; });
  EXPECT_DOUBLE_EQ(*u.ratio(), 1.01);
  EXPECT_DOUBLE_EQ(*u.wait_share, 0.5) << "500 000 ticks of 10 ns in 10 ms";
  EXPECT_DOUBLE_EQ(*m.worst_wait_share, 0.5);
  EXPECT_FALSE(measure_links(deltas, links, planned_bytes(total, 2000), 0.01, 0).rows[0].wait_share)
      << "no tick: no share";
}

TEST(Counters, SnapshotsRoundTripAndDamageIsRefused) {
  using namespace ibroute::fabric;
  TempDb tmp;
  TwoLeaves t;
  CounterSnapshot s;
  PortSample p;
  p.node = t.l1, p.port = 1, p.extended = true;
  p.v[static_cast<size_t>(Counter::xmit_data)] = UINT64_MAX - 1;
  p.v[static_cast<size_t>(Counter::symbol_errors)] = 65535;
  s.ports.push_back(p);
  p.node = t.h[0], p.extended = false, p.v = {};
  p.v[static_cast<size_t>(Counter::xmit_wait)] = 4294967295u;
  s.ports.insert(s.ports.begin(), p);  // by (node, port), as read_counters gives them
  s.no_extended.emplace_back(t.h[0], 1);
  s.unanswered.emplace_back(t.l2, 3);
  {
    FabricStore st(tmp.path, ibroute::store::Access::create);
    st.save_scan({.source = "offline", .origin = "unit"}, t.f, resolve_routes(t.f));
    const int64_t id = st.save_counters(1, "before", s);
    const auto list = st.counter_snapshots(1);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].label, "before");
    const CounterSnapshot back = st.load_counters(id);
    ASSERT_EQ(back.ports.size(), 2u);
    EXPECT_EQ(back.ports, s.ports);
    EXPECT_EQ(back.unanswered, s.unanswered);
    EXPECT_EQ(back.no_extended, s.no_extended);
  }
  exec_sql(tmp.path, "UPDATE counter_port SET symbol_errors = 70000 WHERE node_idx = " + std::to_string(t.l1));
  {
    FabricStore st(tmp.path, ibroute::store::Access::read_write);
    expect_input_error([&] { (void)st.load_counters(1); }, "counter snapshot 1, port row");
    expect_input_error([&] { (void)st.load_counters(1); }, "symbol_errors 70000");
  }
  exec_sql(
      tmp.path,
      "DROP TABLE counter_port; DROP TABLE counter_snapshot; UPDATE meta SET value='6' WHERE key='schema_version'");
  FabricStore st(tmp.path, ibroute::store::Access::read_write);
  EXPECT_TRUE(st.migrated());
  EXPECT_EQ(st.save_counters(1, "", s), 1);
}
