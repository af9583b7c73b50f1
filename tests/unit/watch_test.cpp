// The watch's read (workflow/watch.hpp) without a command line or a child process: the first read
// stores its scan's tables, then its routes once told "store"; the same files again are "same" and
// store nothing; a changed forwarding table is "changed", named, and its tables stored, its routes
// not when told "quit".
#include "watch.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fabric_store.hpp"

namespace {

using ibroute::workflow::Watch;
using ibroute::workflow::WatchConfig;
using nlohmann::json;

// One read against scan `since` (0: the newest stored), told `told` when it waits.
std::vector<json> read_once(const WatchConfig& c, int64_t since, const std::string& told) {
  std::vector<json> answers;
  std::istringstream in(told);
  Watch::read_once(
      c, since, [&](const json& j) { answers.push_back(j); }, in);
  return answers;
}

std::string text_of(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(WatchRead, FirstSameThenChangedAsTheFilesSay) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ibroute-watch-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string topology = IBROUTE_FIXTURES "/two-leaves.topo", lfts = (dir / "fabric.lfts").string();
  std::string tables = text_of(IBROUTE_FIXTURES "/two-leaves.lfts");
  std::ofstream(lfts) << tables;
  WatchConfig c{.db = (dir / "w.db").string()};
  c.scan.topology = topology;
  c.scan.lfts = lfts;
  ibroute::store::FabricStore(c.db, ibroute::store::Access::create);  // the watch reads into a database that is there

  std::vector<json> a = read_once(c, 0, "store\n");
  ASSERT_EQ(a.size(), 2u) << json(a).dump();
  EXPECT_EQ(a[0]["event"], "first");
  EXPECT_EQ(a[0]["routes_pending"], true);
  const int64_t first = a[0]["scan_id"].get<int64_t>();
  EXPECT_EQ(a[1]["event"], "routes");
  EXPECT_EQ(a[1]["scan_id"], first);
  EXPECT_GT(a[1]["routes"].get<int64_t>(), 0);

  a = read_once(c, first, "");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]["event"], "same");
  a = read_once(c, 0, "");  // a watch started again: judged against the newest stored scan
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0], json({{"event", "first"}, {"scan_id", first}, {"stored", false}}));

  // leaf01 sends hostA's traffic out of hostB's port.
  const std::string row = "0x0004 001 : (Channel Adapter";
  ASSERT_NE(tables.find(row), std::string::npos);
  tables.replace(tables.find(row), 10, "0x0004 002");
  std::ofstream(lfts) << tables;
  a = read_once(c, first, "quit\n");
  ASSERT_EQ(a.size(), 1u) << json(a).dump();
  EXPECT_EQ(a[0]["event"], "changed");
  EXPECT_NE(a[0]["what"].get<std::string>().find("forwarding table entries changed on 1 switch"), std::string::npos)
      << a[0]["what"];
  EXPECT_GT(a[0]["scan_id"].get<int64_t>(), first);

  ibroute::store::FabricStore store(c.db, ibroute::store::Access::read_only);
  EXPECT_EQ(store.scans().size(), 2u);
  std::filesystem::remove_all(dir);
}

}  // namespace
