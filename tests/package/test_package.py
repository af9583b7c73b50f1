"""The Debian package as an admin gets it: built by CPack, unpacked into a clean root, and the
installed tool run from there: --version, an offline import, plan, export; its man pages (one per
subcommand, every option in it) and its bash completion. And as a DAQ developer gets it: the
example peer built with find_package(ibroute) against that root reads the demo's schedule and
slices and agrees with `ibroute export --format csv`.

Environment: IBROUTE_BUILD (the CMake build directory), IBROUTE_SOURCE (the source tree)."""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
from simfabric import SimFabric  # noqa: E402

BUILD = os.environ["IBROUTE_BUILD"]
SOURCE = os.environ["IBROUTE_SOURCE"]
FIXTURES = os.path.join(SOURCE, "tests", "fixtures")


def run(*args, ok=(0,), **kw):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=600, **kw)
    if r.returncode not in ok:
        raise AssertionError(f"{' '.join(args)} exited {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout


class InstalledPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ibroute-pkg-")
        out = os.path.join(cls.tmp, "out")
        run("cpack", "-G", "DEB", "-B", out, cwd=BUILD)
        debs = glob.glob(os.path.join(out, "ibroute_*.deb"))
        if len(debs) != 1:
            raise AssertionError(f"expected one package in {out}, found {debs}")
        cls.deb = debs[0]
        cls.root = os.path.join(cls.tmp, "root")
        run("dpkg-deb", "-x", cls.deb, cls.root)
        cls.tool = os.path.join(cls.root, "usr", "bin", "ibroute")
        cls.commands = re.findall(r"^  (\w+) {2,}", run(cls.tool, "--help"), re.M)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_package_declares_its_runtime_dependencies(self):
        fields = run("dpkg-deb", "-f", self.deb, "Package", "Version", "Depends")
        self.assertIn("Package: ibroute", fields)
        for lib in ("libibnetdisc", "libibmad", "libsqlite3", "libgvc", "libibverbs", "libopenmpi"):
            self.assertIn(lib, fields, "Depends names every shared library the two executables load")

    def test_layout(self):
        for rel in ("usr/bin/ibroute", "usr/libexec/ibroute/ibroute-run", "usr/share/man/man1/ibroute.1",
                    "usr/share/bash-completion/completions/ibroute", "usr/share/doc/ibroute/schedule-format.md",
                    "usr/share/doc/ibroute/README.md", "usr/share/doc/ibroute/examples/hft96-shuffled.topo",
                    "usr/include/ibroute/peer.hpp", "usr/lib/libibroute-peer.so.0", "usr/lib/cmake/ibroute/ibrouteConfig.cmake",
                    "usr/share/doc/ibroute/examples/peer/node_transfers.cpp", "usr/share/doc/ibroute/schemas/schedule.schema.json",
                    "usr/share/doc/ibroute/schemas/run-report.schema.json", "usr/share/doc/ibroute/schemas/expectation.schema.json"):
            self.assertTrue(os.path.exists(os.path.join(self.root, rel)), rel)
        tests = [p for p in glob.glob(os.path.join(self.root, "usr", "**"), recursive=True) if "test" in os.path.basename(p)]
        self.assertEqual(tests, [], "no test or benchmark binaries in the package")

    def test_installed_tool_imports_plans_and_exports(self):
        self.assertRegex(run(self.tool, "--version").strip(), r"^ibroute \d+\.\d+\.\d+$")
        db = os.path.join(self.tmp, "fabric.db")
        # A real dump with the tools' own error lines in it: stored, and exit 3 says it is incomplete.
        scan = json.loads(run(self.tool, "scan", "--db", db, "--topology", os.path.join(FIXTURES, "mixed-vendors.topo"),
                              "--lfts", os.path.join(FIXTURES, "mixed-vendors.lfts"), "--json", ok=(0, 3)))
        self.assertEqual(scan["ibroute_version"], run(self.tool, "--version").split()[1], "--json names the version that wrote it")
        plan = json.loads(run(self.tool, "plan", "--db", db, "--name", "a2a", "--json"))
        self.assertGreaterEqual(plan["hosts"], 2)
        out = os.path.join(self.tmp, "a2a.json")
        run(self.tool, "export", "--db", db, "--schedule", "a2a", "-o", out)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["format"], "ibroute-schedule")
        self.assertEqual(len(doc["hosts"]), plan["hosts"])
        # `ibroute run` finds its runner under ../libexec/ibroute: the runner itself answers
        # (it refuses to run outside srun/mpirun, or the missing schedule), not "not installed".
        r = subprocess.run([self.tool, "run", "--db", db, "--schedule", "nonexistent"], capture_output=True, text=True, timeout=120)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("is not installed", r.stderr)

    def test_a_man_page_per_subcommand_naming_every_option(self):
        self.assertGreaterEqual(len(self.commands), 10)
        man1 = os.path.join(self.root, "usr", "share", "man", "man1")
        for cmd in self.commands:
            with open(os.path.join(man1, f"ibroute-{cmd}.1")) as f:
                page = f.read().replace("\\-", "-")
            for section in (".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS", ".SH EXIT STATUS", ".SH FILES"):
                self.assertIn(section, page, f"ibroute-{cmd}.1")
            options = set(re.findall(r"(?<![\w-])(--[a-zA-Z][\w-]*)", run(self.tool, cmd, "--help").split("\n\n", 2)[-1].split("Options:")[-1]))
            for opt in options:
                self.assertIn(opt, page, f"ibroute-{cmd}.1 names {opt}")
            # Every example uses only options the command has (they are in --help and the page).
            examples = page.split(".SH EXAMPLES", 1)[1].split(".SH", 1)[0] if ".SH EXAMPLES" in page else ""
            self.assertIn(f"ibroute {cmd}", examples, f"ibroute-{cmd}.1 has examples")
            for line in examples.splitlines():
                if f"ibroute {cmd}" in line:
                    for opt in re.findall(r"(?<![\w-])(--[a-zA-Z][\w-]*)", line.split(f"ibroute {cmd}", 1)[1].split("#")[0]):
                        self.assertIn(opt, options, f"example of {cmd}: {line}")
        self.assertTrue(shutil.which("man"), "man is missing: scripts/deps.sh installs man-db")
        text = run("man", "-l", "-P", "cat", os.path.join(man1, "ibroute-plan.1"), env={**os.environ, "MANWIDTH": "100"})
        self.assertIn("--hosts", text)

    def test_bash_completes_subcommands_and_options(self):
        script = os.path.join(self.root, "usr", "share", "bash-completion", "completions", "ibroute")

        def complete(*words):
            cmd = (f"source {script}; COMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1}; _ibroute; "
                   'printf "%s\\n" "${COMPREPLY[@]}"')
            return run("bash", "-c", cmd).split()

        self.assertEqual(complete("ibroute", "pl"), ["plan"])
        self.assertEqual(set(complete("ibroute", "")) - {"--help", "--version"}, set(self.commands))
        self.assertEqual(set(complete("ibroute", "plan", "--me")), {"--message-size", "--method"})
        self.assertIn("--topology", complete("ibroute", "scan", "--"))

    def test_example_peer_built_against_the_package_agrees_with_export(self):
        # The demo's steps with the installed tool: scan the simulated hft96 fabric, plan, export
        # the whole schedule, one slice per node, and CSV.
        db, out = os.path.join(self.tmp, "demo.db"), os.path.join(self.tmp, "demo")
        with SimFabric(os.path.join(SOURCE, "examples", "hft96-shuffled.topo"), lmc=2) as sim:
            sim.run([self.tool, "scan", "--db", db], timeout=300)
        run(self.tool, "plan", "--db", db, "--name", "demo")
        whole, slices = out + "-schedule.json", out + "-slices"
        run(self.tool, "export", "--db", db, "--schedule", "demo", "-o", whole, "--per-node", slices)
        csv_rows = run(self.tool, "export", "--db", db, "--schedule", "demo", "--format", "csv").splitlines()[1:]
        with open(whole) as f:
            doc = json.load(f)
        slot, size = doc["timing"]["slot_s"], doc["timing"]["message_size"]
        # Where the phases differ in length (version 3), phase k starts after the slots of those before it.
        lengths = doc["timing"].get("phase_slots")
        starts = [0]
        for n in lengths or []:
            starts.append(starts[-1] + n)
        start = (lambda k: starts[k]) if lengths else (lambda k: k)
        # The installed example, configured against the unpacked root only.
        example = os.path.join(self.root, "usr", "share", "doc", "ibroute", "examples", "peer")
        build = os.path.join(self.tmp, "peer-build")
        run("cmake", "-S", example, "-B", build, f"-DCMAKE_PREFIX_PATH={self.root}/usr", "-DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF")
        run("cmake", "--build", build)
        exe = os.path.join(build, "node_transfers")
        self.assertIn("libibroute-peer.so.0", run("readelf", "-d", exe))

        def transfers(*args):
            lines = run(exe, *args).splitlines()
            self.assertEqual(lines[0], "direction,phase,peer,peer_name,dlid,offset_s,size")
            got = {"send": [], "receive": []}
            for line in lines[1:]:
                direction, phase, peer, name, dlid, offset, nbytes = line.split(",")
                self.assertAlmostEqual(float(offset), start(int(phase)) * slot, delta=1e-9 + 1e-7 * start(int(phase)) * slot)
                self.assertEqual(int(nbytes), size)
                got[direction].append((int(phase), int(peer), name, int(dlid)))
            return got

        hosts = doc["hosts"]
        want = {r: {"send": [], "receive": []} for r in range(len(hosts))}
        for row in csv_rows:  # phase,src,dst,src_name,dst_name,dlid,dlid_offset
            phase, src, dst, src_name, dst_name, dlid, _ = row.split(",")
            want[int(src)]["send"].append((int(phase), int(dst), dst_name, int(dlid)))
            want[int(dst)]["receive"].append((int(phase), int(src), src_name, int(dlid)))
        files = sorted(f for f in os.listdir(slices) if f.startswith("rank"))  # beside them: export's marker
        self.assertEqual(len(files), len(hosts))
        for rank, name in enumerate(files):
            self.assertTrue(name.startswith(f"rank{rank:05d}-"), name)
            self.assertEqual(transfers(os.path.join(slices, name)), want[rank], f"slice {name}")
        for rank in (0, len(hosts) // 2, len(hosts) - 1):  # the whole file, named three ways
            self.assertEqual(transfers(whole, str(rank)), want[rank])
            self.assertEqual(transfers(whole, hosts[rank]["port_guid"]), want[rank])
            self.assertEqual(transfers(whole, hosts[rank]["name"]), want[rank])
        self.assertEqual(sum(len(w["send"]) for w in want.values()), len(hosts) * (len(hosts) - 1))
        r = subprocess.run([exe, whole, "nosuchhost"], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stderr.strip()), (2, "node_transfers: no rank is 'nosuchhost'"))
        with open(whole) as src, open(os.path.join(self.tmp, "cut.json"), "w") as f:
            f.write(src.read()[:5000])
        r = subprocess.run([exe, f.name, "0"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cut.json: not valid JSON", r.stderr)


if __name__ == "__main__":
    unittest.main()
