"""The fabric pictures at the sizes users have, checked in headless Chromium from the rendered page:
`topo --format svg` of the demo's 864-host half fat-tree (scanned on ibsim, routed by OpenSM,
coloured by round-robin's load) and of a 3 456-host three-level tree (imported offline), and the
acceptance report's fabric figure at 864 hosts (the level-pair matrix in its place). Every switch
label must be in the picture, inside its box (nothing cut off), at a size people read, in name
order on its row, with a legend; the report's matrix prints its figures in the cells (no hover)."""
import html
import json
import os
import re
import subprocess
import tempfile
import unittest

from common import EXAMPLES, db_rows, ibroute
from simfabric import SimFabric, write_text
from test_accept_sim import chromium

HERE = os.path.dirname(os.path.abspath(__file__))
GEN_REAL = os.path.join(HERE, "..", "..", "examples", "gen_real_fabric.py")

# Runs in the page after the picture: every <text> of the first <svg>, its rendered box against
# the picture's box, its height on screen. Written into the page, read back with --dump-dom.
PROBE = """<script>
const svg = document.querySelector('%s');
const box = svg.getBoundingClientRect();
const texts = [...svg.querySelectorAll('text')].map(t => {
  const r = t.getBoundingClientRect();
  return {text: t.textContent, left: r.left - box.left, right: box.right - r.right, top: r.top - box.top,
          bottom: box.bottom - r.bottom, height: r.height, x: r.left, y: r.top};
});
const out = document.createElement('pre');
out.id = 'probe';
out.textContent = JSON.stringify({width: box.width, height: box.height, texts: texts});
document.body.appendChild(out);
</script>"""


def probe(browser, page_html, selector, path):
    write_text(path, page_html.replace("</body>", PROBE % selector + "</body>") if "</body>" in page_html
               else "<!DOCTYPE html><html><body style='margin:0'>" + page_html + PROBE % selector + "</body></html>")
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,900", "--dump-dom",
                          "file://" + path], capture_output=True, text=True, timeout=180).stdout
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert m, f"the probe did not run: {dom[:500]}"
    return json.loads(html.unescape(m.group(1)))


class Pictures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="ibroute-pictures-")
        cls.tmp = cls._tmp.name
        cls.browser = chromium()
        cls.db864 = os.path.join(cls.tmp, "hft864.db")
        with SimFabric(os.path.join(EXAMPLES, "hft864-shuffled.topo"), lmc=0) as sim:
            ibroute("scan", "--db", cls.db864, sim=sim, timeout=600)
        topo = os.path.join(cls.tmp, "three.topo")
        subprocess.run(["python3", GEN_REAL, "three-level", "--pods", "12", "--pod-leaves", "12", "--pod-aggs", "6", "--down", "24",
                        "--up", "6", "--core-per-agg", "6", "--core-links", "2", "-o", topo], check=True)
        cls.db3456 = os.path.join(cls.tmp, "three.db")
        ibroute("scan", "--db", cls.db3456, "--topology", topo)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def setUp(self):
        if self.browser is None:
            self.fail("chromium is not installed (scripts/deps.sh installs it)")

    def switches(self, db):
        return {r[0] for r in db_rows(db, "SELECT desc FROM node WHERE type='switch'")}

    def assert_readable(self, result, names, what):
        texts = [t for t in result["texts"] if t["text"].strip()]
        shown = {line for t in texts for line in [t["text"]]}
        missing = {n for n in names if not any(s == n or s.startswith(n + "\n") or s.startswith(n) for s in shown)}
        self.assertEqual(missing, set(), f"{what}: switch labels not in the picture")
        clipped = [t["text"] for t in texts if min(t["left"], t["right"], t["top"], t["bottom"]) < -0.5]
        self.assertEqual(clipped, [], f"{what}: labels outside the picture's box (cut off)")
        small = [t["text"] for t in texts if t["text"] in names and t["height"] < 9]
        self.assertEqual(small, [], f"{what}: switch labels under 9 px high")

    def graph(self, db, *args):
        svg = self.path(os.path.basename(db) + ".svg")
        ibroute("topo", "--db", db, "--format", "svg", "-o", svg, *args, timeout=600)
        with open(svg) as f:
            text = f.read()
        return text[text.find("<svg"):], probe(self.browser, text[text.find("<svg"):], "svg", self.path("page.html"))

    def test_the_864_host_graph_shows_every_switch_in_order_with_a_legend(self):
        text, r = self.graph(self.db864, "--pattern", "rr-name")
        names = self.switches(self.db864)
        self.assert_readable(r, names, "topo --format svg, 864 hosts")
        self.assertIn("transfers at once against capacity", text)
        self.assertIn("dashed red: link down", text)
        self.assertIn("24 hosts", text)  # counted in the leaf's label
        # Each level in name order, left to right, a level of more than 12 wrapped onto rows top down.
        for prefix in ("ibspine", "ibswitch"):
            row = sorted((t for t in r["texts"] if t["text"].startswith(prefix)), key=lambda t: (round(t["y"]), t["x"]))
            numbers = [int(re.match(prefix + r"(\d+)", t["text"]).group(1)) for t in row]
            self.assertEqual(numbers, sorted(numbers), f"{prefix} row out of order")
            self.assertEqual(len(numbers), len([n for n in names if n.startswith(prefix)]))

    def test_the_3456_host_three_level_graph_shows_every_switch(self):
        text, r = self.graph(self.db3456)
        self.assert_readable(r, self.switches(self.db3456), "topo --format svg, 3456 hosts, three levels")
        self.assertIn("xN: N parallel links", text)

    def test_the_report_draws_the_level_matrix_at_864_hosts(self):
        expect = write_text(self.path("e.json"), json.dumps({"hosts": 864}))
        report = self.path("accept.html")
        ibroute("accept", "--db", self.db864, "--expect", expect, "--simulate", "--report", report, "--json", timeout=600)
        with open(report) as f:
            page = f.read()
        r = probe(self.browser, page, "#fabric svg", self.path("report.html"))
        names = self.switches(self.db864)
        self.assert_readable(r, names, "the report's fabric figure")
        self.assertIn("over by 100 % or more", page)
        self.assertNotIn("over (+100%)", page)
        # The load histogram: a labelled logarithmic y-axis, and no bar with a count invisible.
        hist = page[page.find('<svg class="histogram"'):]
        hist = hist[:hist.find("</svg>")]
        bars = re.findall(r'height="(\d+)" fill="#(?:c44|2a7)"><title>[^:]+: ([\d.e+]+) \(link, phase\)', hist)
        self.assertGreater(len(bars), 4)
        self.assertEqual([(h, n) for h, n in bars if float(n) > 0 and int(h) < 2], [], "every bar with a count is drawn")
        self.assertIn("(logarithmic)", page[page.find('<svg class="histogram"'):])  # the caption, in the page
        self.assertIn(">1000<", hist)  # a tick of the y-axis
        # Shares as the terminal gives them.
        loads = page[page.find('id="loads"'):]
        self.assertRegex(loads[:loads.find("</table>")], r"<td>\d+\.\d %</td>")

    def test_a_director_fabric_whose_edge_switches_are_described_alike(self):
        """Three directors and 24 edge switches all described "Infiniscale-IV Mellanox Technologies",
        2 to 18 hosts each, up-links uneven, 4 cables missing: replayed on ibsim, routed by OpenSM.
        accept --simulate: the headline is the verdict; the level matrix's labels are distinct, inside
        the picture, director ASICs with their /Lxx and /Sxx; nothing that costs no capacity is a
        likely suspect and no fact repeats. topo --format svg: a director is one box, rows wrapped."""
        topo = self.path("dir.topo")
        subprocess.run(["python3", GEN_REAL, "director", "--directors", "3", "--lines", "6", "--spine-asics", "3", "--edges", "24",
                        "--edge-hosts", "2-18", "--edge-uplinks", "3-16", "--spread", "--missing", "4", "--seed", "3", "-o", topo],
                       check=True)
        db = self.path("dir.db")
        with SimFabric(topo, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim, timeout=600)
        expect = write_text(self.path("dir.json"), json.dumps({"topology": 3}))
        report = self.path("dir.html")
        r = ibroute("accept", "--db", db, "--expect", expect, "--simulate", "--report", report, "--json", check=False, timeout=600)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        out = json.loads(r.stdout)
        for x in out["diagnosis"]["suspects"]:
            self.assertEqual(len(x["evidence"]), len(set(x["evidence"])), x)
            if x.get("cost_share", 1) == 0:
                self.assertLess(x["confidence"], 0.5, x)
        with open(report) as f:
            page = f.read()
        result = probe(self.browser, page, "#fabric svg", self.path("dir-report.html"))
        texts = [t for t in result["texts"] if t["text"].strip()]
        self.assertEqual([t["text"] for t in texts if min(t["left"], t["right"], t["top"], t["bottom"]) < -0.5], [], "cut off")
        edges = [t["text"] for t in texts if t["text"].startswith("Infiniscale-IV")]
        self.assertEqual(len(edges), 24, edges)  # a row each, level 1 to level 2
        self.assertEqual(len(set(edges)), 24, edges)
        asics = [t["text"] for t in texts if t["text"].startswith("MF0;")]  # line ASICs: columns, then rows
        self.assertTrue(asics and all(re.search(r"IS5600/[LS]\d\d/U1$", a) for a in asics), asics)
        self.assertEqual(len(asics), 18 + 18 + 9)
        self.assertEqual({a for a in asics if "/L" in a}, {f"MF0;director{d}:IS5600/L0{n}/U1" for d in (1, 2, 3) for n in range(1, 7)})
        dom = subprocess.run([self.browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + report],
                             capture_output=True, text=True, timeout=180).stdout
        head = re.search(r'<p id="verdict-line" class="(\w+)"[^>]*>([^<]*)<', dom)
        self.assertEqual(head.group(1), "pass" if out["accepted"] else "fail")
        self.assertTrue(head.group(2).startswith("ACCEPTED — " if out["accepted"] else "NOT ACCEPTED — "), head.group(2))
        # The drawing: three director boxes (their 27 ASICs not drawn one by one), rows of at most 12.
        svg, drawn = self.graph(db)
        boxes = [t["text"] for t in drawn["texts"] if re.match(r"director\d IS5600$", t["text"])]
        self.assertEqual(sorted(boxes), ["director1 IS5600", "director2 IS5600", "director3 IS5600"])
        self.assertNotIn("/L01/U1", svg)
        self.assertIn("9 ASICs (6 line, 3 spine)", svg)
        self.assertLess(drawn["width"], 4000, "rows wrapped (px: 3 000 pt)")
        labels = [t["text"] for t in drawn["texts"] if t["text"].startswith("Infiniscale-IV")]
        self.assertEqual(len(set(labels)), 24, labels)

    def test_a_real_director_dump_replayed_with_cables_missing(self):
        """avakas (../shared/realdata: a QLogic 12800-180 director, 25 ASICs all described "QLogic
        12800-180 GUID=0x00066a00e8001310 Lxxx/Sxxx", 281 hosts on its line ASICs), three cables
        between ASICs left out, replayed on ibsim, routed by OpenSM: accept --simulate names them
        as broken; nothing that costs no capacity is a likely suspect and no fact repeats; the
        headline is the verdict; every ASIC's label is its own, in the report's drawing and in the
        level matrix, which shortens the common head and keeps the L1xx or S2xx."""
        from realdata import dump, ports_report_to_topology
        with open(dump("hwloc-netloc", "avakas", "ib-raw", "ib-subnet-fe80:0000:0000:0000.txt")) as f:
            text, dropped = ports_report_to_topology(f.read(), drop=3)
        topo = write_text(self.path("avakas.topo"), text)
        db = self.path("avakas.db")
        with SimFabric(topo, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim, timeout=600)
        expect = write_text(self.path("avakas.json"), json.dumps({"topology": "two-level"}))
        report = self.path("avakas.html")
        r = ibroute("accept", "--db", db, "--expect", expect, "--simulate", "--report", report, "--json", check=False, timeout=600)
        self.assertEqual(r.returncode, 1, r.stderr)
        out = json.loads(r.stdout)
        checks = {c["check"]: c for c in out["checks"]}
        self.assertEqual((checks["broken_links"]["result"], checks["broken_links"]["measured"]), ("fail", len(dropped)), checks["broken_links"])
        for x in out["diagnosis"]["suspects"]:
            self.assertEqual(len(x["evidence"]), len(set(x["evidence"])), x)
            if x.get("cost_share", 1) == 0:
                self.assertLess(x["confidence"], 0.5, x)
        names = self.switches(db)
        self.assertEqual(len(names), 25)
        result = probe(self.browser, open(report).read(), "#fabric svg", self.path("avakas-report.html"))
        shown = [t["text"] for t in result["texts"] if t["text"].startswith("QLogic")]
        self.assertEqual(sorted(set(shown)), sorted(names), "each ASIC once, its whole name")
        self.assertEqual([t["text"] for t in result["texts"] if t["text"].strip() and min(t["left"], t["right"], t["top"], t["bottom"]) < -0.5], [])
        dom = subprocess.run([self.browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + report],
                             capture_output=True, text=True, timeout=180).stdout
        head = re.search(r'<p id="verdict-line" class="(\w+)"[^>]*>([^<]*)<', dom)
        self.assertEqual(head.group(1), "fail")
        self.assertTrue(head.group(2).startswith("NOT ACCEPTED — "), head.group(2))
        matrix = self.path("avakas-matrix.svg")
        ibroute("topo", "--db", db, "--format", "matrix", "-o", matrix)
        with open(matrix) as f:
            svg = f.read()
        labels = [html.unescape(x) for x in re.findall(r'font-size="9"[^>]*>([^<]+)</text>', svg)]
        asics = {re.search(r"([LS]\d{3}[AB]?)$", n).group(1) for n in names}
        self.assertEqual({re.search(r"([LS]\d{3}[AB]?)$", x).group(1) for x in labels}, asics, labels)
        self.assertEqual((len(labels), len(set(labels))), (25, 25), labels)  # rows L1xx, columns S2xx: each once
        self.assertTrue(all(len(x) <= 34 for x in labels), labels)


if __name__ == "__main__":
    unittest.main()
