"""Live scans of ibsim + OpenSM fabrics, checked route by route against ibtracert, and the
offline import of ibnetdiscover + dump_fts output of the same fabric checked for identical routes."""
import random
import unittest

from common import EXAMPLES, TempDirTest, db_rows, ibroute, ibroute_json, ibtracert
from simfabric import SimFabric, generate, write_text

SAMPLES = 200


class ScanAgainstIbtracert(TempDirTest):
    def check_fabric(self, topo, lmc, engine, expect_hosts):
        db = self.path("f.db")
        with SimFabric(topo, lmc=lmc, engine=engine) as sim:
            s = ibroute_json("scan", "--db", db, sim=sim)
            self.assertTrue(s["complete"], s["problems"])
            self.assertEqual(s["cas"], expect_hosts)
            self.assertEqual(s["lmc"], lmc)
            self.assertEqual(s["routes"]["total"], s["routes"]["ok"], s["routes"])
            scan = s["scan_id"]
            # Every CA port owns 2^LMC LIDs and every one of them has a route from every ingress switch.
            ca_lids = db_rows(db, "SELECT count(*) FROM lid l JOIN node n ON n.scan_id=l.scan_id AND n.idx=l.node_idx "
                                  "WHERE l.scan_id=? AND n.type='ca'", scan)[0][0]
            self.assertEqual(ca_lids, expect_hosts * (1 << lmc))

            sources = db_rows(db, "SELECT p.base_lid FROM port p JOIN node n ON n.scan_id=p.scan_id AND n.idx=p.node_idx "
                                  "WHERE p.scan_id=? AND n.type='ca' AND p.peer_node IS NOT NULL", scan)
            dlids = [r[0] for r in db_rows(db, "SELECT lid FROM lid WHERE scan_id=?", scan)]
            rng = random.Random(lmc * 7 + len(dlids))
            pairs = [(rng.choice(sources)[0], rng.choice(dlids)) for _ in range(SAMPLES)]
            for slid, dlid in pairs:
                with self.subTest(slid=slid, dlid=dlid):
                    mine = ibroute_json("routes", "--db", db, "--from", slid, "--to", dlid, "--lid",
                                        "base" if dlid == slid else dlid, sim=None)
                    route = mine["routes"][0]
                    self.assertEqual(route["dlid"], dlid)
                    self.assertEqual(route["status"], "ok")
                    hops = [(int(h["guid"], 16), h["out_port"]) for h in route["hops"]]
                    if hops and hops[-1][1] == 0:  # ends at a switch LID: ibtracert lists no out port there
                        hops = hops[:-1]
                    theirs, raw = ibtracert(sim, slid, dlid)
                    self.assertIsNotNone(theirs, raw)
                    to_itself = route["hops"][0]["out_port"] == 0  # a DLID of the source port's own range
                    self.assertEqual(len(theirs) == 0, to_itself, raw)
                    self.assertEqual(hops, theirs, f"ibtracert said:\n" + "\n".join(raw))

            # Offline: what admins keep (ibnetdiscover + dump_fts) gives the same fabric and routes.
            topo_txt, lft_txt = self.path("topo.txt"), self.path("lfts.txt")
            write_text(topo_txt, sim.run(["timeout", "60", "ibnetdiscover"]).stdout)
            write_text(lft_txt, sim.run(["timeout", "60", "dump_fts"]).stdout)
        off = ibroute_json("scan", "--db", db, "--topology", topo_txt, "--lfts", lft_txt)
        self.assertTrue(off["complete"], off["problems"])
        for k in ("switches", "cas", "links", "lmc", "lids", "routes"):
            self.assertEqual(off[k], s[k], k)
        d = ibroute_json("diff", "--db", db, scan, off["scan_id"])
        self.assertEqual(d["routes_compared"], s["routes"]["total"])
        self.assertEqual(d["routes_changed"], 0, d["route_examples"])
        self.assertTrue(d["identical"], d)

    def test_hft96_shuffled_lmc2_minhop(self):
        self.check_fabric(f"{EXAMPLES}/hft96-shuffled.topo", 2, "minhop", 96)

    def test_degraded_96_lmc4_updn(self):
        # 2 leaf-spine links missing, 3 links at 1x, host names shuffled, uplinks staggered.
        topo = generate(self.path("deg96.topo"), "--shuffle", "--seed", "5", "--missing", "2", "--narrow", "3",
                        "--stagger", "1")
        self.check_fabric(topo, 4, "updn", 96)

    def test_irregular_lmc0_updn(self):
        # 3 leaves of 12 ports, 2 spines, 20 hosts scattered over 30 ports (10 left empty).
        topo = generate(self.path("small.topo"), "--leaves", "3", "--down", "10", "--up", "2", "--spines", "2",
                        "--switch-ports", "12", "--spine-ports", "12", "--empty", "10", "--shuffle", "--seed", "11")
        self.check_fabric(topo, 0, "updn", 20)

    def test_hft864_shuffled_lmc4_minhop(self):
        self.check_fabric(f"{EXAMPLES}/hft864-shuffled.topo", 4, "minhop", 864)


if __name__ == "__main__":
    unittest.main()
