"""accept's repair list on ibsim + OpenSM: a healthy fabric has no likely suspect; a cable unlinked
after OpenSM routed is named by its switches, and an injected error counter by its port. And the
verdict on emulated runs: each pair's rate from the stored routes (read here, not by ibroute) and a
fault list accept never sees; a located slow cable fails the acceptance whatever the nodes' rates."""
import collections
import json
import random
import re
import subprocess
import unittest

from common import EXAMPLES, TempDirTest, db_rows, ibroute, ibroute_json
from schedule_check import Routes, phase_link_loads, phases_of
from simfabric import SimFabric

TOPO = f"{EXAMPLES}/hft96-shuffled.topo"


class Diagnosis(TempDirTest):
    def accept(self, db, *extra):
        expect = self.path("expect.json")
        with open(expect, "w") as f:
            json.dump({"hosts": 96}, f)
        r = ibroute("accept", "--db", db, "--expect", expect, "--simulate", "--json", "--report", self.path("a.html"), *extra, check=False)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        return json.loads(r.stdout)

    def test_healthy_then_a_cable_lost(self):
        db = self.path("f.db")
        with SimFabric(TOPO, lmc=2) as sim:
            ibroute_json("scan", "--db", db, sim=sim)
            healthy = self.accept(db)
            sim.console('Unlink "ibswitch03"[10]')  # OpenSM ran once: nobody reroutes
            ibroute_json("scan", "--db", db, sim=sim, timeout=60)
        likely = [s for s in healthy["diagnosis"]["suspects"] if s["confidence"] >= 0.5]
        self.assertEqual(likely, [], healthy["diagnosis"])
        lost = self.accept(db)
        top = lost["diagnosis"]["suspects"][0]
        self.assertGreaterEqual(top["confidence"], 0.5, lost["diagnosis"])
        self.assertEqual(top["kind"], "link")
        self.assertTrue(top["where"].startswith("ibswitch03[10] - ibspine"), top)  # both ends, by port
        self.assertEqual(top["port"], 10)
        broken = {c["check"]: c for c in lost["checks"]}["broken_links"]
        self.assertIn("down since scan 1: ibswitch03[10] - ibspine", broken["detail"])
        self.assertTrue(top["evidence"] and top["action"], top)
        with open(self.path("a.html")) as f:
            html = f.read()
        self.assertIn('<table id="diagnosis">', html)
        self.assertIn(">missing</text>", html)  # the picture draws the lost cable
        self.assertIn("ibswitch03[10] - ibspine", html)

    def test_a_host_lost_is_named(self):
        db = self.path("f.db")
        with SimFabric(TOPO, lmc=2) as sim:
            ibroute_json("scan", "--db", db, sim=sim)
            sim.console('Unlink "ibswitch01"[1]')  # node2-040's cable (examples/hft96-shuffled.topo)
            ibroute_json("scan", "--db", db, sim=sim, timeout=60)
        r = self.accept(db)
        hosts = {c["check"]: c for c in r["checks"]}["hosts"]
        self.assertEqual(hosts["result"], "fail")
        self.assertIn("node2-040", hosts["detail"])
        top = r["diagnosis"]["suspects"][0]
        self.assertEqual((top["kind"], top["where"]), ("host", "node2-040"), r["diagnosis"])
        self.assertGreaterEqual(top["confidence"], 0.5)


class EmulatedRuns(TempDirTest):
    """accept --run-report on runs emulated from the stored routes: every transfer at its planned
    rate in its phase (its path's links shared by the phase's transfers) x the least fault factor
    on its path x noise of 5 %."""

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="ibroute-emulated-")
        cls.db = f"{cls.dir}/f.db"
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute_json("scan", "--db", cls.db, sim=sim)
        ibroute("plan", "--db", cls.db, "--name", "p")
        ibroute("export", "--db", cls.db, "--schedule", "p", "-o", f"{cls.dir}/p.json")
        with open(f"{cls.dir}/p.json") as f:
            cls.doc = json.load(f)
        cls.routes = Routes(cls.db, 1)
        cls.desc = dict(db_rows(cls.db, "SELECT idx, desc FROM node WHERE scan_id=1"))

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, ignore_errors=True)

    def paths(self):
        """Per phase, each transfer with its links (node, port): its own host link and the route's hops."""
        r = self.routes
        hosts = [r.ports[h["port_guid"]] for h in self.doc["hosts"]]
        for phase in phases_of(self.doc):
            load = phase_link_loads(r, hosts, phase)
            for t in phase:
                node, num, _, _, ingress = hosts[t["src"]]
                hops = [(node, num)] + [tuple(map(int, h.split(":"))) for h in r.routes[(ingress, t["dlid"])][1].split()]
                yield t, [(n, p) for n, p in hops if p not in (0, 255)], load

    def report(self, faults, seed):
        rng = random.Random(seed)
        n = len(self.doc["hosts"])
        mbps = [[0.0] * n for _ in range(n)]
        for t, links, load in self.paths():
            planned = min(self.routes.rate[l] / load[l] for l in links)
            factor = min([faults.get(l, 1.0) for l in links])
            mbps[t["src"]][t["dst"]] = planned * factor * rng.uniform(0.95, 1.05) * 1000
        names = [h["name"] for h in self.doc["hosts"]]
        planned = n * (n - 1)
        return {"format": "ibroute-run", "version": 2, "schedule": "p", "scan_id": 1, "ranks": n, "rounds": 1, "rounds_run": 1,
                "message_size": 1 << 20, "totals": {"planned": planned, "ok": planned, "skipped": 0, "failed": 0, "skipped_share": 0.0,
                                                   "seconds": 0.01},
                "nodes": [{"rank": r, "host": names[r], "port_guid": self.doc["hosts"][r]["port_guid"], "send_gbps": 20.0} for r in range(n)],
                "clock": {"max_uncertainty_ns": 300, "ranks": []}, "missing_ranks": [], "not_ok": [], "pair_mbps": mbps}

    def accept(self, report):
        path = self.path("run.json")
        with open(path, "w") as f:
            json.dump(report, f)
        expect = self.path("expect.json")
        with open(expect, "w") as f:
            json.dump({"hosts": 96, "min_rate_per_node": "1G"}, f)
        r = ibroute("accept", "--db", self.db, "--expect", expect, "--run-report", path, "--json", "--report", self.path("a.html"), check=False)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        out = json.loads(r.stdout)
        return r.returncode, out, {c["check"]: c for c in out["checks"]}

    def test_a_clean_run_is_accepted(self):
        rc, out, checks = self.accept(self.report({}, 1))
        # Judged against the schedule that ran, measured as a plan: its worst link recomputed here
        # from the stored routes.
        ran = out["run_schedule"]
        self.assertEqual((ran["schedule"], ran["hosts"], ran["bound_by"]), ("p", 96, "scan_id and port GUIDs"))
        worst = max(max(load.values()) for _, _, load in self.paths())
        self.assertEqual(ran["max_load"], worst)
        self.assertGreater(ran["efficiency"]["value"], 0)
        self.assertEqual(checks["faults"]["result"], "pass", checks["faults"])
        self.assertEqual([s for s in out["diagnosis"]["suspects"] if s["confidence"] >= 0.5], [], out["diagnosis"])
        self.assertEqual(rc, 0, [c for c in out["checks"] if c["result"] == "fail"])

    def test_a_cable_at_40_percent_fails_the_acceptance_naming_it(self):
        used = collections.Counter(l for _, links, _ in self.paths() for l in links if self.routes.switch_link(*l))
        cable = max(used, key=lambda l: (used[l], l))
        rc, out, checks = self.accept(self.report({cable: 0.4}, 2))
        self.assertEqual(rc, 1)
        self.assertFalse(out["accepted"])
        self.assertEqual(checks["rate_per_node"]["result"], "pass")  # the nodes' rates alone would accept it
        self.assertEqual(checks["faults"]["result"], "fail", checks["faults"])
        name = f"{self.desc[cable[0]]}[{cable[1]}] -> "
        self.assertIn(name, checks["faults"]["detail"])
        self.assertTrue(out["diagnosis"]["suspects"][0]["where"].startswith(name), out["diagnosis"]["suspects"][:2])

    def test_the_report_paints_each_pair_against_its_plan(self):
        """A host receiving at 59 % of its plan, above the node rate asked (1 Gb/s): the verdict
        fails on the located fault, the headline says so in red, and the painted map shows its
        column not green while every other pair (5 % noise) is."""
        from test_accept_sim import chromium, green, heatmap_colours
        dst = 7
        into = next(links[-1] for t, links, _ in self.paths() if t["dst"] == dst)  # the leaf's port to the host
        rc, out, checks = self.accept(self.report({into: 0.59}, 3))
        self.assertEqual((rc, out["accepted"]), (1, False), checks)
        self.assertEqual(checks["rate_per_node"]["result"], "pass")
        cells, _ = heatmap_colours(self, self.path("a.html"), 96)
        self.assertEqual([i for i in range(96) if i != dst and green(cells[(i, dst)])], [], "pairs into the slow host")
        self.assertEqual([k for k, c in cells.items() if k[0] != k[1] and k[1] != dst and not green(c)], [])
        dom = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + self.path("a.html")],
                             capture_output=True, text=True, timeout=120).stdout
        head = re.search(r'<p id="verdict-line" class="(\w+)" style="color:(#\w+)">([^<]*)<', dom)
        self.assertEqual(head.group(1), "fail")
        self.assertTrue(head.group(3).startswith("NOT ACCEPTED — "), head.group(3))
        self.assertEqual(head.group(2), "#8b0000")
        self.assertIn("<title>ibroute acceptance: NOT ACCEPTED</title>", dom)
        self.assertIn('<p id="clock">Not measured: the run\'s report lists no clock offsets', dom)
        slow = dom[dom.index('id="slowest-pairs"'):]
        slow = slow[:slow.index("</table>")]
        self.assertEqual(re.findall(r"<tr><td>\d+ [^<]*</td><td>(\d+) ", slow), [str(dst)] * 10, "the ten furthest below plan go to it")


if __name__ == "__main__":
    unittest.main()
