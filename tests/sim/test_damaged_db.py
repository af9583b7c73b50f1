"""The database as untrusted input: damaged copies of a real database, every reading command on each.

Each reading command must either succeed or stop with exit code 2 and one error line; the commands
that read the damaged part must stop; the file must stay byte for byte as it was (reading commands
open it read-only). An older schema is refused by reading commands (naming `ibroute migrate`),
migrated by `ibroute migrate`, and read afterwards.
"""
import hashlib
import os
import random
import shutil
import sqlite3
import unittest

from common import TempDirTest, ibroute
from simfabric import SimFabric, generate, write_text

SCAN = 2  # the newest scan, which every command reads by default; the damage goes there


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def sql(*statements):
    def damage(path):
        with sqlite3.connect(path) as c:
            for s in statements:
                c.execute(s)
        c.close()
    return damage


def blob_edit(column, edit):
    """Rewrites one schedule_phase blob (phase 0) through `edit(bytes) -> bytes`."""
    def damage(path):
        with sqlite3.connect(path) as c:
            b = c.execute(f"SELECT {column} FROM schedule_phase WHERE phase = 0").fetchone()[0]
            c.execute(f"UPDATE schedule_phase SET {column} = ? WHERE phase = 0", (edit(bytes(b)),))
        c.close()
    return damage


def explicit_row_sending_to(rank):
    """Phase 0 rewritten as an explicit row (destination and DLID per rank), rank 0 sending to `rank`."""
    def damage(path):
        with sqlite3.connect(path) as c:
            n = c.execute("SELECT hosts FROM schedule").fetchone()[0]
            dst = rank.to_bytes(4, "little", signed=True) + bytes(4 * (n - 1))
            c.execute("UPDATE schedule_phase SET shift = NULL, dst = ?, dlid = ? WHERE phase = 0", (dst, bytes(2 * n)))
        c.close()
    return damage


def garbage_over_page(table):
    """Random bytes over the root page of `table` (page 1 for the schema itself)."""
    def damage(path):
        with sqlite3.connect(path) as c:
            size = c.execute("PRAGMA page_size").fetchone()[0]
            page = 1 if table is None else c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                                                      (table,)).fetchone()[0]
        c.close()
        rnd = random.Random(page)
        with open(path, "r+b") as f:
            f.seek((page - 1) * size + (100 if page == 1 else 0))
            f.write(bytes(rnd.randrange(256) for _ in range(size - (100 if page == 1 else 0))))
    return damage


def truncate(fraction):
    def damage(path):
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(int(size * fraction) // 4096 * 4096 if fraction else 4096)
    return damage


def foreign_sqlite(path):
    os.remove(path)
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE meta(k, v)")
        c.execute("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT)")
        c.execute("INSERT INTO customers(name) VALUES ('x')")
    c.close()


def random_bytes(path):
    with open(path, "wb") as f:
        f.write(random.Random(7).randbytes(64 * 1024))


class DamagedDatabase(TempDirTest):
    READERS = ("scans", "routes", "diff", "topo", "analyze", "export", "validate")

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls._dir = tempfile.TemporaryDirectory(prefix="ibroute-damaged-")
        d = cls._dir.name
        topo = generate(os.path.join(d, "small.topo"), "--leaves", "4", "--down", "4", "--up", "2", "--spines", "2",
                        "--switch-ports", "8", "--spine-ports", "8", "--shuffle", "--seed", "6")
        with SimFabric(topo, lmc=2) as sim:
            t = write_text(os.path.join(d, "topo.txt"), sim.run(["timeout", "60", "ibnetdiscover"]).stdout)
            l = write_text(os.path.join(d, "lfts.txt"), sim.run(["timeout", "60", "dump_fts"]).stdout)
        cls.good = os.path.join(d, "good.db")
        cls.topo = t
        for _ in range(2):  # two scans: diff compares them
            ibroute("scan", "--db", cls.good, "--topology", t, "--lfts", l)
        ibroute("plan", "--db", cls.good, "--name", "daq", "--shifts-only")  # compact rows, whose damage is tested
        cls.schedule_file = os.path.join(d, "daq.json")
        ibroute("export", "--db", cls.good, "--schedule", "daq", "-o", cls.schedule_file)
        with sqlite3.connect(cls.good) as c:
            cas = c.execute("SELECT idx, desc FROM node WHERE scan_id = ? AND type = 'ca' ORDER BY idx", (SCAN,)).fetchall()
            cls.ca = cas[0][0]
            cls.src, cls.dst = cas[0][1], cas[-1][1]
            cls.dst_idx = cas[-1][0]
            cls.dst_lids = [r[0] for r in c.execute("SELECT lid FROM lid WHERE scan_id = ? AND node_idx = ?", (SCAN, cas[-1][0]))]
            cls.port = c.execute("SELECT node_idx, num, peer_node, peer_port FROM port WHERE scan_id = ? AND node_idx = ?"
                                 " AND peer_node IS NOT NULL ORDER BY num LIMIT 1", (SCAN, cls.ca)).fetchone()
            cls.switch = c.execute("SELECT idx, nports FROM node WHERE scan_id = ? AND type = 'switch' ORDER BY idx LIMIT 1",
                                   (SCAN,)).fetchone()
            cls.nodes = c.execute("SELECT count(*) FROM node WHERE scan_id = ?", (SCAN,)).fetchone()[0]
        c.close()

    @classmethod
    def tearDownClass(cls):
        cls._dir.cleanup()

    def commands(self, db):
        return {
            "scans": ["scans", "--db", db],
            "routes": ["routes", "--db", db, "--from", self.src, "--to", self.dst, "--lid", "all"],
            "diff": ["diff", "--db", db],
            "topo": ["topo", "--db", db, "--format", "dot"],
            "analyze": ["analyze", "--db", db],
            "export": ["export", "--db", db, "--schedule", "daq"],
            "validate": ["validate", "--db", db, self.schedule_file],
        }

    def copy(self, name):
        p = self.path(name + ".db")
        shutil.copyfile(self.good, p)
        return p

    def read_all(self, db, must_fail, needle=None):
        """Every reading command on `db`: exit 0 or 2 with one error line; those in must_fail exit 2."""
        before = digest(db)
        failed = {}
        for name, args in self.commands(db).items():
            r = ibroute(*args, check=False, timeout=60)
            lines = [x for x in r.stderr.splitlines() if not x.startswith("ibwarn")]
            self.assertIn(r.returncode, (0, 2), f"{name} on {db}: exit {r.returncode}: {r.stderr[-2000:]}")
            if r.returncode == 2:
                self.assertEqual(len(lines), 1, f"{name} on {db}: {r.stderr!r}")
                self.assertTrue(lines[0].startswith("ibroute: "), lines[0])
                failed[name] = lines[0]
                if needle and name in must_fail:
                    self.assertIn(needle, lines[0], name)
            self.assertEqual(digest(db), before, f"{name} changed {db}")
            for suffix in ("-journal", "-wal", "-shm"):
                self.assertFalse(os.path.exists(db + suffix), f"{name} left {db}{suffix}")
        missing = set(must_fail) - set(failed)
        self.assertFalse(missing, f"{os.path.basename(db)}: these read the damage and did not fail: {missing}; "
                                  f"errors: {failed}")
        self.assertTrue(failed, f"{db}: no command noticed the damage")
        return failed

    def test_the_path_is_checked_before_sqlite_opens_it(self):
        """A FIFO (which hung every command), a directory, a device, a symlink loop, "" and a path of
        6 000 bytes: every command stops at once with exit 2 and one line naming the file and why."""
        fifo = self.path("fifo.db")
        os.mkfifo(fifo)
        os.symlink("loop-b.db", self.path("loop-a.db"))
        os.symlink("loop-a.db", self.path("loop-b.db"))
        for db, needle in ((fifo, "is a FIFO, not a database file"), (self.tmp, "is a directory, not a database file"),
                           ("/dev/null", "/dev/null is a device"), (self.path("loop-a.db"), "loop-a.db: Too many levels of symbolic links"),
                           ("", "--db: an empty path"), ("x" * 6000, "--db: a path of 6000 bytes (at most 4096)")):
            for name, args in self.commands(db).items():
                r = ibroute(*args, check=False, timeout=30)
                self.assertEqual(r.returncode, 2, f"{name} on {db[:40]!r}: {r.stderr}")
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(needle, r.stderr, name)
                self.assertLess(len(r.stderr), 400, "the path is not echoed whole")
        r = ibroute("scan", "--db", "", "--topology", self.topo, check=False)
        self.assertEqual((r.returncode, len(r.stderr.splitlines())), (2, 1), r.stderr)

    def test_a_read_only_database_as_a_user_who_cannot_write_it(self):
        """Root writes any file, so the read-only check is run as `nobody` (setpriv): a writing
        command on a database it may not write stops at once, exit 2, one line naming the file and
        the reason; a reading command reads it; the file is unchanged."""
        import shutil
        import subprocess
        from common import IBROUTE
        as_nobody = []
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                self.skipTest("running as root without setpriv: no user who cannot write the file")
            as_nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
        probe = subprocess.run([*as_nobody, "test", "-x", IBROUTE], capture_output=True)
        if probe.returncode != 0:
            self.skipTest(f"{IBROUTE} is not executable by an unprivileged user here")
        d = self.path("ro")
        os.makedirs(d)
        db = shutil.copy(self.good, os.path.join(d, "ro.db"))
        topo = shutil.copy(self.topo, os.path.join(d, "topo.txt"))
        os.chmod(db, 0o444)
        os.chmod(topo, 0o444)
        os.chmod(d, 0o755)
        os.chmod(self.tmp, 0o755)
        before = digest(db)
        env = {k: v for k, v in os.environ.items() if k != "HOME"}
        for args, needle in ((["scan", "--db", db, "--topology", topo], "ro.db is read-only (Permission denied); this command writes to it"),
                             (["plan", "--db", db, "--name", "x"], "ro.db is read-only")):
            r = subprocess.run([*as_nobody, "timeout", "60", IBROUTE, *args], capture_output=True, text=True, env=env)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(needle, r.stderr)
        r = subprocess.run([*as_nobody, "timeout", "60", IBROUTE, "scans", "--db", db], capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(digest(db), before)

    def test_two_scans_creating_one_database_both_stored(self):
        """Both create the schema at once: one waits for the other's (BEGIN IMMEDIATE, counted again)."""
        import subprocess
        from common import IBROUTE
        for attempt in range(6):
            db = self.path(f"race{attempt}.db")
            procs = [subprocess.Popen([IBROUTE, "scan", "--db", db, "--topology", self.topo], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True) for _ in range(2)]
            errors = [p.communicate(timeout=120)[1] for p in procs]
            self.assertEqual([p.returncode for p in procs], [0, 0], errors)
            with sqlite3.connect(db) as c:
                self.assertEqual(c.execute("SELECT count(*) FROM scan").fetchone()[0], 2)

    def test_good_database_reads(self):
        db = self.copy("good")
        before = digest(db)
        for name, args in self.commands(db).items():
            r = ibroute(*args, check=False)
            self.assertEqual(r.returncode, 0, f"{name}: {r.stderr}")
        self.assertEqual(digest(db), before)

    def test_damaged_rows(self):
        s, ca, (pn, pp, peer, peer_port), (sw, sw_ports) = SCAN, self.ca, self.port, self.switch
        FABRIC = {"routes", "diff", "topo", "analyze", "export", "validate"}
        LFT = {"diff", "analyze", "validate"}
        ALL = set(self.READERS)
        dst_lids = ",".join(map(str, self.dst_lids))
        port_row = f"scan_id = {s} AND node_idx = {pn} AND num = {pp}"
        node_row = f"scan_id = {s} AND idx = {ca}"
        route_rows = f"scan_id = {s} AND dlid IN ({dst_lids})"
        cases = {
            "peer_node_out_of_range": (sql(f"UPDATE port SET peer_node = 256 WHERE {port_row}"), FABRIC,
                                       f"peer node 256 of {self.nodes}"),
            "peer_port_beyond_nports": (sql(f"UPDATE port SET peer_port = 200 WHERE {port_row}"), FABRIC, "peer port 200"),
            "asymmetric_peers": (sql(f"UPDATE port SET peer_port = {peer_port % 8 + 1} WHERE {port_row}"), FABRIC,
                                 "points"),
            "peer_half_null": (sql(f"UPDATE port SET peer_port = NULL WHERE {port_row}"), FABRIC, "peer port NULL"),
            "base_lid_65538": (sql(f"UPDATE port SET base_lid = 65538 WHERE {port_row}"), FABRIC, "base LID 65538"),
            "base_lid_text": (sql(f"UPDATE port SET base_lid = 'abc' WHERE {port_row}"), FABRIC, "not an integer"),
            "lmc_40": (sql(f"UPDATE port SET lmc = 40 WHERE {port_row}"), FABRIC, "LMC 40"),
            "width_3": (sql(f"UPDATE port SET width = 3 WHERE {port_row}"), FABRIC, "width 3"),
            "unknown_speed": (sql(f"UPDATE port SET speed = 'WARP9' WHERE {port_row}"), FABRIC, "speed 'WARP9'"),
            "unknown_state": (sql(f"UPDATE port SET state = 'sleepy' WHERE {port_row}"), FABRIC, "state 'sleepy'"),
            "bad_port_guid": (sql(f"UPDATE port SET guid = '0xfoo' WHERE {port_row}"), FABRIC, "GUID '0xfoo'"),
            "bad_node_guid": (sql(f"UPDATE node SET guid = guid || 'g' WHERE {node_row}"), FABRIC, "is not a GUID"),
            "nports_300": (sql(f"UPDATE node SET nports = 300 WHERE {node_row}"), FABRIC, "nports 300"),
            "unknown_type": (sql(f"UPDATE node SET type = 'toaster' WHERE {node_row}"), FABRIC, "type 'toaster'"),
            "node_index_gap": (sql(f"UPDATE node SET idx = 500 WHERE scan_id = {s} AND idx = {self.nodes - 1}"), FABRIC,
                               "indices have gaps"),
            "sysimg_guid_blob": (sql(f"UPDATE node SET sysimg_guid = x'00' WHERE {node_row}"), FABRIC, "GUID"),
            "lft_ports_text": (sql(f"UPDATE lft SET ports = x'ff01' || char({sw_ports + 1}) WHERE scan_id = {s}"
                                    f" AND node_idx = {sw}"), LFT, "is not a blob"),
            "lft_entry_beyond": (sql(f"UPDATE lft SET ports = x'ff01{sw_ports + 1:02x}' WHERE scan_id = {s}"
                                     f" AND node_idx = {sw}"), LFT, f"to port {sw_ports + 1} of {sw_ports}"),
            "lft_too_long": (sql(f"UPDATE lft SET ports = zeroblob(50000) WHERE scan_id = {s} AND node_idx = {sw}"), LFT,
                             "table of 50000 LIDs"),
            "lft_top_disagrees": (sql(f"UPDATE lft SET top = top + 5 WHERE scan_id = {s} AND node_idx = {sw}"), LFT,
                                  "but a table of"),
            "lft_of_a_ca": (sql(f"UPDATE lft SET node_idx = {ca} WHERE scan_id = {s} AND node_idx = {sw}"), LFT,
                            "is not a switch"),
            "lid_owner_nowhere": (sql(f"UPDATE lid SET node_idx = 999 WHERE scan_id = {s} AND lid = {self.dst_lids[0]}"),
                                  {"diff"}, "owner node 999"),
            "route_hop_to_ca": (sql(f"UPDATE route SET hops = ingress || ':1 {ca}:1' WHERE {route_rows}"),
                                {"diff", "routes"}, "not a switch"),
            "route_hop_out_of_range": (sql(f"UPDATE route SET hops = ingress || ':1 9999:1' WHERE {route_rows}"),
                                       {"diff", "routes"}, "hop to node 9999"),
            "route_bad_out_port": (sql(f"UPDATE route SET hops = ingress || ':77' WHERE {route_rows}"),
                                   {"diff", "routes"}, "port 77"),
            "route_status_17": (sql(f"UPDATE route SET status = 17 WHERE {route_rows}"), {"diff", "routes"}, "status 17"),
            "route_hops_garbage": (sql(f"UPDATE route SET hops = 'x' || char(10) || 'y' WHERE {route_rows}"),
                                   {"diff", "routes"}, "hops"),
            "routes_missing": (sql(f"DELETE FROM route WHERE {route_rows}"), {"diff"}, "do not cover"),
            "scan_lmc_257": (sql(f"UPDATE scan SET lmc = 257 WHERE id = {s}"), ALL, "lmc 257"),
            "scan_source": (sql(f"UPDATE scan SET complete = 5 WHERE id = {s}"), ALL, "complete 5"),
            "schedule_host_out_of_range": (sql("UPDATE schedule_host SET node_idx = 9999 WHERE rank = 0"), {"export"},
                                           "node 9999"),
            "schedule_host_port": (sql("UPDATE schedule_host SET port = 99 WHERE rank = 1"), {"export"}, "port 99"),
            "schedule_hosts_negative": (sql("UPDATE schedule SET hosts = -5"), {"export"}, "hosts -5"),
            "phase_offsets_short": (sql("UPDATE schedule_phase SET dlid = substr(dlid, 1, 5) WHERE phase = 0"), {"export"},
                                    "offsets of 5 bytes"),
            "phase_missing": (sql("DELETE FROM schedule_phase WHERE phase = 1"), {"export"}, "phases have gaps"),
            "shift_out_of_range": (sql("UPDATE schedule_phase SET shift = 4000 WHERE phase = 0"), {"export"}, "shift 4000"),
            "offset_where_no_transfer": (blob_edit("dlid", lambda b: b[:2] + b"\xff" + b[3:]), {"export"}, "does not match shift"),
            "explicit_dst_out_of_range": (explicit_row_sending_to(4000), {"export"}, "sends to rank 4000"),
            "table_dropped": (sql("DROP TABLE lft"), LFT, "no such table: lft"),
            "column_dropped": (sql("ALTER TABLE node DROP COLUMN node_desc"), FABRIC, "no such column"),
            "garbage_over_node_page": (garbage_over_page("node"), FABRIC, "database damaged"),
            "garbage_over_port_page": (garbage_over_page("port"), FABRIC, "database damaged"),
            "garbage_over_schema": (garbage_over_page(None), ALL, None),
            "truncated_to_one_page": (truncate(0), ALL, None),
            "truncated_to_half": (truncate(0.5), set(), None),
            "foreign_sqlite": (foreign_sqlite, ALL, "not an ibroute database"),
            "random_bytes": (random_bytes, ALL, "not an ibroute database"),
        }
        for name, (damage, must_fail, needle) in cases.items():
            with self.subTest(name):
                db = self.copy(name)
                damage(db)
                failed = self.read_all(db, must_fail, needle)
                for line in failed.values():
                    self.assertLess(len(line), 400, line)

    def test_older_schema_is_refused_then_migrated(self):
        db = self.copy("v3")
        with sqlite3.connect(db) as c:
            c.execute("ALTER TABLE node DROP COLUMN sysimg_guid")
            c.execute("ALTER TABLE node DROP COLUMN node_desc")
            c.execute("ALTER TABLE scan DROP COLUMN has_lfts")
            c.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        c.close()
        want = f"ibroute: {db} has schema version 3; run 'ibroute migrate --db {db}' (this ibroute reads version 8)"
        failed = self.read_all(db, self.READERS)
        for name, line in failed.items():
            self.assertEqual(line, want, name)
        r = ibroute("migrate", "--db", db)
        self.assertEqual(r.stdout, f"migrated {db} from version 3 to 8\n")
        self.assertEqual(r.stderr, "")
        r = ibroute("migrate", "--db", db)
        self.assertEqual(r.stdout, f"{db} is already at version 8\n")
        import json
        migrated = json.loads(ibroute("migrate", "--db", db, "--json").stdout)
        self.assertEqual(migrated.pop("ibroute_version"), ibroute("--version").stdout.split()[1], "the version that wrote it")
        self.assertEqual(migrated, {"db": db, "from_version": 8, "version": 8, "migrated": False})
        before = digest(db)
        for name, args in self.commands(db).items():
            r = ibroute(*args, check=False)
            self.assertEqual(r.returncode, 0, f"{name}: {r.stderr}")
        self.assertEqual(digest(db), before)

    def test_migrate_refuses_a_damaged_file(self):
        db = self.copy("v3-damaged")
        with sqlite3.connect(db) as c:
            c.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        c.close()
        garbage_over_page("port")(db)
        before = digest(db)
        r = ibroute("migrate", "--db", db, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("database damaged", r.stderr)
        self.assertEqual(digest(db), before)

    def test_interrupted_write_is_not_rolled_back_by_readers(self):
        db = self.copy("hot")
        import subprocess
        import sys
        # A writer that dies in the middle of its transaction leaves a hot journal.
        subprocess.run([sys.executable, "-c", f"""
import os, sqlite3
c = sqlite3.connect({db!r}, isolation_level=None)
c.execute('PRAGMA cache_size=1')
c.execute('BEGIN')
c.execute("UPDATE route SET hops = hops || ' '")
os._exit(0)
"""], check=True)
        self.assertTrue(os.path.exists(db + "-journal"))
        before = digest(db)
        r = ibroute("scans", "--db", db, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"run 'ibroute migrate --db {db}'", r.stderr)
        self.assertEqual(digest(db), before)
        ibroute("migrate", "--db", db)  # rolls the journal back
        self.assertFalse(os.path.exists(db + "-journal"))
        self.assertEqual(digest(db), digest(self.good))
        ibroute("scans", "--db", db)

    def test_writing_command_migrates(self):
        db = self.copy("v2")
        with sqlite3.connect(db) as c:
            c.execute("DROP TABLE run")
            c.execute("ALTER TABLE scan DROP COLUMN has_lfts")
            for table in ("schedule_phase", "schedule_host", "schedule"):
                c.execute(f"DELETE FROM {table}")
            for table, column in (("schedule", "senders"), ("schedule", "receivers"), ("schedule_phase", "shift")):
                c.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
            c.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        c.close()
        ibroute("plan", "--db", db, "--name", "again", "--shifts-only")
        with sqlite3.connect(db) as c:
            self.assertEqual(c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0], "8")
            self.assertEqual(c.execute("SELECT count(shift), count(*) FROM schedule_phase").fetchone(), (15, 15))  # compact
            self.assertEqual(c.execute("SELECT count(*) FROM scan WHERE has_lfts = 1").fetchone()[0], 2)
        c.close()

    def test_newer_schema_is_refused_by_migrate(self):
        db = self.copy("v99")
        with sqlite3.connect(db) as c:
            c.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
        c.close()
        before = digest(db)
        r = ibroute("migrate", "--db", db, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("schema version 99", r.stderr)
        self.assertEqual(digest(db), before)


if __name__ == "__main__":
    unittest.main()
