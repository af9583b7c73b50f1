"""Machines with several HCAs (DGX-class, rail-optimised cabling: leaf k of a group takes rail k of
each machine), replayed by ibsim and routed by OpenSM: scan and analyze count machines and rails as
the topology file says (counted here from the file), a machine's name on `plan --hosts` gives all
of its HCAs rail 0 first, "MACHINE/K" its rail K; the rail groups and a service leaf with fewer
up-links by design are told apart by their cabling; the plan is checked from the exported file
against the stored routes."""
import re
import unittest

from common import TempDirTest, ibroute, ibroute_json
from schedule_check import check_all_to_all, link_loads, load_schedule
from simfabric import SimFabric, generate, read_text

RAILS = 4


class Rails(TempDirTest):
    def test_machines_rails_and_machine_names_on_the_command_line(self):
        topo = generate(self.path("rails.topo"), "--leaves", 8, "--down", 4, "--up", 4, "--spines", 4, "--rails", RAILS,
                        "--switch-ports", 8, "--spine-ports", 10, "--mgmt-leaves", 1, "--shuffle", "--seed", 5)
        text = read_text(topo)
        hcas = re.findall(r'^Hca\s+\d+\s+"(\S+) (mlx5_\d+)"', text, re.M)
        services = re.findall(r'^Hca\s+\d+\s+"(\S+) HCA-1"', text, re.M)
        machines = {}
        for m, dev in hcas:
            machines.setdefault(m, []).append(dev)
        self.assertEqual(len(machines), 8)
        self.assertTrue(all(len(v) == RAILS for v in machines.values()))
        db = self.path("rails.db")
        with SimFabric(topo, lmc=0, engine="ftree") as sim:
            scan = ibroute_json("scan", "--db", db, sim=sim)
        a = ibroute_json("analyze", "--db", db)
        for m in (scan["machines"], a["machines"]):
            self.assertEqual(m["count"], len(machines) + len(services))
            self.assertEqual(m["hcas"], len(hcas) + len(services))
            self.assertEqual(m["machines_by_hcas"], {str(RAILS): len(machines), "1": len(services)})
            self.assertEqual(m["rails"], RAILS)
            self.assertEqual(m["hcas_without_machine"], 0)
        # The rail groups as cabled (leaf k of each group of RAILS leaves takes rail k), the service
        # leaf with its 2 up-links by design a class apart: no missing link, 1:1 over the compute leaves.
        st = a["structure"]
        self.assertEqual(len(st["rail_groups"]), 8 // RAILS)
        self.assertTrue(all(g["rails"] == RAILS and g["machines"] == 4 for g in st["rail_groups"]), st["rail_groups"])
        self.assertEqual(sorted(x for g in st["rail_groups"] for x in g["leaves"]), [f"ibswitch{i:02d}" for i in range(1, 9)])
        self.assertEqual(st["other_leaves"], ["ibmgmt01"])
        self.assertEqual(st["missing"], [])
        self.assertEqual(st["oversubscription"], 1.0)
        text_out = ibroute("analyze", "--db", db).stdout
        self.assertIn(f"rail groups         {8 // RAILS} ", text_out)
        self.assertIn("other leaves        1 ", text_out)

        two = sorted(machines)[:2]
        ibroute("plan", "--db", db, "--name", "m", "--hosts", ",".join(two))
        out = self.path("m.json")
        ibroute("export", "--db", db, "--schedule", "m", "--format", "json", "-o", out)
        doc = load_schedule(out)
        self.assertEqual([h["name"] for h in doc["hosts"]], [f"{m} mlx5_{k}" for m in two for k in range(RAILS)])
        check_all_to_all(doc)
        _, statuses = link_loads(db, scan["scan_id"], doc)
        self.assertEqual(set(statuses), {0}, "every planned transfer has an ok route")

        ibroute("plan", "--db", db, "--name", "r", "--hosts", f"{two[0]}/2,{two[1]}/3")
        ibroute("export", "--db", db, "--schedule", "r", "--format", "json", "-o", self.path("r.json"))
        self.assertEqual([h["name"] for h in load_schedule(self.path("r.json"))["hosts"]],
                         [f"{two[0]} mlx5_2", f"{two[1]} mlx5_3"])
        r = ibroute("plan", "--db", db, "--name", "x", "--hosts", f"{two[0]}/{RAILS},{two[1]}", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn(f"unknown host '{two[0]}/{RAILS}'", r.stderr)


if __name__ == "__main__":
    unittest.main()
