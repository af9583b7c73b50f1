"""Efficiency (least possible time of the exchange / planned time) of `ibroute plan` on ibsim + OpenSM
fabrics, for host subsets and two groups, recomputed from the database's stored routes by
tests/sim/schedule_check.py (not the planner's code), against round-robin with base LIDs built here
and against the least possible time; and the exported file validated, version 3 where it needs it."""
import json
import os
import random
import unittest

from common import EXAMPLES, TempDirTest, db_rows, ibroute, ibroute_json
from schedule_check import (Routes, check_all_to_all, check_groups, efficiency, groups_of, phase_group_bound, phase_link_loads, phases_of,
                            round_robin, tables_least_time, tree_groups)
from test_real_shapes_sim import gen_real
from simfabric import SimFabric, generate


def host_names(db, scan):
    return sorted(d for (d,) in db_rows(db, "SELECT desc FROM node WHERE scan_id = ? AND type = 'ca'", scan))


class EfficiencyOnSimulatedFabrics(TempDirTest):
    def plan_and_check(self, db, scan, tag, hosts=(), senders=(), receivers=(), at_least=0.9, within_bound=True):
        args = ["plan", "--db", db, "--name", tag]
        for label, group in (("hosts", hosts), ("senders", senders), ("receivers", receivers)):
            if group:
                path = self.path(f"{tag}-{label}.txt")
                with open(path, "w") as f:
                    f.write("\n".join(group) + "\n")
                args += [f"--{label}", "@" + path]
        plan = ibroute_json(*args)
        out = self.path(tag + ".json")
        ibroute("export", "--db", db, "--schedule", tag, "-o", out)
        with open(out) as f:
            doc = json.load(f)
        (check_groups if senders else check_all_to_all)(doc)
        t, least, phases = efficiency(db, scan, doc)
        e = plan["efficiency"]
        # What ibroute claims, recomputed from the stored routes.
        self.assertEqual(e["planned_time"], t, tag)
        self.assertGreaterEqual(e["least_time"] + 1e-6, least, tag)  # ibroute also counts links with no other path
        self.assertAlmostEqual(e["value"], e["least_time"] / t, places=9)
        # Against the routing tables beside it: never below the fabric's least time, and at least
        # what the up-links the stored routes use allow (idle ones carry nothing).
        tables = e["tables"]
        self.assertGreaterEqual(tables["least_time"] + 1e-6, e["least_time"], tag)
        self.assertGreaterEqual(tables["least_time"] + 1e-6, tables_least_time(db, scan, doc), tag)
        self.assertAlmostEqual(tables["value"], min(1.0, tables["least_time"] / t), places=9)
        self.assertEqual(e["routing_limits"], tables["least_time"] > e["least_time"] * 1.005 + 1e-9, tag)
        # Where the tables are the limit plan names `ibroute routing` only if its check passes: run as advised, it does.
        advice = e["routing_advice"]
        self.assertEqual(advice is not None, e["routing_limits"], tag)
        if advice and advice["command"]:
            r = ibroute("routing", "--db", db, *advice["command"].split()[2:], "--json", check=False)
            self.assertEqual((r.returncode, json.loads(r.stdout)["check"]["ok"]), (0, True), tag)
        self.assertEqual(e["broken"], 0, tag)
        self.assertGreaterEqual(least / t, at_least, f"{tag}: T {t}, T* {least}")
        # Never worse than round-robin with base LIDs in the same order (where that is better, it is
        # what plan returns), and the least possible not beaten.
        names = list(hosts) or sorted(set(senders) | set(receivers), key=(list(senders) + list(receivers)).index)
        rr_t, _, _ = efficiency(db, scan, round_robin(db, scan, names, senders, receivers))
        self.assertLessEqual(t, rr_t, tag)
        self.assertEqual(plan["round_robin_base"]["returned"], plan["method"].startswith("round-robin"), tag)
        self.assertGreaterEqual(t + 1e-9, least)
        # The file names its version by what it needs, and validate takes it.
        needs_v3 = "phase_slots" in doc["timing"] or phases > max(len(g) for g in groups_of(doc)) - (0 if senders else 1)
        self.assertEqual(doc["version"], 3 if needs_v3 else 2, tag)
        v = ibroute("validate", "--db", db, out, "--json", check=False)
        vj = json.loads(v.stdout)
        self.assertEqual(v.returncode, 0 if within_bound else 1, vj)
        self.assertTrue(all(c["ok"] for c in vj["checks"] if within_bound or c["check"] != "congestion"), vj)
        return plan, doc, t, least

    def test_host_subsets_and_groups_on_the_shuffled_864_host_tree(self):
        db = self.path("f.db")
        with SimFabric(os.path.join(EXAMPLES, "hft864-shuffled.topo"), lmc=4) as sim:
            scan = ibroute_json("scan", "--db", db, sim=sim)["scan_id"]
        names = host_names(db, scan)
        # The whole tree, its hosts named against the cabling: at least what round-robin in the
        # topology order reaches (0.987), whichever order the hosts are given in.
        plan, doc, t, least = self.plan_and_check(db, scan, "all864", hosts=names, at_least=0.987)
        rr_topo_t, _, _ = efficiency(db, scan, round_robin(db, scan, names, topology=True))
        self.assertLessEqual(t, rr_topo_t)
        # Random host sets and groups, two seeds each: at least 0.95 of the least possible time.
        for seed in (25, 31):
            rng = random.Random(seed)
            few = sorted(rng.sample(names, 100), key=names.index)
            plan, doc, t, least = self.plan_and_check(db, scan, f"sub100-{seed}", hosts=few, at_least=0.95)
            if seed == 25:
                self.assertEqual(plan["max_load"], 1)  # no leaf holds 12 of them: one transfer per link in every phase
                self.assertEqual(t, 99)
                first_few = few
            some = sorted(rng.sample(names, 300), key=names.index)
            plan, doc, t, least = self.plan_and_check(db, scan, f"sub300-{seed}", hosts=some, at_least=0.95)
            if seed == 25:
                self.assertIn("packed", plan["method"])  # its densest leaves' excess waits
                self.assertGreater(least, 299)  # a leaf with more of the set than up-links is the bottleneck
                self.assertIn("up-links", plan["efficiency"]["limited_by"])
            pool = rng.sample(names, 600)
            snd, rcv = sorted(pool[:300], key=names.index), sorted(pool[300:], key=names.index)
            self.plan_and_check(db, scan, f"g300-{seed}", senders=snd, receivers=rcv, at_least=0.95)
            pool = rng.sample(names, 600)
            self.plan_and_check(db, scan, f"g150-{seed}", senders=sorted(pool[:150], key=names.index),
                                receivers=sorted(pool[150:], key=names.index), at_least=0.95)
            self.plan_and_check(db, scan, f"sub600-{seed}", hosts=sorted(rng.sample(names, 600), key=names.index), at_least=0.95)
        few = first_few
        # analyze reports round-robin's efficiency on the same measure.
        a = ibroute_json("analyze", "--db", db, "--hosts", ",".join(few), "--patterns", "rr-name", "--lids", "base", "--no-fair-share")
        rr = a["patterns"][0]["efficiency"]
        rr_t, _, _ = efficiency(db, scan, round_robin(db, scan, few))
        self.assertEqual(rr["planned_time"], rr_t)
        self.assertEqual(rr["least_time"], 99)

    def test_a_degraded_fabric(self):
        # 8 leaves of 12 hosts and 6 up-links, 3 of 48 leaf-spine links missing, 2 narrowed.
        topo = generate(self.path("deg.topo"), "--leaves", "8", "--down", "12", "--up", "6", "--spines", "6", "--switch-ports", "18",
                        "--spine-ports", "8", "--shuffle", "--seed", "7", "--missing", "3", "--narrow", "2")
        db = self.path("deg.db")
        with SimFabric(topo, lmc=2) as sim:
            scan = ibroute_json("scan", "--db", db, sim=sim)["scan_id"]
        names = host_names(db, scan)
        # A host at 1x is the bottleneck: every phase lasts as long as its one transfer, and the others
        # fit in that time even where a leaf short of up-links carries more than the bound.
        plan, doc, t, least = self.plan_and_check(db, scan, "all", hosts=names, at_least=0.95, within_bound=False)
        self.assertIn("at 25 of 100 Gb/s", plan["efficiency"]["limited_by"])
        # accept checks the same measure against an expectation.
        exp = self.path("exp.json")
        with open(exp, "w") as f:
            json.dump({"min_efficiency": 0.8}, f)
        r = ibroute("accept", "--db", db, "--expect", exp, "--simulate", "--json", "--report", self.path("r.html"), check=False)
        rep = json.loads(r.stdout)
        check = next(c for c in rep["checks"] if c["check"] == "min_efficiency")
        self.assertEqual(check["result"], "pass", check)
        with open(exp, "w") as f:
            json.dump({"min_efficiency": 1.0}, f)
        r = ibroute("accept", "--db", db, "--expect", exp, "--simulate", "--json", "--report", self.path("r.html"), check=False)
        check = next(c for c in json.loads(r.stdout)["checks"] if c["check"] == "min_efficiency")
        if rep["plan"]["efficiency"]["value"] < 1:
            self.assertEqual(check["result"], "fail", check)
            self.assertEqual(r.returncode, 1)
            self.assertIn("limited by", check.get("detail", ""))


    def test_round_robin_reads_the_same_in_every_command(self):
        # One baseline, one figure: plan's round-robin, analyze's rr-name pattern and routing's check
        # of the scanned tables are the same exchange (these hosts in this order, base LIDs). Their
        # time and efficiency agree, and agree with round-robin built and timed here from the
        # stored routes. A shuffled tree with a missing and a narrowed cable, LMC 2, hosts given out
        # of name order.
        topo = generate(self.path("rr.topo"), "--leaves", "6", "--down", "8", "--up", "4", "--spines", "4", "--switch-ports", "12",
                        "--spine-ports", "6", "--shuffle", "--seed", "11", "--missing", "2")
        db = self.path("rr.db")
        with SimFabric(topo, lmc=2) as sim:
            scan = ibroute_json("scan", "--db", db, sim=sim)["scan_id"]
        names = host_names(db, scan)
        random.Random(3).shuffle(names)
        names = names[:40]
        hosts = self.path("hosts.txt")
        with open(hosts, "w") as f:
            f.write("\n".join(names) + "\n")
        t, least, _ = efficiency(db, scan, round_robin(db, scan, names))
        plan = ibroute_json("plan", "--db", db, "--name", "rr", "--hosts", "@" + hosts)["round_robin_base"]
        analyzed = ibroute_json("analyze", "--db", db, "--hosts", "@" + hosts, "--patterns", "rr-name", "--lids", "base")
        rr = next(p for p in analyzed["patterns"] if p["pattern"] == "rr-name" and p["lids"] == "base")["efficiency"]
        routed = ibroute_json("routing", "--db", db, "--hosts", "@" + hosts, "--order", "given")["scanned_tables"]["efficiency"]
        self.assertIsNone(plan["sampled_phases"])
        self.assertLess(rr["value"], 0.9)  # an oversubscribed tree: round-robin is well below the least time
        for tag, e in (("plan", {"value": plan["efficiency"], "planned_time": plan["planned_time"]}), ("analyze", rr), ("routing", routed)):
            self.assertEqual(e["planned_time"], t, tag)
            self.assertAlmostEqual(e["value"], min(1.0, rr["least_time"] / t), places=9, msg=tag)
        self.assertEqual(rr["least_time"], routed["least_time"])
        self.assertGreaterEqual(rr["least_time"] + 1e-6, least)  # ibroute also counts links with no other path


class ThreeLevelsOnMinhopTables(TempDirTest):
    """OpenSM's minhop on a three-level tree at LMC 2 (the routing a new cluster gets, whose poor
    tables most need the test). In the shifts, a transfer's other DLIDs change up to four links at
    once, where the repair's ejection chains, which follow one blocking link, found nothing (48 of
    287 phases one above what the tables allow); the walk over the plateau brings every phase to
    the least its leaves' and pods' links allow, recomputed here from the stored routes. The whole
    plan (packed) keeps every link within the bound."""

    def test_every_phase_at_the_least_its_leaves_and_pods_allow(self):
        topo = gen_real(self.path("t.topo"), "three-level", "--pods", 4, "--pod-leaves", 8, "--pod-aggs", 4, "--down", 9, "--up", 4,
                        "--core-per-agg", 9)
        db = self.path("t.db")
        with SimFabric(topo, lmc=2, engine="minhop") as sim:
            scan = ibroute_json("scan", "--db", db, sim=sim)["scan_id"]
        names = host_names(db, scan)
        EfficiencyOnSimulatedFabrics.plan_and_check(self, db, scan, "all", hosts=names, at_least=0.95)
        shifts = ibroute_json("plan", "--db", db, "--name", "shifts", "--shifts-only")
        out = self.path("shifts.json")
        ibroute("export", "--db", db, "--schedule", "shifts", "-o", out)
        with open(out) as f:
            doc = json.load(f)
        check_all_to_all(doc)
        r = Routes(db, scan)
        hosts = [r.ports[h["port_guid"]] for h in doc["hosts"]]
        groups = tree_groups(r)
        self.assertEqual(len(set(groups[2].values())), 4, "four pods read from the cabling")
        above = []
        for k, phase in enumerate(phases_of(doc)):
            load = phase_link_loads(r, hosts, phase)
            worst = max((c for link, c in load.items() if r.switch_link(*link)), default=0)
            bound = phase_group_bound(r, hosts, phase, groups)
            self.assertGreaterEqual(worst, bound, f"phase {k}: the bound is a bound")
            if worst > bound:
                above.append((k, worst, bound))
        self.assertEqual(above, [], "phases above what their leaves' and pods' links allow")
        # The planner's own per-phase bound says the same.
        self.assertEqual(shifts["lower_bound"]["worst"], shifts["max_load"], shifts["lower_bound"])

if __name__ == "__main__":
    unittest.main()
