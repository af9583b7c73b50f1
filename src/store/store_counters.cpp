// Snapshots of the ports' performance counters (ibroute counters), each taken against a scan: per
// port of that scan whether it answered, whether its data counts are 64 bits, and every counter.
#include "column_read.hpp"
#include "fabric_store.hpp"
#include "ibroute/fabric/counters.hpp"

namespace ibroute::store {

using namespace ibroute::fabric;
using namespace ibroute::store::column;

namespace {
std::string counter_columns() {
  std::string c;
  for (size_t i = 0; i < kCounters; ++i) c += std::string(i ? ", " : "") + std::string(counter_info(i).name);
  return c;
}
}  // namespace

std::string counter_table_sql() {
  std::string sql =
      "CREATE TABLE counter_snapshot(\n"
      "  id INTEGER PRIMARY KEY AUTOINCREMENT, scan_id INTEGER NOT NULL REFERENCES scan(id),\n"
      "  taken_at TEXT NOT NULL, label TEXT NOT NULL);\n"
      "CREATE TABLE counter_port(\n"
      "  snapshot_id INTEGER NOT NULL, node_idx INTEGER NOT NULL, port INTEGER NOT NULL,\n"
      "  answered INTEGER NOT NULL, extended INTEGER NOT NULL";
  for (size_t i = 0; i < kCounters; ++i) sql += ", " + std::string(counter_info(i).name) + " INTEGER NOT NULL";
  return sql + ",\n  PRIMARY KEY (snapshot_id, node_idx, port)) WITHOUT ROWID;\n";
}

int64_t FabricStore::save_counters(int64_t scan, const std::string& label, const CounterSnapshot& s) {
  Transaction t(db_);
  Stmt q(db_, "INSERT INTO counter_snapshot(scan_id, taken_at, label) VALUES (?, ?, ?)");
  q.bind(1, scan).bind(2, now_iso()).bind(3, std::string_view(label)).run();
  const int64_t id = db_.last_insert_rowid();
  std::string sql = "INSERT INTO counter_port(snapshot_id, node_idx, port, answered, extended, " + counter_columns() +
                    ") VALUES (?, ?, ?, ?, ?";
  for (size_t i = 0; i < kCounters; ++i) sql += ", ?";
  Stmt p(db_, sql + ")");
  for (const PortSample& x : s.ports) {
    p.bind(1, id).bind(2, int64_t{x.node}).bind(3, int64_t{x.port}).bind(4, int64_t{1}).bind(5, int64_t{x.extended});
    for (size_t i = 0; i < kCounters; ++i)
      p.bind(static_cast<int>(6 + i), static_cast<int64_t>(x.v[i]));  // 64-bit counts as their bits
    p.run();
  }
  for (auto [node, port] : s.unanswered) {
    p.bind(1, id).bind(2, int64_t{node}).bind(3, int64_t{port}).bind(4, int64_t{0}).bind(5, int64_t{0});
    for (size_t i = 0; i < kCounters; ++i) p.bind(static_cast<int>(6 + i), int64_t{0});
    p.run();
  }
  t.commit();
  return id;
}

std::vector<CounterSnapshotInfo> FabricStore::counter_snapshots(int64_t scan) {
  Stmt q(db_, "SELECT id, taken_at, label FROM counter_snapshot WHERE scan_id = ? ORDER BY id");
  q.bind(1, scan);
  std::vector<CounterSnapshotInfo> out;
  while (q.step()) {
    CounterSnapshotInfo c;
    c.id = int_col(q, 0, 1, kMaxCount, "counter snapshot of scan " + std::to_string(scan), "id");
    const std::string where = "counter snapshot " + std::to_string(c.id);
    c.scan_id = scan, c.taken_at = text_col(q, 1, where, "taken_at"), c.label = text_col(q, 2, where, "label");
    out.push_back(std::move(c));
  }
  return out;
}

CounterSnapshot FabricStore::load_counters(int64_t id) {
  Stmt s(db_, "SELECT scan_id FROM counter_snapshot WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) throw InputError("no counter snapshot " + std::to_string(id));
  const std::string where = "counter snapshot " + std::to_string(id);
  const int64_t scan_id = int_col(s, 0, 1, kMaxCount, where, "scan_id");
  (void)scan(scan_id);  // exists
  const std::vector<NodeShape>& nodes = shape(scan_id);
  Stmt q(db_, "SELECT node_idx, port, answered, extended, " + counter_columns() +
                  " FROM counter_port WHERE snapshot_id = ? ORDER BY node_idx, port");
  q.bind(1, id);
  CounterSnapshot out;
  size_t row = 0;
  while (q.step()) {
    const std::string at = where + ", port row " + std::to_string(row++);
    const auto node = static_cast<int32_t>(int_col(q, 0, 0, static_cast<int64_t>(nodes.size()) - 1, at, "node_idx"));
    const int port = static_cast<int>(int_col(q, 1, 1, nodes[static_cast<size_t>(node)].nports, at, "port"));
    if (!bool_col(q, 2, at, "answered")) {
      out.unanswered.emplace_back(node, port);
      continue;
    }
    PortSample x;
    x.node = node, x.port = port, x.extended = bool_col(q, 3, at, "extended");
    for (size_t i = 0; i < kCounters; ++i) {
      const int bits = counter_bits(static_cast<Counter>(i), x.extended);
      const int col = static_cast<int>(4 + i);
      if (bits >= 64) {
        if (q.type(col) != SQLITE_INTEGER)
          damaged(at, std::string(counter_info(i).name) + " " + shown(q, col) + " is not an integer");
        x.v[i] = static_cast<uint64_t>(q.i64(col));
      } else {
        x.v[i] = static_cast<uint64_t>(int_col(q, col, 0, (int64_t{1} << bits) - 1, at, counter_info(i).name));
      }
    }
    if (!x.extended) out.no_extended.emplace_back(node, port);
    out.ports.push_back(x);
  }
  return out;
}

}  // namespace ibroute::store
