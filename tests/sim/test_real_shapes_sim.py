"""Real fabric shapes replayed in ibsim and routed by OpenSM, then scanned live and analysed,
planned and validated: a director chassis (line and spine ASICs) with edge switches that all
share one description, hosts on line cards, a SHARP aggregation node, a router and a loopback
cable; a three-level fat-tree (with cables missing above the leaves, and routing that leaves
up-links idle); hosts on a spine."""
import json
import os
import subprocess
import unittest

from common import SOURCE, TempDirTest, db_rows, ibroute, ibroute_json
from simfabric import SimFabric, generate, write_text

GEN = os.path.join(SOURCE, "examples", "gen_real_fabric.py")


def gen_real(path, *args):
    subprocess.run(["python3", GEN, *map(str, args), "-o", path], check=True)
    return path


class RealShapes(TempDirTest):
    def scan(self, topo, lmc, engine):
        return self.scan_with(topo, engine, [], lmc)

    def scan_with(self, topo, engine, osm_args, lmc=0):
        db = self.path("f.db")
        with SimFabric(topo, lmc=lmc, engine=engine, osm_args=osm_args) as sim:
            s = ibroute_json("scan", "--db", db, sim=sim)
        return db, s

    def test_director_with_edge_switches_aggregation_node_router_loopback(self):
        topo = gen_real(self.path("d.topo"), "director", "--edges", 4, "--edge-hosts", 20, "--line-hosts", 2,
                        "--aggregation-node", "--router", "--loopback", "--seed", 3)
        db, s = self.scan(topo, 2, "updn")
        self.assertTrue(s["complete"], s["problems"])
        self.assertEqual((s["hosts"], s["aggregation_nodes"], s["routers"]), (88, 1, 1))
        a = ibroute_json("analyze", "--db", db, "--no-fair-share", "--patterns", "rr-name", "--lids", "base")
        st = a["structure"]
        self.assertEqual(st["summary"], "1 IS5600 director (6 ASICs) + 4 edge switches, 3 switch levels")
        self.assertEqual(st["levels"], 3)
        self.assertEqual(len(st["leaves"]), 4)
        self.assertTrue(all(name.startswith("Infiniscale-IV Mellanox Technologies (0x") for name in st["leaves"]))
        self.assertEqual(len(set(st["leaves"])), 4)  # one description, four names
        self.assertEqual(sorted(x["kind"] for x in a["not_hosts"]), ["aggregation", "router"])
        self.assertEqual(len(st["loopbacks"]), 1)
        self.assertEqual(len(st["hosts_above_lowest_level"]), 8)
        self.assertEqual(a["hosts"], 88)
        # Plan, export, validate: the aggregation node and the router take no part.
        ibroute("plan", "--db", db, "--name", "d", "--message-size", "64K")
        out = self.path("d.json")
        ibroute("export", "--db", db, "--schedule", "d", "-o", out)
        with open(out) as f:
            doc = json.load(f)
        names = {h["name"] for h in doc["hosts"]}
        self.assertEqual(len(names), 88)
        self.assertFalse(any("Aggregation" in n or "router" in n for n in names))
        v = ibroute("validate", "--db", db, out, check=False)
        self.assertIn(v.returncode, (0, 1), v.stderr)
        self.assertNotIn("ibroute:", v.stderr.replace("ibwarn", ""))

    def test_director_line_asic_without_outside_cables_is_unused_not_a_level(self):
        # 2 edge switches with one up-link each reach 2 of the director's 4 line ASICs: the other two
        # hang off the spine ASICs alone. Replayed in ibsim and routed by OpenSM.
        topo = gen_real(self.path("u.topo"), "director", "--lines", 4, "--spine-asics", 2, "--edges", 2, "--edge-hosts", 35,
                        "--line-hosts", 0, "--seed", 3)
        db, s = self.scan(topo, 0, "minhop")
        self.assertTrue(s["complete"], s["problems"])
        a = ibroute_json("analyze", "--db", db, "--no-fair-share", "--patterns", "rr-name", "--lids", "base")
        st = a["structure"]
        self.assertEqual(st["levels"], 3, st["summary"])  # edge, line, spine: not a fourth level of idle line ASICs
        self.assertEqual(st["summary"], "1 IS5600 director (6 ASICs) + 2 edge switches, 3 switch levels")
        self.assertEqual(sorted(st["unused_switches"]), ["MF0;director1:IS5600/L03/U1", "MF0;director1:IS5600/L04/U1"])
        self.assertEqual([lv["level"] for lv in st["per_level"]], [1, 2, 3])
        self.assertEqual(st["per_level"][2]["switches"], 2)  # the spine ASICs are the top
        r = ibroute("analyze", "--db", db, "--no-fair-share", "--patterns", "rr-name")
        self.assertIn("unused switches     2 (on no shortest path between hosts", r.stdout)

    def test_three_levels_missing_cables_and_idle_up_links(self):
        args = ["three-level", "--pods", 3, "--pod-leaves", 4, "--pod-aggs", 2, "--down", 4, "--up", 2, "--core-per-agg", 2]
        topo = gen_real(self.path("t.topo"), *args, "--seed", 4)
        db, s = self.scan(topo, 2, "minhop")
        a = ibroute_json("analyze", "--db", db, "--no-fair-share", "--patterns", "rr-topo", "--lids", "spread")
        st = a["structure"]
        self.assertEqual(st["levels"], 3)
        self.assertEqual([lv["switches"] for lv in st["per_level"]], [12, 6, 4])
        self.assertEqual(st["missing"], [])
        idle = a["routing_balance"]["idle_up_links"]
        exp = write_text(self.path("e.json"), json.dumps({"topology": "three-level", "max_routing_imbalance": 4}))
        r = ibroute("accept", "--db", db, "--expect", exp, "--simulate", "--json", "--report", self.path("r.html"), check=False)
        checks = {c["check"]: c for c in json.loads(r.stdout)["checks"]}
        self.assertEqual(checks["topology"]["result"], "pass", checks["topology"])
        rb = checks["routing_balance"]
        if idle:  # routing that leaves up-links unused above the leaves must fail, naming them
            self.assertEqual(rb["result"], "fail", rb)
            self.assertIn(f"{len(idle)} up-link(s) carry no route", rb["detail"])
        # Two cables gone: each named at the switch that lost it.
        cut = gen_real(self.path("c.topo"), *args, "--seed", 4, "--missing", 2)
        db2, _ = self.scan(cut, 0, "minhop")
        m = ibroute_json("analyze", "--db", db2, "--no-fair-share", "--patterns", "rr-name", "--lids", "base")["structure"]["missing"]
        self.assertEqual(len(m), 2, m)

    def test_missing_cables_are_facts_ranked_by_their_cost(self):
        """Cables missing at the leaves of a three-level tree (2 up-links per 4 hosts): each switch
        that lost one is one suspect, its fact stated once, with what it costs the all-to-all; a
        suspect that costs nothing stays below 0.5, one that costs time is at 0.5 or more."""
        args = ["three-level", "--pods", 3, "--pod-leaves", 4, "--pod-aggs", 2, "--down", 4, "--up", 2, "--core-per-agg", 2]
        cut = gen_real(self.path("c.topo"), *args, "--seed", 4, "--missing", 3)
        db, _ = self.scan(cut, 0, "minhop")
        exp = write_text(self.path("e.json"), json.dumps({"topology": "three-level"}))
        r = ibroute("accept", "--db", db, "--expect", exp, "--simulate", "--json", "--report", self.path("r.html"), check=False)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        suspects = json.loads(r.stdout)["diagnosis"]["suspects"]
        missing = [x for x in suspects if x["where"].endswith("(missing)")]
        self.assertTrue(missing, suspects)
        for x in suspects:
            self.assertEqual(len(x["evidence"]), len(set(x["evidence"])), x)  # no fact twice
        for x in missing:
            self.assertIn("cost_share", x)
            if x["cost_share"] == 0:
                self.assertLess(x["confidence"], 0.5, x)
                self.assertIn("costs the all-to-all nothing", x["evidence"][0])
            else:
                self.assertGreaterEqual(x["confidence"], 0.5, x)
                self.assertIn("more time", x["evidence"][0])
            self.assertIn("empty port", x["action"])

    def test_idle_up_links_above_the_leaves_fail_routing_balance(self):
        # Routing that leaves an aggregation->core link unused (as minhop did on a 3 456-host tree):
        # OpenSM's own tables with one aggregation switch's host traffic moved off its second
        # up-link, loaded back by OpenSM's file engine, scanned live.
        from test_import_formats_sim import dump_lfts_sh
        import re
        topo = gen_real(self.path("i.topo"), "three-level", "--pods", 2, "--pod-leaves", 4, "--pod-aggs", 2, "--down", 4,
                        "--up", 2, "--core-per-agg", 2, "--seed", 4)
        with SimFabric(topo, lmc=0, engine="minhop") as sim:
            text = dump_lfts_sh(sim)
        blocks = re.split(r"(?m)^(?=Unicast lids)", text)
        moved = [re.sub(r"(?m)^(0x[0-9a-f]{4}) 006 : \(Channel Adapter", r"\1 005 : (Channel Adapter", b)
                 if "(agg-p1-01)" in b.split("\n", 1)[0] else b for b in blocks]
        self.assertNotEqual(moved, blocks)
        tables = write_text(self.path("tables.dump"), "".join(moved))
        db, s = self.scan_with(topo, "file", ["-U", tables])
        self.assertEqual(s["routes"]["total"], s["routes"]["ok"], s["routes"])
        a = ibroute_json("analyze", "--db", db, "--no-fair-share", "--patterns", "rr-name", "--lids", "base")
        idle = a["routing_balance"]["idle_up_links"]
        # The link moved off, and (counted by routes, not LFT entries) those minhop's correlated
        # choices leave idle: traffic reaches an aggregation switch only for the DLIDs its leaves send it.
        self.assertIn(("agg-p1-01", 6), {(x["a"], x["a_port"]) for x in idle})
        self.assertTrue(all(x["a"].startswith("agg-") and x["b"].startswith("core") for x in idle), idle)
        self.assertEqual(a["routing_balance"]["upper_levels"][0]["idle_up_links"], len(idle))
        exp = write_text(self.path("e.json"), json.dumps({"topology": 3, "max_routing_imbalance": 2}))
        r = ibroute("accept", "--db", db, "--expect", exp, "--simulate", "--json", "--report", self.path("r.html"), check=False)
        self.assertEqual(r.returncode, 1)
        rb = {c["check"]: c for c in json.loads(r.stdout)["checks"]}["routing_balance"]
        self.assertEqual(rb["result"], "fail", rb)
        self.assertIn(f"{len(idle)} up-link(s) carry no route, e.g. ", rb["detail"])
        self.assertIn(f"level 2: {len(idle)}", rb["detail"])

    def test_hosts_on_a_spine(self):
        topo = generate(self.path("h.topo"), "--leaves", 6, "--down", 4, "--up", 2, "--spines", 2,
                        "--switch-ports", 8, "--spine-ports", 12, "--shuffle", "--seed", 5)
        # Two hosts cabled to the first spine: it stays a spine.
        with open(topo) as f:
            text = f.read()
        spine = "ibspine01"
        extra = ""
        for i, port in enumerate((11, 12)):
            extra += f'\nHca\t1 "spinehost{i}"\n[1]\t"{spine}"[{port}]\t# lid 0 4xEDR\n'
            text = text.replace(f'Switch\t12 "{spine}"', f'Switch\t12 "{spine}"\n[{port}]\t"spinehost{i}"[1]\t# lid 0 4xEDR', 1)
        write_text(topo, text + extra)
        db, s = self.scan(topo, 0, "minhop")
        a = ibroute_json("analyze", "--db", db, "--no-fair-share", "--patterns", "rr-name", "--lids", "base")
        st = a["structure"]
        self.assertEqual(st["levels"], 2)
        self.assertEqual(len(st["leaves"]), 6)
        self.assertEqual(len(st["top"]), 2)
        self.assertEqual(sorted(st["hosts_above_lowest_level"]), ["spinehost0", "spinehost1"])
        self.assertEqual(st["missing"], [])


if __name__ == "__main__":
    unittest.main()
