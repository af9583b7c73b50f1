"""Bad input: one clear error line, a non-zero exit code, and the database as it was."""
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
import unittest

from common import EXAMPLES, IBROUTE, TempDirTest, ibroute, ibroute_json
from simfabric import SimFabric, generate, read_text, write_text


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class BadInput(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.sim = SimFabric(f"{EXAMPLES}/hft96-shuffled.topo", lmc=2)
        cls.sim.start()
        cls.topo = cls.sim.run(["timeout", "60", "ibnetdiscover"]).stdout
        cls.lfts = cls.sim.run(["timeout", "60", "dump_fts"]).stdout

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def setUp(self):
        super().setUp()
        self.db = self.path("good.db")
        self.topo_file = write_text(self.path("topo.txt"), self.topo)
        self.lft_file = write_text(self.path("lfts.txt"), self.lfts)
        ibroute("scan", "--db", self.db, "--topology", self.topo_file, "--lfts", self.lft_file)
        self.before = digest(self.db)

    def assert_error(self, args, code, needle, sim=None):
        r = ibroute(*args, sim=sim, check=False)
        self.assertEqual(r.returncode, code, f"stdout={r.stdout!r} stderr={r.stderr!r}")
        lines = [l for l in r.stderr.splitlines() if not l.startswith("ibwarn:")]  # the simulator's own chatter
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("ibroute: "), lines[0])
        self.assertIn(needle, lines[0])
        self.assertEqual(r.stdout, "")
        return lines[0]

    def assert_db_intact(self):
        self.assertEqual(digest(self.db), self.before)
        listing = ibroute_json("scans", "--db", self.db)
        self.assertEqual(len(listing["scans"]), 1)
        self.assertIn("ibroute_version", listing)  # as every --json object (README)
        self.assertEqual(listing["scans"][0]["scan_id"], 1)  # named as schedules, counters and routes name it

    def scan_files(self, topo_text=None, lft_text=None):
        t = write_text(self.path("t2.txt"), self.topo if topo_text is None else topo_text)
        l = write_text(self.path("l2.txt"), self.lfts if lft_text is None else lft_text)
        return ["scan", "--db", self.db, "--topology", t, "--lfts", l]

    def test_truncated_topology(self):
        # A cut-off file is imported for what it holds, marked incomplete (exit 3), naming where.
        cut = self.topo[: len(self.topo) // 2]
        cut = cut[: cut.rfind("\n")]
        r = ibroute(*self.scan_files(topo_text=cut), check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("INCOMPLETE", r.stdout)
        self.assertIn("file cut off?), first at ", r.stdout)
        self.assertIn("t2.txt:", r.stdout)

    def test_garbled_topology(self):
        lines = self.topo.splitlines()
        lines[len(lines) // 3] = "[7]\tgarbage here %%%"
        self.assert_error(self.scan_files(topo_text="\n".join(lines)), 2, f"t2.txt:{len(lines) // 3 + 1}: ")
        self.assert_db_intact()

    def test_truncated_lfts(self):
        # The table that was cut is unread (its switch named), later switches missing: exit 3.
        cut = self.lfts[: int(len(self.lfts) * 0.6)]
        cut = cut[: cut.rfind("\n")]
        r = ibroute(*self.scan_files(lft_text=cut), "--json", check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        s = json.loads(r.stdout)
        self.assertFalse(s["complete"])
        cut_problems = [p for p in s["problems"] if p["kind"] == "lft_cut"]
        self.assertEqual(len(cut_problems), 1, s["problems"])
        self.assertIn("l2.txt:", cut_problems[0]["detail"])
        self.assertGreater(s["routes"]["unknown"], 0)

    def test_garbled_lfts(self):
        lines = self.lfts.splitlines()
        lines[40] = "0x00zz 0q9 : junk"
        self.assert_error(self.scan_files(lft_text="\n".join(lines)), 2, "l2.txt:41")
        self.assert_db_intact()

    def test_lfts_of_another_fabric(self):
        other = generate(self.path("other.topo"), "--leaves", "2", "--down", "4", "--up", "2", "--spines", "2",
                         "--switch-ports", "8", "--spine-ports", "8", "--seed", "3")
        with SimFabric(other, lmc=0) as sim:
            # ibsim numbers GUIDs the same way for every file: change them so the fabrics differ
            lfts = sim.run(["timeout", "60", "dump_fts"]).stdout.replace("guid 0x0000000000200", "guid 0x00000000009a0")
        self.assert_error(self.scan_files(lft_text=lfts), 2, "not in the topology")
        self.assert_db_intact()

    def test_missing_file(self):
        self.assert_error(["scan", "--db", self.db, "--topology", self.path("nope"), "--lfts", self.lft_file], 2,
                          "cannot read")
        self.assert_db_intact()

    def test_unknown_node(self):
        self.assert_error(["routes", "--db", self.db, "--from", "node9-999", "--to", "node1-001"], 2, "node9-999")
        self.assert_error(["routes", "--db", self.db, "--from", "0xdeadbeef", "--to", "node1-001"], 2, "0xdeadbeef")
        self.assert_error(["routes", "--db", self.db, "--from", "node1-001", "--to", "60000"], 2, "LID 60000")
        self.assert_db_intact()

    def test_other_schema_version(self):
        with sqlite3.connect(self.db) as c:
            c.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
        self.before = digest(self.db)
        self.assert_error(["scans", "--db", self.db], 2, "schema version 99")
        self.assert_error(self.scan_files(), 2, "schema version 99")
        self.assertEqual(digest(self.db), self.before)

    def test_not_a_database(self):
        junk = write_text(self.path("junk.db"), "this is not a database\n" * 100)
        h = digest(junk)
        self.assert_error(["scan", "--db", junk, "--topology", self.topo_file, "--lfts", self.lft_file], 2,
                          "not an ibroute database")
        self.assert_error(["routes", "--db", junk, "--from", "a", "--to", "b"], 2, "not an ibroute database")
        self.assertEqual(digest(junk), h)
        other = self.path("other.sqlite")
        with sqlite3.connect(other) as c:
            c.execute("CREATE TABLE t(x)")
        self.assert_error(["scans", "--db", other], 2, "not an ibroute database")

    def test_missing_database(self):
        self.assert_error(["routes", "--db", self.path("none.db"), "--from", "a", "--to", "b"], 2, "no database")
        self.assertFalse(os.path.exists(self.path("none.db")))

    def test_ca_that_does_not_exist(self):
        self.assert_error(["scan", "--db", self.db, "-C", "mlx5_7"], 2, "no CA named 'mlx5_7'", sim=self.sim)
        self.assert_error(["scan", "--db", self.db, "-C", "ibsim0", "-P", "9"], 2, "has no port 9", sim=self.sim)
        self.assert_db_intact()

    def test_bad_options(self):
        self.assert_error(["scan", "--db", self.db, "--lfts", self.lft_file], 2, "--lfts needs --topology")
        self.assert_error(["routes", "--db", self.db, "--from", "node1-001", "--to", "node1-002", "--lid", "x"], 2,
                          "--lid")
        self.assert_error(["routes", "--db", self.db, "--from", "node1-001"], 2, "--to")
        self.assert_db_intact()

    def test_interrupted_scan_keeps_earlier_scans(self):
        # Kill an import of the 864-host fabric while it writes: the transaction never commits.
        with SimFabric(f"{EXAMPLES}/hft864-shuffled.topo", lmc=4) as sim:
            t = write_text(self.path("t864.txt"), sim.run(["timeout", "60", "ibnetdiscover"]).stdout)
            l = write_text(self.path("l864.txt"), sim.run(["timeout", "60", "dump_fts"]).stdout)
        p = subprocess.Popen([IBROUTE, "scan", "--db", self.db, "--topology", t, "--lfts", l],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not os.path.exists(self.db + "-journal") and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        self.assertIsNone(p.poll(), "the scan finished before it could be interrupted")
        p.send_signal(signal.SIGKILL)
        p.wait()
        with sqlite3.connect(self.db) as c:  # opening rolls the hot journal back
            self.assertEqual(c.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        scans = ibroute_json("scans", "--db", self.db)["scans"]
        self.assertEqual([s["scan_id"] for s in scans], [1])
        r = ibroute_json("routes", "--db", self.db, "--from", "node1-001", "--to", "node1-002")
        self.assertEqual(r["routes"][0]["status"], "ok")


if __name__ == "__main__":
    unittest.main()
