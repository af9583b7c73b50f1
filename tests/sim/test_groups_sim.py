"""Two-group plans (input nodes -> compute nodes) on ibsim + OpenSM fabrics: every sender to every
receiver once, each phase a partial matching, link loads recomputed from the database's routes
(not the planner's code) within the bound; the compact format round-trips and validates."""
import json
import os
import tempfile
import unittest

from common import EXAMPLES, TempDirTest, ibroute, ibroute_json
from schedule_check import check_groups, link_loads, load_schedule, phases_of, slice_transfers
from simfabric import SimFabric, read_text


def host_names(topo):
    with open(topo) as f:
        return sorted({l.split('"')[1] for l in f if l.startswith("Hca")})


class TwoGroups(TempDirTest):
    TOPO = f"{EXAMPLES}/hft96-shuffled.topo"
    LMC = 2

    @classmethod
    def setUpClass(cls):
        cls._dir = tempfile.TemporaryDirectory(prefix="ibroute-groups-")
        cls.db = os.path.join(cls._dir.name, "f.db")
        with SimFabric(cls.TOPO, lmc=cls.LMC) as sim:
            cls.scan = ibroute_json("scan", "--db", cls.db, sim=sim)["scan_id"]
        cls.names = host_names(cls.TOPO)

    @classmethod
    def tearDownClass(cls):
        cls._dir.cleanup()

    def plan(self, name, senders, receivers, *extra):
        files = []
        for label, group in (("s", senders), ("r", receivers)):
            files.append(self.path(f"{name}-{label}.txt"))
            with open(files[-1], "w") as f:
                f.write("\n".join(group) + "\n")
        # The shifts of the groups as given (what this suite checks; test_efficiency_sim covers the
        # interleaved and packed compositions).
        plan = ibroute_json("plan", "--db", self.db, "--name", name, "--senders", "@" + files[0], "--receivers", "@" + files[1],
                            "--shifts-only", *extra)
        self.assertEqual((plan["senders"], plan["receivers"]), (len(senders), len(receivers)))
        out = self.path(f"{name}.json")
        ibroute("export", "--db", self.db, "--schedule", name, "-o", out)
        doc = load_schedule(out)
        self.assertEqual(doc["version"], 3 if "phase_slots" in doc["timing"] else 2)
        names = [h["name"] for h in doc["hosts"]]
        self.assertEqual([names[r] for r in doc["groups"]["senders"]], senders)
        self.assertEqual([names[r] for r in doc["groups"]["receivers"]], receivers)
        check_groups(doc)
        self.assertEqual(len(phases_of(doc)), max(len(senders), len(receivers)))
        maxima, statuses = link_loads(self.db, self.scan, doc)
        self.assertEqual(set(statuses), {0}, "every planned transfer has an ok route")
        self.assertEqual(max(maxima), plan["max_load"])
        v = json.loads(ibroute("validate", "--db", self.db, out, "--json", check=False).stdout)
        checks = {c["check"]: c["ok"] for c in v["checks"]}
        self.assertTrue(checks["groups"] and checks["fabric"] and checks["dlids"] and checks["routes"], v)
        # Exported again: the same bytes.
        ibroute("export", "--db", self.db, "--schedule", name, "-o", self.path("again.json"))
        self.assertEqual(read_text(out), read_text(self.path("again.json")))
        return plan, doc, maxima, v

    def expect_bound(self, name, senders, receivers):
        plan, doc, maxima, v = self.plan(name, senders, receivers)
        self.assertTrue(all(m <= 2 for m in maxima), maxima)
        self.assertEqual(plan["congested"], 0)
        self.assertTrue(v["ok"], v)
        return plan, doc

    def test_disjoint_halves(self):
        n = len(self.names)
        self.expect_bound("halves", self.names[: n // 2], self.names[n // 2:])

    def test_one_to_three_and_three_to_one(self):
        q = len(self.names) // 4
        self.expect_bound("1to3", self.names[:q], self.names[q:])
        plan, doc = self.expect_bound("3to1", self.names[q:], self.names[:q])
        # Receivers that do not send have no sends in their slice.
        d = self.path("slices")
        ibroute("export", "--db", self.db, "--schedule", "3to1", "--per-node", d)
        files = sorted(f for f in os.listdir(d) if f.startswith("rank"))
        self.assertEqual(len(files), len(self.names))
        with open(os.path.join(d, files[-1])) as f:  # the last rank: a receiver (senders come first)
            s = json.load(f)
        self.assertIn(s["rank"], doc["groups"]["receivers"])
        self.assertNotIn(s["rank"], doc["groups"]["senders"])
        self.assertEqual(slice_transfers(s, "sends"), [])
        self.assertEqual(len(slice_transfers(s, "receives")), len(doc["groups"]["senders"]))

    def test_overlapping_groups(self):
        n = len(self.names)
        plan, doc = self.expect_bound("overlap", self.names[: 2 * n // 3], self.names[n // 3:])
        both = set(doc["groups"]["senders"]) & set(doc["groups"]["receivers"])
        self.assertEqual(len(both), n // 3)

    def test_bad_groups(self):
        for args, needle in ((["--senders", "nope", "--receivers", self.names[0]], "unknown host 'nope'"),
                             (["--senders", self.names[0]], "--senders and --receivers go together"),
                             (["--senders", self.names[0], "--receivers", self.names[1], "--all"], "exclude --hosts and --all"),
                             (["--senders", f"{self.names[0]},{self.names[0]}", "--receivers", self.names[1]], "twice")):
            r = ibroute("plan", "--db", self.db, *args, check=False)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(needle, r.stderr)


class TwoGroups864(TwoGroups):
    """The FLES shape: 432 input nodes to 432 compute nodes on the 864-host half fat-tree."""
    TOPO = f"{EXAMPLES}/hft864-shuffled.topo"
    LMC = 4

    def test_disjoint_halves(self):
        n = len(self.names)
        plan, doc = self.expect_bound("halves", self.names[: n // 2], self.names[n // 2:])

    # The 96-host class covers the other shapes and the errors.
    test_one_to_three_and_three_to_one = None
    test_overlapping_groups = None
    test_bad_groups = None


if __name__ == "__main__":
    unittest.main()
