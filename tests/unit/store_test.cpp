#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "fabric_store.hpp"
#include "fabrics.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/fabric/routes.hpp"

using namespace ibroute::test;
using ibroute::store::FabricStore;

namespace {
struct TempDb {
  std::string path;
  TempDb() {
    path = (std::filesystem::temp_directory_path() / ("ibroute-unit-" + std::to_string(::getpid()) + "-" +
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
  FabricStore s(tmp.path, true);
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

TEST(FabricStore, KeepsSeveralScans) {
  TempDb tmp;
  TwoLeaves t;
  FabricStore s(tmp.path, true);
  int64_t a = s.save_scan({.source = "live", .origin = "x"}, t.f, resolve_routes(t.f));
  t.f.nodes[t.s1].ports[2].state = PortState::down;
  t.f.complete = false;
  int64_t b = s.save_scan({.source = "live", .origin = "x", .complete = false}, t.f, resolve_routes(t.f));
  EXPECT_EQ(s.scans().size(), 2u);
  EXPECT_TRUE(s.scan(a).complete);
  EXPECT_FALSE(s.scan(b).complete);
  EXPECT_THROW(s.scan(99), ibroute::InputError);
}

TEST(FabricStore, RefusesForeignFiles) {
  TempDb tmp;
  EXPECT_THROW(FabricStore(tmp.path, false), ibroute::InputError);  // absent
  { FabricStore s(tmp.path, true); }
  {
    sqlite3* db = nullptr;
    sqlite3_open(tmp.path.c_str(), &db);
    sqlite3_exec(db, "UPDATE meta SET value='7' WHERE key='schema_version'", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  try {
    FabricStore s(tmp.path, true);
    ADD_FAILURE();
  } catch (const ibroute::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 7"), std::string::npos);
  }
  FabricStore fresh(tmp.path + "2", true);
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
