"""ibroute accept --simulate on ibsim + OpenSM fabrics: a healthy fabric passes; a link at 1x, an
unlinked link and LMC 0 make the right checks fail with the right values; a three-level tree routed
by ftree at LMC 0 passes through the topology order. The HTML report is opened in headless Chromium
and checked from the DOM it renders, and its heatmap from the pixels Chromium paints: scaled to the
rate the plan expects, a healthy run is green, a congested one is not."""
import json
import os
import re
import shutil
import subprocess
import unittest

from common import EXAMPLES, TempDirTest, ibroute, png_pixels
from simfabric import SimFabric, generate
from test_real_shapes_sim import gen_real

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


def heatmap_colours(test, report, ranks):
    """The report's heatmap and legend painted by headless Chromium: the colour at the centre of
    every (source, destination) cell, and the legend's left end, middle and right end."""
    with open(report) as f:
        html = f.read()
    heat = re.search(r'<svg id="heatmap".*?</svg>', html, re.S).group(0)
    legend = re.search(r'<svg id="heatmap-legend".*?</svg>', html, re.S).group(0)
    px = max(2, 512 // ranks)  # as accept_html.cpp lays the cells out, inside translate(40,5)
    side = px * ranks
    page = test.path("heatmap.html")
    with open(page, "w") as f:
        f.write(f'<!DOCTYPE html><html><body style="margin:0;background:#fff"><div style="position:absolute;left:0;top:0">{heat}</div>'
                f'<div style="position:absolute;left:0;top:{side + 40}px">{legend}</div></body></html>')
    png = test.path("heatmap.png")
    subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
                    f"--screenshot={png}", f"--window-size={side + 400},{side + 120}", "file://" + page],
                   capture_output=True, timeout=120, check=True)
    pixel = png_pixels(png)
    cells = {(i, j): pixel(40 + j * px + px // 2, 5 + i * px + px // 2) for i in range(ranks) for j in range(ranks)}
    y = side + 40 + 12
    return cells, (pixel(42, y), pixel(190, y), pixel(338, y))


def green(c):
    return c[1] > c[0] + 40 and c[1] > c[2]


class AcceptOnSimulatedFabrics(TempDirTest):
    def accept(self, topo, lmc=4, expect=None, engine="minhop", args=()):
        """accept --rescan: it scans the simulated fabric itself (through the simulator's preload)."""
        db = self.path("f.db")
        exp = self.path("expect.json")
        with open(exp, "w") as f:
            json.dump(expect or EXPECT, f)
        report = self.path("report.html")
        with SimFabric(topo, lmc=lmc, engine=engine) as sim:
            r = ibroute("accept", "--rescan", "--db", db, "--expect", exp, "--simulate", "--report", report, "--json", *args,
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
        # Every measured value also as a number, its unit in the key: the rate in Gb/s as rate_per_node says in B/s.
        self.assertAlmostEqual(checks["rate_per_node"]["value_gbps"], j["rate_per_node"] * 8 / 1e9, places=6)
        self.assertEqual(checks["hosts"]["value_count"], 96)
        self.assertIsNone(checks["skipped_transfers"].get("value_share"))  # not measured: no number
        self.assertGreater(j["all_to_all_bound_gbps"], 0)
        self.assertGreater(j["load"]["round_robin"]["max_load"], j["load"]["plan"]["max_load"])
        self.assertEqual(j["plan"]["order"], "name")  # within the bound: no second plan
        self.assertLessEqual(j["load"]["plan"]["lower_bound"]["worst"], j["load"]["plan"]["max_load"])
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
        # Painted: every pair delivers its planned rate, so every cell is green, the diagonal grey,
        # and the legend runs from red through yellow to green, its full mark each pair's plan.
        cells, (low, mid, high) = heatmap_colours(self, report, 96)
        self.assertEqual([k for k, c in cells.items() if k[0] != k[1] and not green(c)], [])
        self.assertEqual({c for k, c in cells.items() if k[0] == k[1]}, {(238, 238, 238)})
        self.assertTrue(low[0] > 200 and low[1] < 80, low)
        self.assertTrue(mid[0] > 230 and mid[1] > 200, mid)
        self.assertTrue(green(high), high)
        self.assertIn("100 % of its plan", re.search(r'<svg id="heatmap-legend".*?</svg>', dom, re.S).group(0))
        self.assertIn("the share of its own planned rate each pair reached in the simulation", dom)
        self.assertIn('<p id="clock">Not measured: simulated', dom)
        self.assertIn("(simulated: no hardware ran)", re.search(r'id="verdict-line"[^>]*>([^<]*)<', dom).group(1))
        self.assertIn("<th>least possible</th>", dom)
        self.assertIn('id="plan-order"', dom)
        # The slowest pairs in print, named by rank and host (a map of 96 ranks has no room for figures).
        slow = dom[dom.index('id="slowest-pairs"'):]
        slow = slow[:slow.index("</table>")]
        self.assertEqual(slow.count("<tr>"), 11)  # a header and ten pairs
        self.assertRegex(slow, r"<td>\d+ node\d+-\d+")

    def test_two_groups_are_accepted(self):
        """The event builder's pattern: half the hosts send to the other half; receivers send nothing."""
        with open(os.path.join(EXAMPLES, "hft96-shuffled.topo")) as f:
            names = sorted({l.split('"')[1] for l in f if l.startswith("Hca")})
        checks, j, _ = self.accept(os.path.join(EXAMPLES, "hft96-shuffled.topo"),
                                   args=("--senders", ",".join(names[:48]), "--receivers", ",".join(names[48:])))
        self.assertEqual(checks["congestion_free"]["result"], "pass", checks["congestion_free"])
        self.assertEqual((j["plan"]["senders"], j["plan"]["receivers"], j["plan"]["hosts"]), (48, 48, 96))
        self.assertEqual(checks["rate_per_node"]["result"], "pass", checks["rate_per_node"])
        self.assertTrue(j["accepted"], [c for c in checks.values() if c["result"] == "fail"])

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
        checks, j, _ = self.accept(topo, args=["--shifts-only"])
        self.assertFalse(j["accepted"])
        self.assertEqual(checks["broken_links"]["result"], "fail")
        self.assertEqual(checks["broken_links"]["measured"], 1)
        self.assertEqual(checks["link_width"]["result"], "pass")
        # A leaf with 3 of 4 up-links cannot carry 8 hosts' traffic at 2 per link in every shift: over the bound.
        self.assertEqual(checks["congestion_free"]["result"], "fail")
        # Unless its excess waits (the default plan): congestion-free, in more phases, still short of the bound's rate.
        r = ibroute("accept", "--db", self.path("f.db"), "--expect", self.path("expect.json"), "--simulate", "--json",
                    "--report", self.path("packed.html"), check=False)
        packed = json.loads(r.stdout)
        self.assertEqual({c["check"]: c["result"] for c in packed["checks"]}["congestion_free"], "pass")
        self.assertIn("packed", packed["plan"]["method"])
        self.assertGreater(packed["plan"]["efficiency"]["value"], j["plan"]["efficiency"]["value"])

    def test_lmc0_has_no_congestion_free_plan_in_name_order(self):
        expect = dict(EXPECT, lmc=0)
        checks, j, _ = self.accept(os.path.join(EXAMPLES, "hft96-shuffled.topo"), lmc=0, expect=expect, args=["--order", "name", "--shifts-only"])
        self.assertFalse(j["accepted"])
        self.assertEqual(checks["lmc"]["result"], "pass")
        self.assertEqual(checks["congestion_free"]["result"], "fail")
        worst, least = map(int, re.match(r"worst link (\d+), least possible (\d+)", checks["congestion_free"]["measured"]).groups())
        self.assertGreater(worst, 2)
        self.assertGreater(least, 2, "one path per pair: no DLID choice helps")
        self.assertLessEqual(least, worst)
        # The worst links are named, highest load first.
        named = [int(x) for x in re.findall(r"carries (\d+) \(capacity", checks["congestion_free"]["detail"])]
        self.assertEqual(named[0], worst)
        self.assertEqual(named, sorted(named, reverse=True))
        self.assertEqual([w["load"] for w in j["load"]["plan"]["worst_links"]], named)
        self.assertEqual(checks["rate_per_node"]["result"], "fail", "congestion costs bandwidth")
        # Painted against each pair's own plan (its share of its path's links in its phase): the
        # simulation plays exactly that, so the map is green; the congestion is in the verdict, where
        # no node reaches the 5 GB/s the expectation demands (rate_per_node above).
        cells, _ = heatmap_colours(self, self.path("report.html"), 96)
        self.assertEqual([k for k, c in cells.items() if k[0] != k[1] and not green(c)], [])
        # By leaf and port, minhop's one path per pair spreads the shifts evenly: --order auto finds it.
        r = ibroute("accept", "--db", self.path("f.db"), "--expect", self.path("expect.json"), "--simulate", "--json",
                    "--report", self.path("auto.html"), "--shifts-only", check=False)
        auto = json.loads(r.stdout)
        self.assertEqual(auto["plan"]["order"], "topology")
        self.assertEqual({c["check"]: c["result"] for c in auto["checks"]}["congestion_free"], "pass")

    def test_three_level_ftree_lmc0_is_congestion_free_in_topology_order(self):
        # Host names shuffled over the leaves: at LMC 0 the name order's shifts collide on
        # ftree's routes whatever the DLIDs; the topology order's are what ftree makes contention-free.
        topo = gen_real(self.path("t3.topo"), "three-level", "--pods", 4, "--pod-leaves", 4, "--pod-aggs", 4, "--down", 4,
                        "--up", 4, "--core-per-agg", 4, "--seed", 7)
        expect = {"topology": "three-level", "hosts": 64, "lmc": 0, "congestion_free": True}
        checks, j, report = self.accept(topo, lmc=0, expect=expect, engine="ftree", args=["--shifts-only"])
        self.assertEqual(checks["congestion_free"]["result"], "pass", checks["congestion_free"])
        self.assertTrue(j["accepted"], checks)
        plan = j["plan"]
        self.assertEqual(plan["order"], "topology")
        self.assertEqual([t["order"] for t in plan["orders_tried"]], ["name", "topology"])
        self.assertGreater(plan["orders_tried"][0]["phases_over"], 0)
        bound = j["fabric"]["transfer_bound"]
        self.assertEqual(j["load"]["plan"]["max_load"], bound)
        self.assertEqual(j["load"]["plan"]["lower_bound"]["worst"], bound)  # the plan is optimal
        self.assertEqual(j["load"]["plan"]["worst_links"], [])
        with open(report) as f:
            html = f.read()
        self.assertIn('id="plan-order">Plan: ranks in topology order (name order tried', html)
        self.assertIn("<th>least possible</th>", html)
        # In name order: over the bound, and so is the least possible; the worst links are named.
        db = self.path("f.db")
        exp = self.path("expect.json")
        r = ibroute("accept", "--db", db, "--expect", exp, "--simulate", "--order", "name", "--report", self.path("n.html"),
                    "--shifts-only", check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        m = re.search(r"worst link (\d+), least possible (\d+)", r.stdout)
        self.assertGreater(int(m.group(2)), bound)
        self.assertLessEqual(int(m.group(2)), int(m.group(1)))
        self.assertRegex(r.stdout, r"congestion_free: worst: \S+\[\d+\] -> \S+\[\d+\] carries " + m.group(1) + " ")
        r = ibroute("accept", "--db", db, "--expect", exp, "--simulate", "--order", "leaf", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

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
