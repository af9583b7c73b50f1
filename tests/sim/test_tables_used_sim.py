"""Any routing's tables used to the full (issue 53 item 3): real dumps of ../shared/realdata
replayed in ibsim and routed by OpenSM's engines at LMC 0 and 2, planned, exported; the plan's time
T recomputed from the exported file and the stored routes, and the least time the tables allow
recomputed here from the same routes (tests/sim/schedule_check.tables_route_bound: host links, and
per switch the sets of links that every route of a transfer leaves or enters it by), not by
ibroute. The plan is at least 0.9 of that bound, never shorter than what ibroute states the
tables allow, and LMC 2 never plans longer than LMC 0.

PSMN X5 mixes DDR hosts into a QDR fabric (every phase with a DDR host's transfer lasts two
slots); plafrim mixes SDR, DDR and QDR hosts and switch links, with one leaf of 27 hosts on a
single up-link and two DDR links that every route out of one switch takes."""
import os
import unittest

from common import TempDirTest, ibroute, ibroute_json
from realdata import dump, ports_report_to_topology
from schedule_check import efficiency, load_schedule, tables_route_bound
from simfabric import SimFabric


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


if __name__ == "__main__":
    unittest.main()
