"""Any routing's tables used to the full (issue 53 item 3): real dumps of ../shared/realdata
replayed in ibsim and routed by OpenSM's engines at LMC 0 and 2, planned, exported; the plan's time
T recomputed from the exported file and the stored routes, and the least time the tables allow
recomputed here from the same routes (tests/sim/schedule_check.tables_route_bound: host links, and
per switch the sets of links that every route of a transfer leaves or enters it by), not by
ibroute. The plan is at least 0.9 of that bound, never shorter than what ibroute states the
tables allow, and LMC 2 never plans longer than LMC 0.

PSMN X5 mixes DDR hosts into a QDR fabric (every phase with a DDR host's transfer lasts two
slots); plafrim mixes SDR, DDR and QDR hosts and switch links, with one leaf of 27 hosts on a
single up-link and two DDR links that every route out of one switch takes.

A three-level tree of 2 304 hosts (8 pods of 16 leaves of 18 hosts, shuffled names) under OpenSM's
minhop at LMC 2 enters each pod over 39 of its 144 down-links: a shift brings a pod about 6.5
transfers per link, and each shift solved alone rounds up to 8 or 9 (0.81 of the tables). Its bound
is recomputed per pod (schedule_check.tables_pod_bound); the shifts in phases of 7 slots with the
few transfers that do not fit packed reach 0.9 of it. At LMC 0 each pair has one path and the
busiest link's total bounds every plan (schedule_check.worst_link_total); the shifts over a
scrambled order in phases shorter than the average, the excess packed, reach 0.9 of it."""
import collections
import os
import subprocess
import sys
import unittest

from common import EXAMPLES, TempDirTest, ibroute, ibroute_json
from realdata import dump, ports_report_to_topology
from schedule_check import check_all_to_all, efficiency, load_schedule, tables_pod_bound, tables_route_bound, worst_link_total
from simfabric import IBSIM_LIMITS, SimFabric

GEN = os.path.join(EXAMPLES, "gen_real_fabric.py")


class TablesUsedToTheFull(TempDirTest):
    def plan_on(self, topo, engine, lmc):
        tag = f"{engine}{lmc}"
        db = self.path(tag + ".db")
        with SimFabric(topo, lmc=lmc, engine=engine) as sim:
            scan = ibroute_json("scan", "--db", db, sim=sim)["scan_id"]
        plan = ibroute_json("plan", "--db", db, "--name", "p")
        out = self.path(tag + ".json")
        ibroute("export", "--db", db, "--schedule", "p", "--format", "json", "-o", out)
        doc = load_schedule(out)
        T, _, _ = efficiency(db, scan, doc)
        bound, why = tables_route_bound(db, scan, doc)
        stated = plan["efficiency"]["tables"]["least_time"]
        msg = f"{os.path.basename(topo)} {engine} LMC {lmc}: T {T}, tables allow {bound:.0f} ({why}), ibroute states {stated}"
        self.assertGreaterEqual(bound / T, 0.9, msg)
        self.assertLessEqual(stated, T + 1e-6, msg)  # a least time no plan can beat
        self.assertGreaterEqual(stated + 1e-6, bound, msg)  # ibroute's bound is no weaker than this one
        return T

    def check(self, topo, engines):
        for engine in engines:
            with self.subTest(engine=engine):
                at = {lmc: self.plan_on(topo, engine, lmc) for lmc in (0, 2)}
                self.assertLessEqual(at[2], at[0], f"{engine}: LMC 2 {at[2]} against LMC 0 {at[0]}")

    def test_ddr_hosts_on_a_qdr_fabric(self):
        self.check(dump("psmn-x5", "X5.topofile"), ("updn", "minhop", "dfsssp"))

    def test_sdr_ddr_and_qdr_mixed_with_a_leaf_on_one_up_link(self):
        text, _ = ports_report_to_topology(open(dump("hwloc-netloc", "plafrim", "ib-raw", "ib-subnet-fe80:0000:0000:0000.txt"),
                                                encoding="utf-8", errors="replace").read())
        topo = self.path("plafrim.topo")
        open(topo, "w").write(text)
        self.check(topo, ("updn", "dfsssp"))


class ThreeLevelDfsssp(TempDirTest):
    """OpenSM's dfsssp over three levels (9 pods of 16 leaves of 9 hosts, 8 aggregation switches
    per pod, 72 cores: 1 296 hosts), LMC 0 and 2: the plan at least 0.9 of the least time the
    tables allow, that bound the larger of the two counted here from the stored routes (per switch
    and per pod), and LMC 2 never longer than LMC 0."""

    def test_dfsssp_over_three_levels_at_lmc_0_and_2(self):
        topo = self.path("t1296.topo")
        subprocess.run([sys.executable, GEN, "three-level", "--pods", "9", "--pod-leaves", "16", "--pod-aggs", "8", "--down", "9",
                        "--up", "8", "--core-per-agg", "9", "-o", topo], check=True, capture_output=True)
        at = {}
        for lmc in (0, 2):
            db = self.path(f"d{lmc}.db")
            with SimFabric(topo, lmc=lmc, engine="dfsssp", ibsim_args=IBSIM_LIMITS) as sim:
                scan = ibroute_json("scan", "--db", db, sim=sim)["scan_id"]
            plan = ibroute_json("plan", "--db", db, "--name", "p")
            out = self.path(f"d{lmc}.json")
            ibroute("export", "--db", db, "--schedule", "p", "--format", "json", "-o", out)
            doc = load_schedule(out)
            check_all_to_all(doc)
            T, _, _ = efficiency(db, scan, doc)
            (bound, why) = max(tables_route_bound(db, scan, doc), tables_pod_bound(db, scan, doc))
            stated = plan["efficiency"]["tables"]["least_time"]
            msg = f"dfsssp LMC {lmc}: T {T}, tables allow {bound:.0f} ({why}), ibroute states {stated}, {plan['method']}"
            self.assertGreaterEqual(bound / T, 0.9, msg)
            self.assertLessEqual(stated, T + 1e-6, msg)
            self.assertGreaterEqual(stated + 1e-6, bound, msg)
            at[lmc] = T
        self.assertLessEqual(at[2], at[0], f"LMC 2 {at[2]} against LMC 0 {at[0]}")


class ThreeLevelMinhopInLongPhases(TempDirTest):
    def planned(self, lmc):
        """The 2 304-host tree under OpenSM's minhop at `lmc`, scanned, planned and exported:
        (plan --json, database, scan id, the exported document)."""
        topo = self.path("t2304.topo")
        subprocess.run([sys.executable, GEN, "three-level", "--pods", "8", "--pod-leaves", "16", "--pod-aggs", "8", "--down", "18",
                        "--up", "8", "--core-per-agg", "18", "-o", topo], check=True, capture_output=True)
        db = self.path("t.db")
        with SimFabric(topo, lmc=lmc, engine="minhop", ibsim_args=IBSIM_LIMITS) as sim:
            scan = ibroute_json("scan", "--db", db, sim=sim)["scan_id"]
        plan = ibroute_json("plan", "--db", db, "--name", "p")
        out = self.path("t.json")
        ibroute("export", "--db", db, "--schedule", "p", "--format", "json", "-o", out)
        doc = load_schedule(out)
        check_all_to_all(doc)
        return plan, db, scan, doc

    def test_a_pod_entered_over_few_links_is_planned_near_the_tables_least_time(self):
        plan, db, scan, doc = self.planned(2)
        T, _, _ = efficiency(db, scan, doc)
        bound, why = tables_pod_bound(db, scan, doc)
        shifts = next(t["slots"] for t in plan["solver"]["tried"] if t["name"] == "shifts")
        msg = f"T {T}, tables allow {bound:.0f} ({why}), ibroute states {plan['efficiency']['tables']['least_time']}, shifts {shifts}"
        self.assertGreaterEqual(bound / T, 0.9, msg)
        self.assertLess(T, shifts, msg)  # the shifts solved one by one: 0.81
        self.assertLessEqual(plan["efficiency"]["tables"]["least_time"], T + 1e-6, msg)
        self.assertGreaterEqual(plan["efficiency"]["tables"]["least_time"] + 1e-6, bound, msg)

    def test_one_path_per_pair_is_planned_near_the_busiest_links_total(self):
        # At LMC 0 the tables' least time is the busiest link's share of the exchange, counted
        # here from the stored routes of the DLIDs the file names. In LID order a shift brings the
        # busiest links 0 to 16 transfers; the scrambled shifts in short phases reach 0.95 (the
        # shifts in long phases: 0.74).
        plan, db, scan, doc = self.planned(0)
        totals = collections.Counter()
        T, _, _ = efficiency(db, scan, doc, totals)
        bound = worst_link_total(db, scan, doc, totals)
        shifts = next(t["slots"] for t in plan["solver"]["tried"] if t["name"] == "shifts")
        msg = f"T {T}, busiest link {bound:.0f}, ibroute states {plan['efficiency']['tables']['least_time']}, {plan['method']}"
        self.assertGreaterEqual(bound / T, 0.9, msg)
        self.assertLess(T, shifts, msg)
        self.assertAlmostEqual(plan["efficiency"]["tables"]["least_time"], bound, delta=1e-6 * bound, msg=msg)
        self.assertIn("scrambled", plan["method"], msg)


if __name__ == "__main__":
    unittest.main()
