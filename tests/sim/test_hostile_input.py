"""Hostile and damaged input through the CLI (docs/robustness.md): no crash, no silent change, one
clear line on stderr, exit code 2. Offline: the fabric is the fuzz targets' tiny one, imported from
text (no simulator). Also feeds every regression input of tests/fuzz/regressions/ to the command
that reads that kind of file."""
import copy
import json
import os
import shutil
import subprocess
import unittest

from common import IBROUTE, SOURCE, TempDirTest, ibroute
from schedule_check import explicit

FUZZ = os.path.join(SOURCE, "tests", "fuzz")
CORPUS = os.path.join(FUZZ, "corpus")
REGRESSIONS = os.path.join(FUZZ, "regressions")
TOPO = os.path.join(CORPUS, "ibnetdiscover", "tiny.topo")
LFTS = os.path.join(CORPUS, "lft_dump", "tiny.dump_fts")
RUN_REPORT = os.path.join(CORPUS, "run_report", "valid-4.json")


class HostileInputTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.db = self.path("f.db")
        ibroute("scan", "--db", self.db, "--topology", TOPO, "--lfts", LFTS)
        ibroute("plan", "--db", self.db, "--name", "p")
        self.schedule_file = self.path("p.json")
        ibroute("export", "--db", self.db, "--schedule", "p", "-o", self.schedule_file)
        with open(self.schedule_file) as f:
            self.compact = json.load(f)
        self.schedule = explicit(self.compact)  # format version 1: every transfer an object
        self.expect_ok = self.write("ok-expect.json", {"lmc": 1})

    def write(self, name, doc):
        p = self.path(name)
        with open(p, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return p

    def one_line_exit_2(self, args, needle=None, max_rss_mb=None):
        """Runs ibroute; exit code 2 and exactly one stderr line (containing `needle`)."""
        cmd = ["timeout", "120", IBROUTE, *map(str, args)]
        with open(self.path("out"), "w+") as out, open(self.path("err"), "w+") as err:
            p = subprocess.Popen(cmd, stdout=out, stderr=err)
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            stderr = err.read()
        label = " ".join(map(str, args))
        self.assertEqual(p.returncode, 2, f"{label}: {stderr}")
        lines = stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"{label}: {stderr}")
        self.assertTrue(lines[0].startswith("ibroute: "), lines[0])
        if needle:
            self.assertIn(needle, lines[0])
        if max_rss_mb:
            self.assertLess(usage.ru_maxrss / 1024, max_rss_mb, f"{label}: {usage.ru_maxrss / 1024:.0f} MB")
        return lines[0]

    def test_schedule_values_checked_where_read(self):
        cases = [
            (("version",), 1.9, "/version: schedule format version 1.9"),
            (("phases", 1, 2, "dlid"), 65550, "/phases/1/2/dlid: 65550 is not a unicast LID (1..49151)"),
            (("hosts", 0, "base_lid"), 0, "/hosts/0/base_lid: 0 is not a unicast LID"),
            (("hosts", 1, "lmc"), 257, "/hosts/1/lmc: 257 is not an LMC (0..7)"),
            (("fabric", "lmc"), 40, "/fabric/lmc: 40 is not an LMC (0..7)"),
            (("phases", 0, 1, "dst"), 3, "/phases/0/1/dst: 3: rank out of range (0..2)"),
            (("phases", 0, 1, "src"), -1, "/phases/0/1/src: -1: rank out of range"),
            (("bound",), "2", "/bound: \"2\" is not an integer"),
            (("timing", "message_size"), -1, "/timing/message_size: -1 is not a message size"),
            (("hosts", 2, "name"), "evil\nname", "/hosts/2/name: \"evil\\nname\" contains a control character"),
        ]
        for keys, value, needle in cases:
            doc = copy.deepcopy(self.schedule)
            target = doc
            for k in keys[:-1]:
                target = target[k]
            target[keys[-1]] = value
            f = self.write("bad.json", doc)
            line = self.one_line_exit_2(["validate", "--db", self.db, f], needle)
            self.assertIn("bad.json: ", line)
        doc = copy.deepcopy(self.schedule)
        del doc["timing"]["rate"]
        self.one_line_exit_2(["validate", "--db", self.db, self.write("bad.json", doc)], "/timing/rate: \"rate\" is missing")

    def test_schedule_amplification_is_bounded(self):
        # ~530 KB claiming 1000 hosts and 150 000 empty phases: the reader used to allocate 0.9 GB
        # for it (validate 1.2 GB); 6000 hosts with empty phases 216 MB.
        for n, k, needle in ((1000, 150000, "150000 phases; an all-to-all of 1000 hosts has 999"),
                             (6000, 5999, "5999 phases of 6000 hosts list only 0 transfers")):
            hosts = ",".join('{"rank":%d,"name":"","node_guid":"0x%x","port_guid":"0x%x","base_lid":1,"lmc":0}' % (r, r, r)
                             for r in range(n))
            text = ('{"format":"ibroute-schedule","version":1,"name":"x","created_at":"","method":"","bound":2,'
                    '"fabric":{"scan_id":1,"scan_started_at":"","lmc":0},"timing":{"message_size":1,"rate":1,"slot_s":1},'
                    '"hosts":[' + hosts + '],"phases":[' + ",".join(["[]"] * k) + "]}")
            f = self.write("amp.json", text)
            self.one_line_exit_2(["validate", "--db", self.db, f], needle, max_rss_mb=300)

    def accept(self, *args):
        return ["accept", "--db", self.db, "--report", self.path("r.html"), *args]

    def test_expectation_values_checked_where_read(self):
        for doc, needle in (({"lmc": 257}, "/lmc: 257 is not an LMC (0..7)"), ({"lmc": 40}, "/lmc: 40 is not an LMC"),
                            ({"max_broken_links": -1}, "/max_broken_links: -1 is not a number of links"),
                            ({"hosts": 3.5}, "/hosts: 3.5 is not an integer"), ({"link_width": "4x"}, "/link_width"),
                            ({"congestion_free": 1}, "/congestion_free: 1 is not true or false"),
                            ({"message_size": "1e30"}, "/message_size"), ({"min_rate_per_node": 5e9}, "/min_rate_per_node"),
                            ({"max_skipped_share": -0.1}, "/max_skipped_share"), ({"lmc\n": 1}, "unknown key 'lmc\\n'")):
            f = self.write("expect.json", doc)
            line = self.one_line_exit_2(self.accept("--expect", f, "--simulate"), needle)
            self.assertIn("expect.json: ", line)

    def test_run_report_never_indexed_out_of_bounds(self):
        with open(RUN_REPORT) as f:
            good = json.load(f)
        edits = [
            (lambda r: r["transfers"].__setitem__(3, r["transfers"][3][:4]), "/transfers/3: a row of 4 values, the table has 10 columns"),
            (lambda r: r["transfers"][5].__setitem__(0, 7), "/transfers/5/0: 7 is not a rank of this run (0..3)"),
            (lambda r: r["transfers"][5].__setitem__(1, -1), "/transfers/5/1: -1 is not a rank"),
            (lambda r: r.__setitem__("ranks", 100000), "/nodes: lists 4 ranks, the run had 100000"),
            (lambda r: r["transfer_columns"].remove("status"), "/transfer_columns: no column \"status\""),
            (lambda r: r["nodes"][1].__setitem__("send_gbps", "fast"), "/nodes/1/send_gbps"),
            (lambda r: r["clock"].__delitem__("max_uncertainty_ns"), "/clock/max_uncertainty_ns: \"max_uncertainty_ns\" is missing"),
            (lambda r: r.__setitem__("version", 1.9), "/version"),
            (lambda r: r.__setitem__("missing_ranks", [{"rank": 4, "host": "x"}]), "/missing_ranks/0/rank"),
            (lambda r: r["suspect_links"][0].__setitem__("failed", -3), "/suspect_links/0/failed"),
        ]
        for edit, needle in edits:
            doc = copy.deepcopy(good)
            edit(doc)
            f = self.write("run.json", doc)
            line = self.one_line_exit_2(self.accept("--expect", self.expect_ok, "--run-report", f), needle)
            self.assertIn("run.json: ", line)
        # The good one is well formed, but of another fabric's run (schedule a2a-4, 4 ranks): refused.
        self.one_line_exit_2(self.accept("--expect", self.expect_ok, "--run-report", RUN_REPORT), '/schedule: "a2a-4" is no schedule of this database')

    def regression_command(self, target, path):
        """The ibroute command that reads a `target` kind of file."""
        if target == "ibnetdiscover":
            return ["scan", "--db", self.path("new.db"), "--topology", path]
        if target == "lft_dump":
            return ["scan", "--db", self.path("new.db"), "--topology", TOPO, "--lfts", path]
        if target == "schedule":
            return ["validate", "--db", self.db, path]
        if target == "expectation":
            return self.accept("--expect", path, "--simulate")
        if target == "run_report":
            return self.accept("--expect", self.expect_ok, "--run-report", path)
        if target == "database":
            copy_path = self.path("damaged.db")
            shutil.copyfile(path, copy_path)
            return ["scans", "--db", copy_path]
        if target == "rank_message":
            return None  # read only by rank 0 from MPI: replayed by the fuzz target (label fuzz)
        if target == "epoch":
            return None  # read only by peers through libibroute-peer: replayed by the fuzz target
        if target == "quantity":  # the first byte chose size or rate; an argument ends at a NUL
            data = open(path, "rb").read()
            text = data[1:].split(b"\0")[0].decode("utf-8", "replace")
            return ["plan", "--db", self.db, "--name", "q", "--message-size" if data[:1] and data[0] & 1 else "--rate", text]
        raise AssertionError(target)

    def test_every_regression_input(self):
        self.assertTrue(os.path.isdir(REGRESSIONS), f"{REGRESSIONS} is missing: the fuzz regressions belong to the repository")
        for target in sorted(os.listdir(REGRESSIONS)):
            for name in sorted(os.listdir(os.path.join(REGRESSIONS, target))):
                if name.startswith("."):
                    continue
                with self.subTest(target=target, input=name):
                    for leftover in ("new.db", "damaged.db"):
                        if os.path.exists(self.path(leftover)):
                            os.remove(self.path(leftover))
                    args = self.regression_command(target, os.path.join(REGRESSIONS, target, name))
                    if args is None:
                        continue
                    if target in ("ibnetdiscover", "lft_dump"):
                        # A damaged text file may also be imported as an incomplete scan (exit 3,
                        # its problems listed) — but never crash: exit 2 with one line, or 0/3.
                        r = ibroute(*args, check=False)
                        self.assertIn(r.returncode, (0, 2, 3), r.stderr)
                        self.assertLessEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                    else:
                        self.one_line_exit_2(args)


if __name__ == "__main__":
    unittest.main()
