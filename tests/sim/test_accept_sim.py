"""ibroute accept --simulate on ibsim + OpenSM fabrics: a healthy fabric passes; a link at 1x, an
unlinked link and LMC 0 make the right checks fail with the right values. The HTML report is
opened in headless Chromium and checked from the DOM it renders."""
import json
import os
import re
import shutil
import subprocess
import unittest

from common import EXAMPLES, TempDirTest, ibroute
from simfabric import SimFabric, generate

GEN = ["--leaves", "12", "--down", "8", "--up", "4", "--spines", "4", "--switch-ports", "12", "--spine-ports", "12",
       "--shuffle", "--seed", "96"]  # the 96-host half fat-tree of examples/hft96-shuffled.topo

EXPECT = {
    "topology": "two-level",
    "hosts": 96,
    "link_width": 4,
    "link_speed": "EDR",
    "lmc": 4,
    "max_broken_links": 0,
    "max_routing_imbalance": 1.5,
    "congestion_free": True,
    "min_rate_per_node": "5G",
    "max_skipped_share": 0.001,
    "max_clock_uncertainty_us": 1.0,
}


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class AcceptOnSimulatedFabrics(TempDirTest):
    def accept(self, topo, lmc=4, expect=None):
        """accept --rescan: it scans the simulated fabric itself (through the simulator's preload)."""
        db = self.path("f.db")
        exp = self.path("expect.json")
        with open(exp, "w") as f:
            json.dump(expect or EXPECT, f)
        report = self.path("report.html")
        with SimFabric(topo, lmc=lmc) as sim:
            r = ibroute("accept", "--rescan", "--db", db, "--expect", exp, "--simulate", "--report", report, "--json",
                        sim=sim, check=False)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual(j["accepted"], r.returncode == 0)
        self.assertEqual(j["fabric"]["scan_id"], 1, "the scan accept made")
        return {c["check"]: c for c in j["checks"]}, j, report

    def test_healthy_fabric_is_accepted_and_its_report_renders(self):
        checks, j, report = self.accept(os.path.join(EXAMPLES, "hft96-shuffled.topo"))
        failed = {k: c for k, c in checks.items() if c["result"] == "fail"}
        self.assertEqual(failed, {})
        self.assertTrue(j["accepted"])
        self.assertEqual(checks["hosts"]["measured"], 96)
        self.assertEqual(checks["congestion_free"]["result"], "pass")
        self.assertEqual(checks["skipped_transfers"]["result"], "not measured")  # simulated: no run
        self.assertGreaterEqual(j["rate_per_node"], 5e9)
        self.assertGreater(j["load"]["round_robin"]["max_load"], j["load"]["plan"]["max_load"])
        browser = chromium()
        if browser is None:
            self.fail("chromium is not installed (scripts/deps.sh installs it)")
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + report],
                             capture_output=True, text=True, timeout=120).stdout
        self.assertIn('id="verdict"', dom)
        rows = re.findall(r'<tr class="(pass|fail|skip)"><td>([a-z_]+)</td>', dom)
        self.assertEqual(len(rows), len(checks))
        self.assertEqual({name for _, name in rows}, set(checks))
        self.assertIn("ACCEPTED", re.search(r'id="verdict-line"[^>]*>([^<]*)<', dom).group(1))
        self.assertLess(dom.index('id="verdict"'), dom.index('id="fabric"'), "the verdict comes first")
        self.assertRegex(dom, r'<div class="fig" id="fabric"><svg')        # Graphviz picture, inline
        self.assertIn('<svg id="heatmap"', dom)                            # per-pair bandwidth
        self.assertEqual(dom.count('class="histogram"'), 1)                 # round-robin vs plan
        heat = dom[dom.index('<svg id="heatmap"'):]
        heat = heat[:heat.index("</svg>")]
        self.assertEqual(heat.count("<rect "), 96 * 96)  # one cell per (source, destination)
        self.assertIn('id="clock"', dom)

    def test_link_at_1x_fails_the_width_check(self):
        topo = generate(self.path("narrow.topo"), *GEN, "--narrow", "1")
        checks, j, _ = self.accept(topo)
        self.assertFalse(j["accepted"])
        self.assertEqual(checks["link_width"]["result"], "fail")
        self.assertTrue(checks["link_width"]["measured"].startswith("1 of "), checks["link_width"])
        self.assertIn("at 1x", checks["link_width"]["detail"])
        self.assertEqual(checks["link_speed"]["result"], "pass")
        self.assertEqual(checks["broken_links"]["result"], "pass")

    def test_unlinked_link_fails_the_broken_links_check(self):
        topo = generate(self.path("missing.topo"), *GEN, "--missing", "1")
        checks, j, _ = self.accept(topo)
        self.assertFalse(j["accepted"])
        self.assertEqual(checks["broken_links"]["result"], "fail")
        self.assertEqual(checks["broken_links"]["measured"], 1)
        self.assertEqual(checks["link_width"]["result"], "pass")
        # A leaf with 3 of 4 up-links cannot carry 8 hosts' traffic at 2 per link: over the bound.
        self.assertEqual(checks["congestion_free"]["result"], "fail")

    def test_lmc0_has_no_congestion_free_plan(self):
        expect = dict(EXPECT, lmc=0)
        checks, j, _ = self.accept(os.path.join(EXAMPLES, "hft96-shuffled.topo"), lmc=0, expect=expect)
        self.assertFalse(j["accepted"])
        self.assertEqual(checks["lmc"]["result"], "pass")
        self.assertEqual(checks["congestion_free"]["result"], "fail")
        worst = int(re.match(r"worst link (\d+)", checks["congestion_free"]["measured"]).group(1))
        self.assertGreater(worst, 2)
        self.assertEqual(checks["rate_per_node"]["result"], "fail", "congestion costs bandwidth")

    def test_bad_expectation_files(self):
        db = self.path("f.db")
        with SimFabric(os.path.join(EXAMPLES, "hft96-shuffled.topo"), lmc=2) as sim:
            ibroute("scan", "--db", db, sim=sim)
        for text, needle in (('{"hosts": 96, "hostz": 1}', "unknown key 'hostz'"), ("{nope", "not JSON"),
                             ('{"topology": "torus"}', "topology must be")):
            exp = self.path("bad.json")
            with open(exp, "w") as f:
                f.write(text)
            r = ibroute("accept", "--db", db, "--expect", exp, "--simulate", "--report", self.path("r.html"), check=False)
            self.assertEqual(r.returncode, 2)
            self.assertIn(needle, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        r = ibroute("accept", "--db", db, "--expect", exp, "--report", self.path("r.html"), check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("exactly one of --simulate", r.stderr)


if __name__ == "__main__":
    unittest.main()
