// The monitoring formats of a counter reading (counter_export.hpp), checked against the fabric
// they came from: every port once, data in bytes, both ends of each cable, names escaped per
// format, and what a format cannot hold left out and named rather than written as another number.
#include "counter_export.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>

#include "counter_carry.hpp"
#include "ibroute/fabric/synthetic.hpp"

using namespace ibroute::fabric;
using namespace ibroute::workflow;

namespace {

Fabric small_tree() {
  FatTreeSpec t;
  t.leaves = 2, t.hosts_per_leaf = 2, t.uplinks = 1, t.spines = 1, t.shuffle_names = true, t.seed = 3;
  return build_fat_tree(t);
}

// Every cabled port once, with counters derived from its place.
CounterSnapshot reading_of(const Fabric& f) {
  CounterSnapshot s;
  for (size_t n = 0; n < f.nodes.size(); ++n)
    for (int p = 1; p <= f.nodes[n].num_ports(); ++p)
      if (f.nodes[n].ports[static_cast<size_t>(p)].connected()) {
        PortSample x{static_cast<int32_t>(n), p, true, {}};
        for (size_t i = 0; i < kCounters; ++i) x.v[i] = n * 1000 + static_cast<uint64_t>(p) * 10 + i;
        s.ports.push_back(x);
      }
  return s;
}

}  // namespace

TEST(CounterExport, PrometheusListsEveryPortOnceWithBytesAndBothEnds) {
  Fabric f = small_tree();
  const CounterSnapshot s = reading_of(f);
  const std::string text = prometheus_text(f, s, {.unix_ns = 1'700'000'000'000'000'000, .scan_id = 4, .seconds = 0.25});
  for (const PortSample& x : s.ports) {
    const Node& n = f.nodes[static_cast<size_t>(x.node)];
    const std::string kind = n.is_switch() ? "switch" : "hca";
    const std::string labels = "{guid=\"" + guid_hex(n.guid) + "\",port=\"" + std::to_string(x.port) + "\"}";
    EXPECT_NE(text.find("infiniband_" + kind + "_port_transmit_data_bytes_total" + labels + " " +
                        std::to_string(x.v[0] * 4) + "\n"),
              std::string::npos)
        << labels;
    EXPECT_NE(
        text.find("infiniband_" + kind + "_port_symbol_error_total" + labels + " " + std::to_string(x.v[5]) + "\n"),
        std::string::npos);
    const Port& p = n.ports[static_cast<size_t>(x.port)];
    const Node& far = f.nodes[static_cast<size_t>(p.peer_node)];
    EXPECT_NE(text.find("infiniband_" + kind + "_uplink_info{guid=\"" + guid_hex(n.guid) + "\",port=\"" +
                        std::to_string(x.port) + "\"," + kind + "=\"" + n.desc + "\",uplink=\"" + far.desc +
                        "\",uplink_guid=\"" + guid_hex(far.guid) + "\""),
              std::string::npos);
  }
  // One HELP and one TYPE per family, each family's samples together.
  std::set<std::string> families;
  std::string last;
  const std::regex sample(R"(^([a-z0-9_]+)[{ ])");
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    std::smatch m;
    if (line.rfind("# TYPE ", 0) == 0) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(families.insert(name).second) << name << " declared twice";
      last = name;
    } else if (line[0] != '#' && std::regex_search(line, m, sample)) {
      EXPECT_EQ(m[1].str(), last) << line;
    }
  }
  EXPECT_NE(text.find("ibroute_counters_read_seconds 0.25\n"), std::string::npos);
}

TEST(CounterExport, NamesAreEscapedAndUnansweredPortsShownNotZeroed) {
  Fabric f = small_tree();
  CounterSnapshot s = reading_of(f);
  const PortSample gone = s.ports.back();
  s.ports.pop_back();
  s.unanswered.emplace_back(gone.node, gone.port);
  Node& n = f.nodes[static_cast<size_t>(gone.node)];
  n.desc = "a\"b\\c, d=e\x1b[31m\xff";
  const std::string prom = prometheus_text(f, s, {});
  const std::string labels = "{guid=\"" + guid_hex(n.guid) + "\",port=\"" + std::to_string(gone.port) + "\"}";
  EXPECT_NE(prom.find("_port_answered" + labels + " 0\n"), std::string::npos);
  EXPECT_EQ(prom.find("_port_symbol_error_total" + labels), std::string::npos)
      << "no counters for a port that did not answer";
  EXPECT_NE(prom.find("=\"a\\\"b\\\\c, d=e\\\\x1b[31m\\\\xff\""), std::string::npos)
      << "quote, backslash, control and non-UTF-8 escaped";
  std::vector<std::string> left_out;
  s.ports.front().v[0] = UINT64_MAX / 2;  // bytes beyond a signed 64-bit integer
  s.ports.front().v[5] = UINT64_MAX;
  const std::string lines = influx_lines(f, s, {.unix_ns = 123, .scan_id = 1}, left_out);
  EXPECT_EQ(left_out.size(), 2u);
  size_t count = 0;
  for (size_t i = 0; (i = lines.find('\n', i)) != std::string::npos; ++i) ++count;
  EXPECT_EQ(count, s.ports.size());
  const std::string first = lines.substr(0, lines.find('\n'));
  EXPECT_EQ(first.find("xmit_data_bytes="), std::string::npos);
  EXPECT_EQ(first.find("symbol_errors="), std::string::npos);
  EXPECT_NE(first.find("rcv_data_bytes=" + std::to_string(s.ports.front().v[1] * 4) + "i"), std::string::npos);
  EXPECT_TRUE(first.ends_with(" 123"));
  // The renamed node, which did not answer, is its peer's far end: comma, equals and space escaped.
  EXPECT_NE(lines.find("remote_node=a\"b\\c\\,\\ d\\=e\\x1b[31m\\xff"), std::string::npos) << lines;
  EXPECT_EQ(lines.find('\x1b'), std::string::npos);
}

// A port that stops answering keeps its last counters through the carry file, marked unanswered;
// the file's damage (another format, a value beyond its counter's width, a cut line) is said and
// the file not used; ports of nodes the fabric no longer has are skipped.
// reading_of's values cut to each counter's width, as a port reads them.
CounterSnapshot fitting(CounterSnapshot s) {
  for (PortSample& x : s.ports)
    for (size_t i = 0; i < kCounters; ++i)
      if (const int bits = counter_bits(static_cast<Counter>(i), x.extended); bits < 64) x.v[i] %= uint64_t{1} << bits;
  return s;
}

TEST(CounterCarry, ThePortThatStopsAnsweringKeepsItsLastCountersAndADamagedFileIsNotUsed) {
  const Fabric f = small_tree();
  const CounterSnapshot first = fitting(reading_of(f));
  const std::string path = ::testing::TempDir() + "/carry-test";
  // Written and read back: every port, every value.
  std::string text = carry_text(f, first.ports);
  { std::ofstream(path) << text; }
  std::string note;
  EXPECT_EQ(read_carry(path, f, note), first.ports);
  EXPECT_EQ(note, "");
  // The next reading: one host port unanswered. It is carried with its last values, and the
  // exposition gives them with port_answered 0 and no state (not read); the others' states given.
  CounterSnapshot now = fitting(reading_of(f));
  const PortSample gone = now.ports[1];
  now.ports.erase(now.ports.begin() + 1);
  now.unanswered.push_back({gone.node, gone.port});
  for (const PortSample& x : now.ports) now.states.push_back({x.node, x.port, 4, 5});
  const std::vector<PortSample> next = carry_over(now, read_carry(path, f, note));
  ASSERT_EQ(now.carried.size(), 1u);
  EXPECT_EQ(now.carried[0], gone);
  EXPECT_EQ(next, first.ports) << "what is carried on: the answered ports now and the one carried";
  const std::string prom = prometheus_text(f, now, {.unix_ns = 1, .scan_id = 4, .seconds = 0.1});
  const Node& n = f.nodes[static_cast<size_t>(gone.node)];
  const std::string kind = n.is_switch() ? "switch" : "hca";
  const std::string labels = "{guid=\"" + guid_hex(n.guid) + "\",port=\"" + std::to_string(gone.port) + "\"}";
  EXPECT_NE(
      prom.find("infiniband_" + kind + "_port_symbol_error_total" + labels + " " + std::to_string(gone.v[5]) + "\n"),
      std::string::npos);
  EXPECT_NE(prom.find("infiniband_" + kind + "_port_answered" + labels + " 0\n"), std::string::npos);
  EXPECT_EQ(prom.find("infiniband_" + kind + "_port_state" + labels), std::string::npos);
  const PortSample& kept = now.ports[0];
  const Node& kn = f.nodes[static_cast<size_t>(kept.node)];
  EXPECT_NE(prom.find(std::string("infiniband_") + (kn.is_switch() ? "switch" : "hca") + "_port_state{guid=\"" +
                      guid_hex(kn.guid) + "\",port=\"" + std::to_string(kept.port) + "\"} 4\n"),
            std::string::npos);
  EXPECT_NE(prom.find("ibroute_counters_ports_carried 1\n"), std::string::npos);
  // Damaged files: said in one line naming the file, nothing used.
  const std::string head = text.substr(0, text.find('\n') + 1);
  const std::string guid =
      carry_text(f, {gone}).substr(head.size(), carry_text(f, {gone}).find(' ', head.size()) - head.size());
  auto row = [](const std::string& g, const std::string& port, const std::string& ext, const std::string& first) {
    std::string r = g + " " + port + " " + ext + " " + first;
    for (size_t i = 1; i < kCounters; ++i) r += " 0";
    return r + "\n";
  };
  const std::string good = row(guid, "1", "1", "7");
  for (const std::string& bad : {std::string("ibroute-counter-carry 2\n") + good,  // another version
                                 head + good.substr(0, good.size() / 2) + "\n",    // a cut line
                                 head + good.substr(0, good.size() - 1) + " 7\n",  // a value too many
                                 head + row("zz", "1", "1", "7"),                  // no GUID
                                 head + row(guid, "255", "1", "7"),                // no port
                                 head + row(guid, "1", "0", "4294967296"),  // beyond 32 bits without extended counters
                                 head + row(guid, "1", "1", "18446744073709551616")}) {  // beyond 64 bits
    { std::ofstream(path, std::ios::trunc) << bad; }
    note.clear();
    EXPECT_TRUE(read_carry(path, f, note).empty()) << bad;
    EXPECT_NE(note.find(path + ": "), std::string::npos) << bad;
    EXPECT_EQ(note.find('\n'), std::string::npos);
  }
  // A node the fabric no longer has: its line skipped, the rest used.
  { std::ofstream(path, std::ios::trunc) << head << row("123456789abcdef", "1", "1", "1") << good; }
  note.clear();
  ASSERT_EQ(read_carry(path, f, note).size(), 1u);
  EXPECT_EQ(read_carry(path, f, note)[0].v[0], 7u);
  EXPECT_EQ(note, "");
  std::remove(path.c_str());
  note.clear();
  EXPECT_TRUE(read_carry(path, f, note).empty());
  EXPECT_EQ(note, "") << "no file: the first reading";
}
