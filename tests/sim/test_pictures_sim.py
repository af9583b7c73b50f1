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
        # Each row in name order, left to right: spines, then leaves.
        for prefix in ("ibspine", "ibswitch"):
            row = sorted((t for t in r["texts"] if t["text"].startswith(prefix)), key=lambda t: t["x"])
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
        self.assertIn("logarithmic", hist)
        self.assertIn(">1000<", hist)  # a tick of the y-axis
        # Shares as the terminal gives them.
        loads = page[page.find('id="loads"'):]
        self.assertRegex(loads[:loads.find("</table>")], r"<td>\d+\.\d %</td>")


if __name__ == "__main__":
    unittest.main()
