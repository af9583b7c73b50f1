"""The rate asked is the rate planned (issue 34): on ibsim + OpenSM fabrics — a 96-host QDR tree
with 2 links missing, the shuffled 864-host tree, a three-level tree — `ibroute plan --rate` at 10 %,
25 %, 40 % of a host link and at the most the fabric carries, all-to-all and two groups. Each
exported schedule is re-checked from its file and the stored routes (tests/sim/schedule_check.py,
not the planner's code): each node moves its bytes at >= 0.97 x the rate asked, and every phase
lasts at least what its busiest link needs at that link's own rate. plan, schedules, validate and
accept --simulate give one per-node figure for one schedule."""
import json
import re
import os
import unittest

from common import EXAMPLES, TempDirTest, db_rows, ibroute, ibroute_json
from schedule_check import Routes, rate_check
from simfabric import SimFabric, generate
from test_real_shapes_sim import gen_real


def host_names(db, scan):
    return sorted(d for (d,) in db_rows(db, "SELECT desc FROM node WHERE scan_id = ? AND type = 'ca'", scan))


class RateAskedIsRatePlanned(TempDirTest):
    def scan(self, topo, lmc, engine="minhop"):
        db = self.path(os.path.basename(topo) + ".db")
        with SimFabric(topo, lmc=lmc, engine=engine) as sim:
            scan = ibroute_json("scan", "--db", db, sim=sim)["scan_id"]
        return db, scan

    def group_args(self, tag, senders, receivers):
        args = []
        for label, group in (("senders", senders), ("receivers", receivers)):
            path = self.path(f"{tag}-{label}.txt")
            with open(path, "w") as f:
                f.write("\n".join(group) + "\n")
            args += [f"--{label}", "@" + path]
        return args

    def plan_at(self, db, scan, tag, args, rate):
        """Plans at `rate` bytes/s (None: as fast as the links allow), exports, re-checks; returns
        (plan JSON, the rate recomputed from the file)."""
        extra = ["--rate", f"{rate:.6f}B/s"] if rate else []
        plan = ibroute_json("plan", "--db", db, "--name", tag, *args, *extra)
        out = self.path(tag + ".json")
        ibroute("export", "--db", db, "--schedule", tag, "-o", out)
        with open(out) as f:
            doc = json.load(f)
        got, lengths = rate_check(db, scan, doc)
        for k, length, need in lengths:
            self.assertGreaterEqual(length, need * (1 - 1e-9), f"{tag}: phase {k} lasts {length} s, its busiest link needs {need} s")
        if rate:
            self.assertGreaterEqual(got, 0.97 * rate, f"{tag}: {got * 8e-9:.3f} Gb/s per node for {rate * 8e-9:.3f} asked")
            self.assertLessEqual(got, rate * (1 + 1e-6), tag)
        # One figure: plan's, the file's, validate's and schedules' per-node rate agree within 0.5 %.
        self.assertAlmostEqual(plan["efficiency"]["rate_per_node_gbps"], got * 8e-9, delta=got * 8e-9 * 0.005, msg=tag)
        self.assertFalse(plan["efficiency"]["rate_is_estimate"])
        v = json.loads(ibroute("validate", "--db", db, out, "--json", check=False).stdout)
        self.assertAlmostEqual(v["rate_per_node_gbps"], got * 8e-9, delta=got * 8e-9 * 0.005, msg=tag)
        listed = {s["name"]: s for s in ibroute_json("schedules", "--db", db)["schedules"]}
        self.assertAlmostEqual(listed[tag]["rate_per_node_gbps"], got * 8e-9, delta=got * 8e-9 * 0.005, msg=tag)
        return plan, got

    def rates(self, db, scan, tag, args, shares=(0.10, 0.25, 0.40)):
        fastest_plan, fastest = self.plan_at(db, scan, f"{tag}-fast", args, None)
        self.assertAlmostEqual(fastest_plan["timing"]["max_rate"], fastest, delta=fastest * 0.02)
        r = Routes(db, scan)
        host_gbps = sorted(r.rate[r.ports[g][:2]] for g in r.ports if r.kind.get(r.ports[g][0]) == "ca" and r.ports[g][4] is not None)
        host = host_gbps[len(host_gbps) // 2] * 1e9 / 8
        asked = [s * host for s in shares if s * host <= fastest_plan["timing"]["max_rate"]] + [fastest_plan["timing"]["max_rate"]]
        self.assertGreaterEqual(len(asked), 2, f"{tag}: the fabric carries {fastest * 8e-9} Gb/s per node")
        for i, rate in enumerate(asked):
            self.plan_at(db, scan, f"{tag}-r{i}", args, rate)
        # Above the most: refused in one line, naming the most and a link.
        over = ibroute("plan", "--db", db, "--name", f"{tag}-over", *args, "--rate", f"{fastest_plan['timing']['max_rate'] * 1.05:.3f}B/s",
                       check=False)
        self.assertEqual(over.returncode, 2, over.stderr)
        self.assertEqual(len(over.stderr.strip().splitlines()), 1, over.stderr)
        self.assertIn("at most", over.stderr)
        self.assertRegex(over.stderr, r"\S+\[\d+\] -> \S+\[\d+\]")
        return host

    def test_96_host_qdr_tree_with_links_missing(self):
        topo = generate(self.path("q96.topo"), "--leaves", 12, "--down", 8, "--up", 4, "--spines", 4, "--switch-ports", 12,
                        "--spine-ports", 12, "--shuffle", "--speed", "QDR", "--missing", 2, "--seed", 34)
        db, scan = self.scan(topo, lmc=2)
        names = host_names(db, scan)
        host = self.rates(db, scan, "a2a", [])
        self.rates(db, scan, "groups", self.group_args("g", names[:24], names[24:]))
        # The case: 12 Gb/s on 32 Gb/s links runs at 12 Gb/s, not half of it.
        plan, got = self.plan_at(db, scan, "twelve", [], 12e9 / 8)
        self.assertGreaterEqual(got, 0.97 * 12e9 / 8)
        # accept --simulate plans the same way and plays it: its per-node figure is the plan's.
        with open(self.path("expect.json"), "w") as f:
            json.dump({"min_rate_per_node": "1Gb/s"}, f)
        r = ibroute("accept", "--db", db, "--expect", self.path("expect.json"), "--simulate", "--json", "--rate", "0.4GB/s",
                    "--order", "name", "--report", self.path("a.html"), check=False)
        j = json.loads(r.stdout)
        check = {c["check"]: c for c in j["checks"]}["rate_per_node"]
        self.assertAlmostEqual(check["value_gbps"], 3.2, delta=3.2 * 0.03, msg=check)
        self.assertAlmostEqual(check["value_gbps"], j["plan"]["efficiency"]["rate_per_node_gbps"], delta=check["value_gbps"] * 0.005)
        # ... and the HTML report names the same figure.
        with open(self.path("a.html")) as f:
            m = re.search(r'id="plan-rate" data-gbps="([0-9.e+-]+)"', f.read())
        self.assertIsNotNone(m)
        self.assertAlmostEqual(float(m.group(1)), check["value_gbps"], delta=check["value_gbps"] * 0.005)
        self.assertLessEqual(host, 5e9)  # QDR 4x

    def test_864_host_tree(self):
        db, scan = self.scan(os.path.join(EXAMPLES, "hft864-shuffled.topo"), lmc=2)
        names = host_names(db, scan)
        self.rates(db, scan, "a2a", [], shares=(0.10, 0.40))
        self.rates(db, scan, "groups", self.group_args("g", names[:150], names[150:600]), shares=(0.25,))

    def test_three_level_tree(self):
        topo = gen_real(self.path("t3.topo"), "three-level", "--pods", 4, "--pod-leaves", 4, "--pod-aggs", 4, "--down", 4,
                        "--up", 4, "--core-per-agg", 4, "--seed", 7)
        db, scan = self.scan(topo, lmc=2)
        names = host_names(db, scan)
        self.rates(db, scan, "a2a", [])
        self.rates(db, scan, "groups", self.group_args("g", names[:16], names[16:]), shares=(0.25,))


if __name__ == "__main__":
    unittest.main()
