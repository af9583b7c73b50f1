"""The tool as an admin meets it, on the shuffled 96-host half fat-tree (ibsim +
OpenSM, LMC 2) scanned live with a node-name map. One way to name a host everywhere: every option
that takes hosts accepts a node description, a node-name-map name, a node GUID, a port GUID or a
LID (any of a port's 2^LMC), and a name two nodes carry is refused with both candidates. Progress
of long steps shows on a terminal (a pseudo-terminal here, through script(1)), never in a pipe."""
import json
import os
import shlex
import subprocess
import unittest

from common import EXAMPLES, TempDirTest, ibroute, ibroute_json
from simfabric import SimFabric


class HostNames(TempDirTest):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls._dir = tempfile.TemporaryDirectory(prefix="ibroute-names-")
        d = cls._dir.name
        cls.db = os.path.join(d, "fabric.db")
        with SimFabric(f"{EXAMPLES}/hft96-shuffled.topo", lmc=2) as sim:
            ibroute("scan", "--db", cls.db, sim=sim)
            ibroute("plan", "--db", cls.db, "--name", "all")
            out = os.path.join(d, "all.json")
            ibroute("export", "--db", cls.db, "--schedule", "all", "-o", out)
            with open(out) as f:
                cls.hosts = json.load(f)["hosts"]  # rank, name, node_guid, port_guid, base_lid, lmc
            # The admins' map: three DAQ inputs by role, and by mistake two nodes called "twin".
            h = cls.hosts
            cls.map = os.path.join(d, "node-name-map")
            with open(cls.map, "w") as f:
                for i, name in ((5, "daq-in-1"), (17, "daq-in-2"), (40, "daq-in-3"), (60, "twin"), (61, "twin")):
                    f.write(f'{h[i]["node_guid"]} "{name}"\n')
            ibroute("scan", "--db", cls.db, "--node-name-map", cls.map, sim=sim)

    @classmethod
    def tearDownClass(cls):
        cls._dir.cleanup()

    def forms(self):
        """Six hosts, each named another way, and the name the scan shows for each."""
        h = self.hosts
        named = [(h[1]["name"], h[1]), ("daq-in-2", h[17]), (h[3]["node_guid"], h[3]), (h[8]["port_guid"], h[8]),
                 (str(h[10]["base_lid"]), h[10]), (str(h[12]["base_lid"] + 3), h[12])]  # the 4th LID of its port
        return named

    def test_plan_takes_every_form_in_rank_order(self):
        named = self.forms()
        ibroute("plan", "--db", self.db, "--hosts", ",".join(n for n, _ in named), "--name", "forms", "--replace")
        out = os.path.join(self.tmp, "forms.json")
        ibroute("export", "--db", self.db, "--schedule", "forms", "-o", out)
        with open(out) as f:
            got = [x["port_guid"] for x in json.load(f)["hosts"]]
        self.assertEqual(got, [x["port_guid"] for _, x in named])

    def test_groups_analyze_and_routing_take_them_too(self):
        named = self.forms()
        senders, receivers = [n for n, _ in named[:3]], [n for n, _ in named[3:]]
        p = ibroute_json("plan", "--db", self.db, "--senders", ",".join(senders), "--receivers", ",".join(receivers),
                         "--name", "groups", "--replace")
        self.assertEqual((p["senders"], p["receivers"]), (3, 3))
        hosts_file = os.path.join(self.tmp, "hosts.txt")
        with open(hosts_file, "w") as f:
            f.write("\n".join(n for n, _ in named) + "\n")
        a = ibroute_json("analyze", "--db", self.db, "--hosts", "@" + hosts_file, "--patterns", "rr-name", "--no-fair-share")
        self.assertEqual(a["hosts"], len(named))
        r = ibroute_json("routing", "--db", self.db, "--hosts", "@" + hosts_file)
        self.assertEqual(r["hosts"], len(named))

    def test_routes_ends_take_every_form(self):
        h = self.hosts
        for a, b in ((h[3]["port_guid"], "daq-in-3"), (str(h[3]["base_lid"]), h[40]["node_guid"]), ("daq-in-1", h[40]["name"])):
            r = ibroute_json("routes", "--db", self.db, "--from", a, "--to", b)
            self.assertEqual(r["routes"][0]["status"], "ok", (a, b))

    def test_an_ambiguous_name_is_refused_with_its_candidates(self):
        h = self.hosts
        for args in (["plan", "--db", self.db, "--hosts", f"twin,{h[1]['name']}"], ["routes", "--db", self.db, "--from", "twin", "--to", "daq-in-1"],
                     ["analyze", "--db", self.db, "--hosts", f"{h[2]['name']},twin"]):
            r = ibroute(*args, check=False)
            self.assertEqual(r.returncode, 2, args)
            err = r.stderr.strip()
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn("'twin' names 2 nodes", err)
            for x in (h[60], h[61]):
                self.assertIn(x["node_guid"], err, "both candidates are listed with their GUIDs")

    def test_progress_on_a_terminal_and_not_in_a_pipe(self):
        from common import IBROUTE
        cmds = {"plan": [IBROUTE, "plan", "--db", self.db, "--name", "tty", "--replace"],
                "analyze": [IBROUTE, "analyze", "--db", self.db, "--patterns", "rr-name"],
                "export": [IBROUTE, "export", "--db", self.db, "--schedule", "all", "-o", os.path.join(self.tmp, "x.json"),
                           "--per-node", os.path.join(self.tmp, "slices")],
                "validate": [IBROUTE, "validate", "--db", self.db, os.path.join(self.tmp, "x.json")]}  # the file export wrote
        stages = {"plan": ["[plan]", "[evaluate]", "[lower bound]", "[round-robin]"], "analyze": ["[rr-name"], "export": ["[slices]"],
                  "validate": ["[reading the schedule]", "[evaluate]"]}
        for name, cmd in cmds.items():
            tty = subprocess.run(["script", "-qec", shlex.join(cmd), "/dev/null"], capture_output=True, text=True, timeout=300)
            self.assertEqual(tty.returncode, 0, tty.stdout[-2000:])
            for stage in stages[name]:
                self.assertIn(stage, tty.stdout, f"{name} on a terminal shows {stage}")
            self.assertRegex(tty.stdout, r"\d+/\d+  \d+ %")
            piped = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            self.assertEqual(piped.returncode, 0, piped.stderr)
            self.assertNotIn("\r", piped.stderr, f"{name} in a pipe: no progress")
            self.assertNotIn("[plan]", piped.stderr + piped.stdout)


if __name__ == "__main__":
    unittest.main()
