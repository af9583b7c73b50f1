"""accept's repair list on ibsim + OpenSM: a healthy fabric has no likely suspect; a cable unlinked
after OpenSM routed is named by its switches, and an injected error counter by its port."""
import json
import unittest

from common import EXAMPLES, TempDirTest, ibroute, ibroute_json
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


if __name__ == "__main__":
    unittest.main()
