"""Faults on a routed ibsim fabric: a link unlinked after OpenSM routed, a switch that does not answer."""
import re
import subprocess
import unittest

from common import EXAMPLES, IBROUTE, TempDirTest, db_rows, ibroute, ibroute_json
from schedule_check import Routes, round_robin
from simfabric import SimFabric, read_text

TOPO = f"{EXAMPLES}/hft96-shuffled.topo"


def leaf_ports_to(topo, switch):
    """(leaf, port) pairs cabled to `switch`, read from the ibsim topology file."""
    out, cur = [], None
    for line in read_text(topo).splitlines():
        m = re.match(r'^(Switch|Hca)\s+\d+\s+"([^"]+)"', line)
        if m:
            cur = m.group(2)
            continue
        m = re.match(r'^\[(\d+)\]\s+"([^"]+)"\[(\d+)\]', line)
        if m and m.group(2) == switch and cur.startswith("ibswitch"):
            out.append((cur, int(m.group(1))))
    return out


def node_index(db, scan, desc):
    return db_rows(db, "SELECT idx FROM node WHERE scan_id=? AND desc=?", scan, desc)[0][0]


class Faults(TempDirTest):
    def test_link_unlinked_after_routing(self):
        db = self.path("f.db")
        with SimFabric(TOPO, lmc=2) as sim:
            before = ibroute_json("scan", "--db", db, sim=sim)
            self.assertEqual(before["routes"]["ok"], before["routes"]["total"])
            sim.console('Unlink "ibswitch03"[10]')  # OpenSM ran once (-o): nobody reroutes
            after = ibroute_json("scan", "--db", db, sim=sim, timeout=60)
        scan = after["scan_id"]
        self.assertTrue(after["complete"])  # a link that is down is a fact, not a scan failure
        # ... and the scan says where the broken routes end: both ends of the cable, by port.
        ends = {(p["port"], p["detail"].split(" at ")[1].split(":")[0]) for p in after["problems"] if p["kind"] == "broken_routes"}
        self.assertIn((10, "ibswitch03[10]"), ends, after["problems"])
        self.assertEqual(sum(int(p["detail"].split()[0]) for p in after["problems"] if p["kind"] == "broken_routes"),
                         after["routes"]["dead_end"])
        # A schedule planned before the loss: validate names where its transfers now end.
        ibroute_json("plan", "--db", db, "--scan", before["scan_id"], "--name", "old", "--shifts-only")
        ibroute("export", "--db", db, "--schedule", "old", "-o", self.path("old.json"))
        v = ibroute("validate", "--db", db, "--scan", scan, self.path("old.json"), "--json", check=False)
        self.assertEqual(v.returncode, 1)
        import json as _j
        routes = {c["check"]: c for c in _j.loads(v.stdout)["checks"]}["routes"]
        self.assertRegex(routes["detail"], r"no working route; e\.g\. phase \d+: .+ -> .+ \(DLID \d+\) dead_end at ib\w+\[\d+\]")
        self.assertEqual(after["links"], before["links"] - 1)
        broken = after["routes"]["dead_end"]
        self.assertGreater(broken, 0)
        self.assertEqual(after["routes"]["ok"] + broken, after["routes"]["total"])
        # Every broken route stops at one end of the unlinked cable.
        leaf = node_index(db, scan, "ibswitch03")
        spine_end = db_rows(db, "SELECT peer_node, peer_port FROM port WHERE scan_id=? AND node_idx=? AND num=10",
                            before["scan_id"], node_index(db, before["scan_id"], "ibswitch03"))[0]
        spine_desc = db_rows(db, "SELECT desc FROM node WHERE scan_id=? AND idx=?", before["scan_id"], spine_end[0])[0][0]
        ends = {f"{leaf}:10", f"{node_index(db, scan, spine_desc)}:{spine_end[1]}"}
        rows = db_rows(db, "SELECT hops FROM route WHERE scan_id=? AND status=3", scan)
        self.assertEqual(len(rows), broken)
        for (hops,) in rows:
            self.assertIn(hops.split()[-1], ends)
        # A user asking for such a route hears that it is broken, with exit code 1.
        ingress, dlid = db_rows(db, "SELECT ingress, dlid FROM route WHERE scan_id=? AND status=3 LIMIT 1", scan)[0]
        src = db_rows(db, "SELECT p.base_lid FROM port p JOIN port s ON s.scan_id=p.scan_id AND s.node_idx=p.peer_node "
                          "AND s.num=p.peer_port WHERE p.scan_id=? AND s.node_idx=? AND p.base_lid>0 LIMIT 1",
                      scan, ingress)[0][0]
        r = ibroute("routes", "--db", db, "--from", src, "--to", dlid, "--lid", dlid, "--json", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('"dead_end"', r.stdout)
        # diff names the cable that went away and counts the routes that changed.
        r = ibroute("diff", "--db", db, "--json", check=False)
        self.assertEqual(r.returncode, 1, r.stderr)  # something changed, like diff(1)
        import json as _json
        d = _json.loads(r.stdout)
        self.assertTrue(all(" port " in x["dlid_owner"] or x["dlid_owner"].startswith("ib") for x in d["route_examples"]), d["route_examples"])
        self.assertTrue(all(x["ingress_desc"].startswith("ib") for x in d["route_examples"]), d["route_examples"])
        self.assertEqual(len(d["links_removed"]), 1)
        gone = d["links_removed"][0]
        self.assertEqual({(gone["a"]["desc"], gone["a"]["port"]), (gone["b"]["desc"], gone["b"]["port"])},
                         {("ibswitch03", 10), (spine_desc, spine_end[1])})
        self.assertEqual(d["routes_changed"], broken)
        # analyze counts the transfers that hit the cable as broken in every figure: the round-robin
        # exchange does not complete (no efficiency), its rate is no higher than on the healthy scan.
        args = ("analyze", "--db", db, "--patterns", "rr-name", "--lids", "base", "--no-fair-share")
        rr = ibroute_json(*args, "--scan", scan)["patterns"][0]
        healthy = ibroute_json(*args, "--scan", before["scan_id"])["patterns"][0]
        names = sorted((dsc for (dsc,) in db_rows(db, "SELECT desc FROM node WHERE scan_id=? AND type='ca'", scan)),
                       key=lambda x: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", x)])
        doc = round_robin(db, scan, names)
        routes = Routes(db, scan)
        lost = sum(1 for phase in doc["phases"] for t in phase
                   if routes.routes[(routes.ports[doc["hosts"][t["src"]]["port_guid"]][4], t["dlid"])][0] != 0)
        self.assertGreater(lost, 0)
        self.assertEqual(rr["broken"], lost)
        self.assertEqual(rr["efficiency"]["broken"], lost)
        self.assertEqual(rr["efficiency"]["value"], 0)
        self.assertFalse(rr["efficiency"]["complete"])
        self.assertTrue(healthy["efficiency"]["complete"])
        self.assertLessEqual(rr["efficiency"]["rate_per_node_gbps"], healthy["efficiency"]["rate_per_node_gbps"] + 1e-9)
        self.assertGreaterEqual(rr["max_load"], 1)
        # analyze names the cable that went down since the scan before, by both ends' ports.
        gone = ibroute_json("analyze", "--db", db, "--patterns", "rr-name", "--lids", "base", "--no-fair-share")["since_previous_scan"]
        self.assertEqual(gone["cables_gone"], [f"ibswitch03[10] - {spine_desc}[{spine_end[1]}]"])

    def test_switch_that_does_not_answer(self):
        db = self.path("f.db")
        silent = "ibspine02"
        with SimFabric(TOPO, lmc=2) as sim:
            for p in range(0, 13):
                sim.console(f'Error "{silent}"[{p}] 100')  # drop every packet into the spine
            r = ibroute("scan", "--db", db, "--json", sim=sim, check=False, timeout=60)
        self.assertEqual(r.returncode, 3, r.stderr)  # stored, but incomplete
        import json
        s = json.loads(r.stdout)
        self.assertFalse(s["complete"])
        expected = leaf_ports_to(TOPO, silent)
        self.assertEqual(len(expected), 12)
        unanswered = {(p["detail"].split()[0], p["port"]) for p in s["problems"] if p["kind"] == "unanswered_port"}
        self.assertEqual(unanswered, set(expected))
        self.assertGreater(s["routes"]["unknown"], 0)
        self.assertEqual(s["routes"]["dead_end"], 0)
        listing = ibroute("scans", "--db", db).stdout
        self.assertIn("INCOMPLETE", listing)
        # Every command that uses the scan says so, in one line, and goes on.
        a = ibroute("analyze", "--db", db, "--patterns", "rr-name", "--no-fair-share")
        warnings = [l for l in a.stderr.splitlines() if "warning" in l]
        self.assertEqual(len(warnings), 1, a.stderr)
        self.assertIn("is incomplete", warnings[0])
        self.assertIn("scans --problems", warnings[0])
        # The runner loads the scan on every rank but warns on rank 0 only (not once per node).
        ibroute("plan", "--db", db, "--name", "s", "--hosts", "node1-001,node1-002,node1-003")
        run = subprocess.run(["timeout", "60", "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3",
                              IBROUTE, "run", "--db", db, "--schedule", "s"], capture_output=True, text=True)
        self.assertEqual(sum("is incomplete" in l for l in run.stderr.splitlines()), 1, run.stderr)
        self.assertIn("run: 3 ranks", run.stderr)  # it got past loading the scan on every rank


if __name__ == "__main__":
    unittest.main()
