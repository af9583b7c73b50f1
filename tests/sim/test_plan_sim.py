"""analyze -> plan -> export -> validate on ibsim + OpenSM fabrics, with the schedules checked
independently against the database's stored routes."""
import json
import os
import random
import signal
import subprocess
import time
import unittest

from common import EXAMPLES, IBROUTE, TempDirTest, db_rows, ibroute, ibroute_json
from schedule_check import check_all_to_all, check_groups, explicit, link_loads, load_schedule, phases_of, slice_transfers
from simfabric import SimFabric, generate, read_text, write_text


def missing_pairs(topo):
    """(leaf, spine) pairs the generator left out, from its header comment and the cabling."""
    text = read_text(topo)
    return int(text.splitlines()[1].split(";")[1].split()[0])


class PlanOnSimulatedFabrics(TempDirTest):
    def pipeline(self, topo, lmc, engine, expect_free, hosts=None, shifts_only=False):
        db = self.path("shifts.db" if shifts_only else "f.db")
        with SimFabric(topo, lmc=lmc, engine=engine) as sim:
            scan = ibroute_json("scan", "--db", db, sim=sim)["scan_id"]
        a = ibroute_json("analyze", "--db", db, "--samples", "3")
        st = a["structure"]
        self.assertTrue(st["two_level"])
        self.assertEqual(st["transfer_bound"], 2)
        self.assertEqual(len(st["missing"]), missing_pairs(topo))
        by = {(p["pattern"], p["lids"]): p for p in a["patterns"]}
        self.assertIn(("rr-name", "base"), by)

        args = ["plan", "--db", db, "--name", "p1"] + (["--hosts", ",".join(hosts)] if hosts else []) + (["--shifts-only"] if shifts_only else [])
        plan = ibroute_json(*args)
        out = self.path("p1.json")
        ibroute("export", "--db", db, "--schedule", "p1", "--format", "json", "-o", out)
        doc = load_schedule(out)
        check_all_to_all(doc)
        self.assertEqual(doc["fabric"]["scan_id"], scan)
        self.assertEqual(doc["fabric"]["lmc"], lmc)
        maxima, statuses = link_loads(db, scan, doc)
        self.assertEqual(set(statuses), {0}, "every planned transfer has an ok route")
        self.assertEqual(max(maxima), plan["max_load"])  # the planner's own report agrees with the DB
        on_ring = isinstance(doc["phases"], dict) and doc["phases"]["encoding"] == "ring"
        if on_ring:
            self.assertEqual(doc["version"], 3)
            # Shifts over a ring of other places than the ranks', or round-robin in topology order
            # where that beats the plan (plan never returns less than it).
            self.assertTrue("ring" in plan["method"] or plan["method"] == "round-robin in topology order", plan["method"])
        elif doc["version"] == 3 and len(phases_of(doc)) >= len(doc["hosts"]):  # waiting transfers packed apart
            self.assertIn("packed", plan["method"])
            self.assertTrue(all(m <= 1 for m in maxima), maxima)  # one transfer per link in every phase
        if expect_free:
            self.assertTrue(all(m <= 2 for m in maxima), maxima)  # the bound in every phase
            self.assertEqual(plan["congested"], 0)
            self.assertEqual(plan["phases_over_bound"], 0)
        else:
            self.assertGreater(plan["max_load"], 2)
            self.assertTrue(plan["over"], "links over the bound are reported")
        # The lower bound (from the tables, independent of the planner's choices) is never above it.
        self.assertLessEqual(plan["lower_bound"]["worst"], plan["max_load"])
        # Never worse than round-robin with base LIDs in the same order.
        self.assertLessEqual(plan["max_load"], plan["round_robin_base"]["max_load"])
        v = ibroute("validate", "--db", db, out, "--json", check=False)
        vj = json.loads(v.stdout)
        checks = {c["check"]: c["ok"] for c in vj["checks"]}
        self.assertTrue(checks["fabric"] and checks["all_to_all"] and checks["dlids"] and checks["routes"], vj)
        self.assertEqual(checks["congestion"], expect_free)
        self.assertEqual(v.returncode, 0 if expect_free else 1)
        # Round trip: what validate read is what export wrote.
        ibroute("export", "--db", db, "--schedule", "p1", "--format", "json", "-o", self.path("again.json"))
        self.assertEqual(read_text(out), read_text(self.path("again.json")))
        return db, plan, a

    def test_hft96_shuffled_lmc2_minhop(self):
        db, plan, a = self.pipeline(f"{EXAMPLES}/hft96-shuffled.topo", 2, "minhop", True)
        by = {(p["pattern"], p["lids"]): p for p in a["patterns"]}
        self.assertGreater(by[("rr-name", "base")]["max_load"], 2)
        self.assertGreater(by[("rr-name", "base")]["congested_share"], 0.2)

    def test_hft96_lmc4_updn_subset(self):
        with open(f"{EXAMPLES}/hft96-shuffled.topo") as f:
            names = sorted({l.split('"')[1] for l in f if l.startswith("Hca")})
        subset = [n for i, n in enumerate(names) if i % 10 != 7]  # 90 %, in name order
        self.pipeline(f"{EXAMPLES}/hft96-shuffled.topo", 4, "updn", True, hosts=subset)

    def test_lmc0_has_no_choice(self):
        # In the shifts no DLID can be chosen: over the bound. The phases must avoid the overload
        # themselves: the busy leaves' excess waiting (one transfer per link, more phases) or the
        # shifts of another order (a ring over the same ranks), whichever is shorter.
        self.pipeline(f"{EXAMPLES}/hft96-shuffled.topo", 0, "minhop", False, shifts_only=True)
        db, plan, a = self.pipeline(f"{EXAMPLES}/hft96-shuffled.topo", 0, "minhop", True)
        self.assertTrue(any(w in plan["method"] for w in ("packed", "ring", "round-robin")), plan["method"])
        self.assertGreaterEqual(plan["efficiency"]["value"], 0.9)

    def test_two_percent_links_missing(self):
        topo = generate(self.path("deg.topo"), "--shuffle", "--seed", "7", "--missing", "1")  # 1 of 48 leaf-spine links
        db, plan, a = self.pipeline(topo, 4, "minhop", False, shifts_only=True)
        self.assertEqual(plan["max_load"], 3)  # one leaf lost a quarter of its up-links: 3 is the least possible
        self.assertEqual(plan["lower_bound"]["worst"], 3)  # and the lower bound proves it
        self.assertRegex(plan["lower_bound"]["where"], r"transfers (leave|enter) over \d+ links")
        self.assertRegex(plan["efficiency"]["limited_by"], r"up-links")  # that leaf is the bottleneck of the exchange
        # Packed: that leaf's excess waits, every phase within one transfer per link.
        db, packed, a = self.pipeline(topo, 4, "minhop", True)
        self.assertGreater(packed["efficiency"]["value"], plan["efficiency"]["value"])
        self.assertGreaterEqual(packed["efficiency"]["value"], 0.9)

    def test_hft864_shuffled_lmc4(self):
        db, plan, a = self.pipeline(f"{EXAMPLES}/hft864-shuffled.topo", 4, "minhop", True)
        by = {(p["pattern"], p["lids"]): p for p in a["patterns"]}
        self.assertEqual(by[("rr-topo", "base")]["max_load"], 2)
        self.assertGreaterEqual(by[("rr-name", "base")]["max_load"], 6)

    def test_per_node_slices(self):
        db = self.path("f.db")
        with SimFabric(f"{EXAMPLES}/hft96-shuffled.topo", lmc=2) as sim:
            ibroute("scan", "--db", db, sim=sim)
        ibroute("plan", "--db", db, "--name", "p")
        d = self.path("slices")
        ibroute("export", "--db", db, "--schedule", "p", "--per-node", d)
        files = sorted(f for f in os.listdir(d) if f.startswith("rank"))
        self.assertEqual(len(files), 96)
        # Nothing but the slices, their host table and the marker.
        self.assertEqual(sorted(os.listdir(d)), sorted(files + [".ibroute-slices", "hosts.json"]))
        # A smaller schedule into the same folder: the older slices go, no stale slice stays beside the new.
        ibroute("plan", "--db", db, "--hosts", ",".join(json.loads(ibroute("export", "--db", db, "--schedule", "p").stdout)["hosts"][i]["name"]
                                                           for i in range(4)), "--name", "p4")
        ibroute("export", "--db", db, "--schedule", "p4", "--per-node", d)
        self.assertEqual(len([f for f in os.listdir(d) if f.startswith("rank")]), 4)
        # A folder with someone else's file: refused in one line, nothing deleted.
        other = self.path("other")
        os.makedirs(other)
        write_text(os.path.join(other, "notes.txt"), "mine\n")
        r = ibroute("export", "--db", db, "--schedule", "p4", "--per-node", other, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("export did not write (e.g. notes.txt)", r.stderr)
        self.assertEqual(os.listdir(other), ["notes.txt"])
        ibroute("export", "--db", db, "--schedule", "p", "--per-node", d)
        files = sorted(f for f in os.listdir(d) if f.startswith("rank"))
        whole = json.loads(ibroute("export", "--db", db, "--schedule", "p").stdout)
        with open(os.path.join(d, files[5])) as f:
            s = json.load(f)
        r = s["rank"]
        with open(os.path.join(d, "hosts.json")) as f:
            table = json.load(f)
        self.assertEqual(table["hosts"], whole["hosts"])  # the peers' identities, once for all slices
        self.assertEqual((s["host"], s["hosts_count"], s["phases"]), (whole["hosts"][r], len(whole["hosts"]), len(phases_of(whole))))
        self.assertNotIn("hosts", s)
        mine = [t for k, ph in enumerate(phases_of(whole)) for t in ph if t["src"] == r]
        self.assertEqual([(t["dst"], t["dlid"]) for t in slice_transfers(s, "sends")], [(t["dst"], t["dlid"]) for t in mine])
        self.assertEqual(len(slice_transfers(s, "receives")), 95)
        # Compact: the node's own columns, no host table in each (issue 29: 235 KB per slice at 864 hosts before).
        sizes = [os.path.getsize(os.path.join(d, f)) for f in files]
        self.assertLess(max(sizes), 3000, "96 hosts: two columns of 95 ranks and DLIDs, and a header")
        # Replaced whole: an export killed at any moment leaves the 96 slices of p or the 4 of p4
        # (the marker names which), never a mix; what a killed export built beside it is hidden.
        for k in range(12):
            src = "p4" if k % 2 == 0 else "p"
            proc = subprocess.Popen([IBROUTE, "export", "--db", db, "--schedule", src, "--per-node", d], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(random.uniform(0, 0.08))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            with open(os.path.join(d, ".ibroute-slices")) as f:
                named = f.read().split()[3].rstrip(",")
            ranks = [f for f in os.listdir(d) if f.startswith("rank")]
            self.assertEqual(len(ranks), {"p": 96, "p4": 4}[named], (k, named, len(ranks)))
            with open(os.path.join(d, "hosts.json")) as f:
                self.assertEqual(len(json.load(f)["hosts"]), len(ranks))
        self.assertEqual(sorted(os.listdir(d)), sorted([f for f in os.listdir(d) if f.startswith("rank")] + [".ibroute-slices", "hosts.json"]))
        # Replaced whole, so never the directory one stands in.
        r = subprocess.run([IBROUTE, "export", "--db", db, "--schedule", "p4", "--per-node", "."], cwd=d, capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("a directory of their own", r.stderr)


class PlanBadInput(TempDirTest):
    @classmethod

    def setUpClass(cls):
        import tempfile
        cls._dir = tempfile.TemporaryDirectory(prefix="ibroute-plan-")
        cls.db = os.path.join(cls._dir.name, "f.db")
        cls.other = os.path.join(cls._dir.name, "other.db")
        with SimFabric(f"{EXAMPLES}/hft96-shuffled.topo", lmc=2) as sim:
            ibroute("scan", "--db", cls.db, sim=sim)
            ibroute("plan", "--db", cls.db, "--name", "p", "--shifts-only")  # the compact file (version 2)
            sim.console('Unlink "ibswitch05"[10]')
            ibroute("scan", "--db", cls.db, sim=sim)  # the routing of "today": a cable gone
        other = os.path.join(cls._dir.name, "other.topo")
        generate(other, "--leaves", "4", "--down", "4", "--up", "2", "--spines", "2", "--seed", "9")
        with SimFabric(other, lmc=2) as sim:
            ibroute("scan", "--db", cls.other, sim=sim)
        cls.file = os.path.join(cls._dir.name, "p.json")
        ibroute("export", "--db", cls.db, "--schedule", "p", "-o", cls.file)

    @classmethod
    def tearDownClass(cls):
        cls._dir.cleanup()

    def one_error(self, args, code, needle):
        r = ibroute(*args, check=False)
        self.assertEqual(r.returncode, code, r.stdout + r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(needle, lines[0])
        return r

    def test_unknown_host(self):
        self.one_error(["plan", "--db", self.db, "--scan", "1", "--hosts", "node1-001,node9-999"], 2, "unknown host 'node9-999'")

    def test_impossible_rate(self):
        r = self.one_error(["plan", "--db", self.db, "--scan", "1", "--rate", "20G"], 2, "more than the fabric carries")
        self.assertIn("at most", r.stderr)
        self.assertEqual(len(ibroute_json("scans", "--db", self.db)["scans"]), 2)

    def test_schedule_of_another_fabric(self):
        r = self.one_error(["validate", "--db", self.other, self.file], 1, "fabric")
        self.assertIn("FAIL", r.stdout)

    def test_schedule_against_changed_routing(self):
        ok = ibroute("validate", "--db", self.db, "--scan", "1", self.file)
        self.assertIn("ok", ok.stdout)
        r = self.one_error(["validate", "--db", self.db, "--scan", "2", self.file], 1, "routes")
        self.assertIn("no working route", r.stderr)

    def test_corrupted_and_truncated_files(self):
        text = read_text(self.file)
        cut = self.path("cut.json")
        with open(cut, "w") as f:
            f.write(text[: len(text) // 2])
        self.one_error(["validate", "--db", self.db, cut], 2, "not valid JSON")
        bad = self.path("bad.json")
        doc = json.loads(text)  # compact (version 2): a damaged offset line is named
        doc["phases"]["offsets"][3] = doc["phases"]["offsets"][3][:-1] + "x"
        with open(bad, "w") as f:
            json.dump(doc, f)
        self.one_error(["validate", "--db", self.db, bad], 2, "/phases/offsets/3 (sender 95): 'x' is not a hex digit")
        doc = explicit(json.loads(text))  # version 1: every transfer an object, still read
        with open(bad, "w") as f:
            json.dump(doc, f)
        self.assertIn("ok", ibroute("validate", "--db", self.db, "--scan", "1", bad).stdout)
        doc["phases"][3][0]["dst"] = 5000
        with open(bad, "w") as f:
            json.dump(doc, f)
        self.one_error(["validate", "--db", self.db, bad], 2, "rank out of range")
        doc = json.loads(text)
        doc["version"] = 7
        with open(bad, "w") as f:
            json.dump(doc, f)
        self.one_error(["validate", "--db", self.db, bad], 2, "format version 7")
        doc = explicit(json.loads(text))
        doc["phases"][3][0]["dst"], doc["phases"][3][1]["dst"] = doc["phases"][3][1]["dst"], doc["phases"][3][0]["dst"]
        doc["phases"][4][0]["dst"] = doc["phases"][3][0]["dst"]
        with open(bad, "w") as f:
            json.dump(doc, f)
        self.one_error(["validate", "--db", self.db, "--scan", "1", bad], 1, "all_to_all")

    def test_unknown_schedule_and_names(self):
        self.one_error(["export", "--db", self.db, "--schedule", "nope"], 2, "no schedule named 'nope'")
        self.one_error(["plan", "--db", self.db, "--scan", "1", "--name", "p"], 2, "exists")
        self.one_error(["plan", "--db", self.db, "--message-size", "1Q"], 2, "unknown unit")


if __name__ == "__main__":
    unittest.main()
