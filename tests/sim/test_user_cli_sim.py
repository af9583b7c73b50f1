"""What a new user meets (ibsim + OpenSM, a director fabric whose hosts describe themselves as
'nodeX-YYY HCA-1'): hosts by hostname and Slurm ranges, the list of schedules, hints for typos, and
errors that name the problem in one line instead of leaking internals."""
import json
import os
import subprocess
import sys
import unittest

from common import EXAMPLES, TempDirTest, ibroute, ibroute_json
from simfabric import SimFabric, read_text, write_text


class NewUser(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.root = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ibroute-user-{os.getpid()}")
        os.makedirs(cls.root, exist_ok=True)
        cls.topo = os.path.join(cls.root, "dir.topo")
        subprocess.run([sys.executable, os.path.join(EXAMPLES, "gen_real_fabric.py"), "director", "--edges", "6", "--lines", "6",
                        "--spine-asics", "18", "--edge-hosts", "18", "-o", cls.topo], check=True, capture_output=True)
        cls.db = os.path.join(cls.root, "f.db")
        with SimFabric(cls.topo, lmc=1) as sim:
            ibroute_json("scan", "--db", cls.db, sim=sim)

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.root, ignore_errors=True)

    def one_line_error(self, *args, needle):
        r = ibroute(*args, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(needle, r.stderr)
        return r.stderr

    def test_hosts_by_hostname_and_slurm_ranges(self):
        # 108 hosts named node1-001 .. node2-008 HCA-1: ten by their hostnames as Slurm writes them.
        plan = ibroute_json("plan", "--db", self.db, "--hosts", "node1-[001-008], node1-010,node1-099", "--name", "ten")
        self.assertEqual(plan["hosts"], 10)
        out = self.path("ten.json")
        ibroute("export", "--db", self.db, "--schedule", "ten", "--format", "json", "-o", out)
        names = [h["name"] for h in json.loads(read_text(out))["hosts"]]
        self.assertEqual(names[:2], ["node1-001 HCA-1", "node1-002 HCA-1"])
        self.assertEqual(names[-1], "node1-099 HCA-1")
        # The same from a file, as `scontrol show hostnames` writes it (one per line).
        f = write_text(self.path("hosts.txt"), "".join(f"node2-00{i}\n" for i in range(1, 5)))
        self.assertEqual(ibroute_json("plan", "--db", self.db, "--hosts", "@" + f, "--name", "four")["hosts"], 4)
        self.one_line_error("plan", "--db", self.db, "--hosts", "node1-001,nobody", needle="unknown host 'nobody'")
        # A typo gets the names it is near: hostnames and full descriptions.
        self.one_line_error("plan", "--db", self.db, "--hosts", "node1-001,nod1-002", needle="did you mean 'node1-002'")
        self.one_line_error("routes", "--db", self.db, "--from", "node1-0011", "--to", "node1-002", needle="did you mean 'node1-001'")
        self.one_line_error("plan", "--db", self.db, "--hosts", "node1-[009-003]", needle="'009-003' is no range")

    def test_schedules_are_listed_and_named_when_missing(self):
        ibroute_json("plan", "--db", self.db, "--hosts", "node1-[001-004]", "--name", "small")
        listing = ibroute_json("schedules", "--db", self.db)
        self.assertIn("small", [s["name"] for s in listing["schedules"]])
        self.assertIn("ibroute_version", listing)
        text = ibroute("schedules", "--db", self.db).stdout
        self.assertTrue(text.startswith("id "), text)  # a header
        err = self.one_line_error("export", "--db", self.db, "--schedule", "nosuch", needle="no schedule named 'nosuch'")
        self.assertIn("small", err)

    def test_typos_get_a_hint(self):
        err = self.one_line_error("routse", "--db", self.db, needle="did you mean 'routes'")
        self.assertIn("unknown command 'routse'", err)
        self.one_line_error("analyze", "--db", self.db, "--pattern", "rr-name", needle="did you mean '--patterns'")

    def test_errors_name_the_problem_not_the_library(self):
        ibroute_json("plan", "--db", self.db, "--hosts", "node1-[001-004]", "--name", "e")
        afile = write_text(self.path("afile"), "x\n")
        self.one_line_error("export", "--db", self.db, "--schedule", "e", "--per-node", afile, needle="exists and is not a directory")
        csv = self.path("e.csv")
        ibroute("export", "--db", self.db, "--schedule", "e", "--format", "csv", "-o", csv)
        err = self.one_line_error("validate", "--db", self.db, csv, needle="a CSV export, not the JSON format")
        self.assertNotIn("json.exception", err)

    def test_help_says_the_exit_codes_everywhere(self):
        top = ibroute("--help").stdout
        listing = top.split("Subcommands:", 1)[1].split("\n\n", 1)[0]
        commands = [l.split()[0] for l in listing.splitlines() if l.startswith("  ")]
        self.assertIn("schedules", commands)
        for cmd in commands:
            with self.subTest(cmd):
                self.assertIn("Exit", ibroute(cmd, "--help").stdout)  # the exit codes, in its own footer or the general one
        usage = ibroute("diff", "--help").stdout
        self.assertIn("[SCAN_A] [SCAN_B]", usage)
        self.assertNotIn("(0x)", usage)

    def test_diff_of_a_scan_with_itself_exits_0(self):  # changed routes: exit 1, named (test_faults_sim)
        db = self.path("d.db")
        import shutil
        shutil.copyfile(self.db, db)
        same = ibroute("diff", "--db", db, "1", "1", check=False)
        self.assertEqual(same.returncode, 0, same.stderr)
        self.assertIn("no changes", same.stdout)

    def test_rates_in_bits_or_bytes(self):
        # 40 Gb/s = 40 Gbit/s = 5 GB/s = 5e9 bytes per second; GiB is binary; a unit it does not know
        # is refused with the forms it does.
        rates = {}
        for i, r in enumerate(("1Gb/s", "1 Gbit/s", "125MB/s", "125M", "1Gbps", "0.125GB/s")):
            rates[r] = ibroute_json("plan", "--db", self.db, "--hosts", "node1-[001-004]", "--rate", r, "--name", f"r{i}")["timing"]["rate"]
        for r, v in rates.items():
            self.assertAlmostEqual(v, 125e6, delta=125e6 * 1e-9, msg=r)
        # A rate without a unit could be bytes, bits or Gb/s: refused with the forms.
        err = self.one_line_error("plan", "--db", self.db, "--hosts", "node1-[001-004]", "--rate", "40", needle="has no unit")
        self.assertIn("40Gb/s", err)
        gib = ibroute_json("plan", "--db", self.db, "--hosts", "node1-[001-004]", "--rate", "0.1GiB/s", "--name", "gib")["timing"]["rate"]
        self.assertAlmostEqual(gib, 0.1 * 2 ** 30, delta=1e-9 * 2 ** 30)
        err = self.one_line_error("plan", "--db", self.db, "--rate", "5Q", needle="unknown unit 'Q'")
        self.assertIn("Gb/s", err)
        # A rate above what the fabric carries is echoed plainly (no "1e+03"), in bytes and bits.
        err = self.one_line_error("plan", "--db", self.db, "--hosts", "node1-[001-004]", "--rate", "1T", "--name", "t", needle="8000 Gb/s (1000 GB/s)")
        # Decimal only, and within what the database and the peers hold: refused before anything is
        # stored (hex, nan, a size of 1e16, a rate of 5e-300G, a slot of years), the schedules unchanged.
        before = len(ibroute_json("schedules", "--db", self.db)["schedules"])
        for args, needle in ((["--rate", "0x10G"], "unknown unit 'x10G'"), (["--rate", "0x1p3G"], "unknown unit"),
                             (["--message-size", "0x100"], "unknown unit 'x100'"), (["--rate", "nanG"], "not a decimal number"),
                             (["--rate", "infG"], "not a decimal number"), (["--message-size", "1e16"], "out of range (1 B .. 1 TiB)"),
                             (["--message-size", "999999999999999999"], "out of range"), (["--rate", "5e-300G"], "out of range (1 B/s .. 1 PB/s)"),
                             (["--rate", "1B/s", "--message-size", "1GiB"], "is too slow for 1073741824-byte messages")):
            self.one_line_error("plan", "--db", self.db, "--hosts", "node1-[001-004]", "--name", "refused", *args, needle=needle)
        self.assertEqual(len(ibroute_json("schedules", "--db", self.db)["schedules"]), before)
        self.one_line_error("routing", "--db", self.db, "--refine-work", "nan", needle="--refine-work: 'nan' is not a decimal number")
        # A host list read with a cap: /dev/zero is refused at 64 MiB, not after growing to gigabytes.
        self.one_line_error("plan", "--db", self.db, "--hosts", "@/dev/zero", "--name", "z", needle="/dev/zero is larger than 64 MiB")
        # A name stored and shown everywhere: no newline, no escape sequence.
        for name, byte in (("a\nb", 10), ("x\x1b[31m", 27)):
            self.one_line_error("plan", "--db", self.db, "--hosts", "node1-[001-004]", "--name", name, needle=f"a control character (byte {byte})")
        self.assertEqual(len(ibroute_json("schedules", "--db", self.db)["schedules"]), before)
        self.one_line_error("run", "--db", self.db, "--schedule", "t", "--drain", "-1", needle="--drain: '-1' is not a decimal number from 0 to 3600")

    def test_files_are_replaced_whole(self):
        """An export killed while it writes leaves the old file, or the new one whole; a temporary
        name planted as a symlink is not followed (routing -o, --ranks)."""
        import signal
        import time
        from common import IBROUTE
        ibroute("plan", "--db", self.db, "--name", "whole")
        out = os.path.join(self.root, "whole.csv")
        full = os.path.join(self.root, "full.csv")
        ibroute("export", "--db", self.db, "--schedule", "whole", "--format", "csv", "-o", full)
        with open(full) as f:
            new = f.read()
        outcomes = set()
        for delay in (0.0, 0.005, 0.01, 0.02, 0.05, 0.1):
            with open(out, "w") as f:
                f.write("old\n")
            p = subprocess.Popen([IBROUTE, "export", "--db", self.db, "--schedule", "whole", "--format", "csv", "-o", out],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            p.wait()
            with open(out) as f:
                got = f.read()
            self.assertIn(got, ("old\n", new), f"killed after {delay} s: a mix of {len(got)} bytes")
            outcomes.add(got == new)
        # Not killed: whole, and no temporary of its own left beside it (a killed one may leave its own).
        temporaries = lambda: {n for n in os.listdir(self.root) if n.startswith(".whole.csv.")}
        before = temporaries()
        ibroute("export", "--db", self.db, "--schedule", "whole", "--format", "csv", "-o", out)
        with open(out) as f:
            self.assertEqual(f.read(), new)
        self.assertEqual(temporaries(), before)
        planted = os.path.join(self.root, "victim.txt")
        with open(planted, "w") as f:
            f.write("keep\n")
        tables = os.path.join(self.root, "tables.dump")
        for name in (tables + ".tmp", tables + ".ranks.tmp"):
            os.symlink(planted, name)
        ibroute("routing", "--db", self.db, "-o", tables, "--ranks", tables + ".ranks")
        with open(planted) as f:
            self.assertEqual(f.read(), "keep\n")
        with open(tables) as f:
            self.assertTrue(f.read().startswith("# ibroute routing: scan"))

    def test_routes_to_a_lid_that_is_not_the_base(self):
        # LMC 1: every port owns two LIDs; --to with the second answers for that one.
        frm = ibroute_json("routes", "--db", self.db, "--from", "node1-001", "--to", "node1-002")
        base = frm["to"]["base_lid"]
        r = ibroute_json("routes", "--db", self.db, "--from", "node1-001", "--to", str(base + 1))
        self.assertEqual([x["dlid"] for x in r["routes"]], [base + 1])
        self.assertEqual(r["routes"][0]["offset"], 1)


if __name__ == "__main__":
    unittest.main()
