"""ibroute diff --against FILE on ibsim + OpenSM: the live scan's cables against a cabling plan.
The fabric's own `ibnetdiscover` output (the real tool) is a plan it meets; a CSV plan by names,
written here from the topology file (parsed independently of ibroute), with two host cables of one
leaf exchanged, one cable left out and one to a switch the fabric does not have, gives exactly
those findings, by both ends. A plan that does not parse: one line, exit 2."""
import json
import re
import unittest

from common import EXAMPLES, TempDirTest, ibroute
from simfabric import SimFabric, read_text, write_text

TOPO = f"{EXAMPLES}/hft96-shuffled.topo"


def switch_cables(topo):
    """[(switch, port, peer, peer_port)] of every switch section of an ibsim topology file."""
    out, switch = [], None
    for line in read_text(topo).splitlines():
        m = re.match(r'^Switch\s+\d+\s+"([^"]+)"', line)
        if m:
            switch = m.group(1)
            continue
        if line.startswith("Hca"):
            switch = None
        m = re.match(r'^\[(\d+)\]\s+"([^"]+)"\[(\d+)\]', line)
        if m and switch:
            out.append((switch, int(m.group(1)), m.group(2), int(m.group(3))))
    return out


class Cabling(TempDirTest):
    def test_plans_met_and_plans_broken(self):
        db = self.path("c.db")
        cables = switch_cables(TOPO)
        # Each cable once: switch-to-switch cables appear in both switches' sections.
        unique = {tuple(sorted([(a, p), (b, q)])) for a, p, b, q in cables}
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
            reference = write_text(self.path("ref.topo"), sim.run(["timeout", "60", "ibnetdiscover"]).stdout)
        r = ibroute("diff", "--db", db, "--against", reference, "--json", check=False)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["planned"], doc["as_planned"], doc["ok"]), (len(unique), len(unique), True))

        # The plan by names: ibswitch01's ports 1 and 2 exchanged, one cable left out, one to a ghost.
        plan = sorted(unique)
        host1 = next(c for c in plan if ("ibswitch01", 1) in c)
        host2 = next(c for c in plan if ("ibswitch01", 2) in c)
        rows = [c for c in plan if c not in (host1, host2)]
        (h1, p1), (h2, p2) = [e for e in host1 if e[0] != "ibswitch01"][0], [e for e in host2 if e[0] != "ibswitch01"][0]
        rows += [(("ibswitch01", 1), (h2, p2)), (("ibswitch01", 2), (h1, p1))]
        left_out = next(c for c in rows if not c[0][0].startswith("node") and not c[1][0].startswith("node"))
        rows.remove(left_out)
        csv = "switch,port,peer,peer_port\n" + "".join(f"{a},{p},{b},{q}\n" for (a, p), (b, q) in rows) + "ghost-switch,1,ibswitch02,1\n"
        r = ibroute("diff", "--db", db, "--against", write_text(self.path("plan.csv"), csv), "--json", check=False)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["as_planned"], len(unique) - 3)
        self.assertEqual(len(doc["swapped"]), 1)
        ends = {(x["a"]["node"], x["a"]["port"], x["b"]["node"], x["b"]["port"]) for x in doc["swapped"][0].values()}
        self.assertEqual(ends, {("ibswitch01", 1, h2, p2), ("ibswitch01", 2, h1, p1)})
        self.assertEqual([{(x["a"]["node"], x["a"]["port"]), (x["b"]["node"], x["b"]["port"])} for x in doc["extra"]], [set(left_out)])
        self.assertEqual((doc["missing"], doc["moved"]), ([], []))
        self.assertEqual(len(doc["unresolved"]), 1)
        self.assertIn("ghost-switch", doc["unresolved"][0])
        text = ibroute("diff", "--db", db, "--against", self.path("plan.csv"), check=False).stdout
        self.assertIn(f"swapped: ibswitch01[1] - {h2}[{p2}] and ibswitch01[2] - {h1}[{p1}]", text)

        # accept: the expectation's "cabling" key, relative to the expectation file's folder.
        for plan_file, ok in (("ref.topo", True), ("plan.csv", False)):
            expect = write_text(self.path(f"expect-{ok}.json"), json.dumps({"cabling": plan_file}))
            r = ibroute("accept", "--db", db, "--expect", expect, "--simulate", "--json", "--report", self.path(f"a-{ok}.html"), check=False)
            checks = {c["check"]: c for c in json.loads(r.stdout)["checks"]}
            self.assertEqual(checks["cabling"]["result"], "pass" if ok else "fail", checks["cabling"])
            if not ok:
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(f"swapped: ibswitch01[1] - {h2}[{p2}] and ibswitch01[2] - {h1}[{p1}]", checks["cabling"]["detail"])
                self.assertEqual(checks["cabling"]["measured"], f"{len(unique) - 3} of {len(unique) + 0} cables as planned")
        r = ibroute("accept", "--db", db, "--expect", write_text(self.path("e.json"), '{"cabling": "none.csv"}'), "--simulate", "--report",
                    self.path("a.html"), check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("none.csv", r.stderr)

        for content, words in (("switch,port,peer\nibswitch01,1,node1-001\n", "line 1: 3 fields"),
                               ("ibswitch01,x,node1-001,1\n", "line 1: port 'x'"),
                               ("", "no cable")):
            r = ibroute("diff", "--db", db, "--against", write_text(self.path("bad.csv"), content), check=False)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(words, r.stderr)


if __name__ == "__main__":
    unittest.main()
