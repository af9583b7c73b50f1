"""The structure `analyze --json` reports (chassis, levels, switches per level, whether it is a
tree) for each class of real shape, against a count made here from the topology file itself:
directors whose ASICs all share one placeholder system image GUID and one description (told apart
by their internal cabling), hosts on the second level above blade-chassis switch modules (levels
ranked from the top), and the real dumps of ../shared/realdata. Offline imports (`scan
--topology`), as an admin's kept dump is read."""
import os
import re
import subprocess
import sys
import unittest

from common import SOURCE, TempDirTest, ibroute, ibroute_json
from realdata import dump, ports_report_to_topology

GEN = os.path.join(SOURCE, "examples", "gen_real_fabric.py")
NODE = re.compile(r'^(Switch|Ca|Hca|Rt)\s+\d+\s+"([^"]+)"\s+#\s+"([^"]*)"')
LINK = re.compile(r'^\[(\d+)\][^"]*"([^"]+)"\[(\d+)\]')


def gen_real(path, *args):
    subprocess.run([sys.executable, GEN, *map(str, args), "-o", path], check=True, capture_output=True)
    return path


def read_topology(path):
    """{id: {"kind", "desc", "sysimg", "peers": [ids]}} from ibnetdiscover text, parsed here."""
    nodes, cur, sysimg = {}, None, None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("sysimgguid="):
            sysimg = int(line.split("=")[1], 16)
        elif m := NODE.match(line):
            kind = "sw" if m.group(1) == "Switch" else "ca"
            cur = nodes.setdefault(m.group(2), {"kind": kind, "desc": m.group(3), "sysimg": sysimg, "peers": []})
            sysimg = None
        elif cur is not None and (m := LINK.match(line)):
            cur["peers"].append(m.group(2))
    return nodes


def components(nodes, members):
    """Groups of `members` joined by cables among themselves."""
    seen, out = set(), []
    for start in members:
        if start in seen:
            continue
        group, todo = set(), [start]
        while todo:
            x = todo.pop()
            if x in group:
                continue
            group.add(x)
            todo += [y for y in nodes[x]["peers"] if y in members]
        seen |= group
        out.append(group)
    return out


def st_lines_spines(asic):
    return sum(a.group(1) == "L" for a in asic), sum(a.group(1) == "S" for a in asic)


class ShapeClasses(TempDirTest):
    def analyze(self, topo):
        db = self.path("s.db")
        if os.path.exists(db):
            os.remove(db)
        ibroute("scan", "--db", db, "--topology", topo)
        return ibroute_json("analyze", "--db", db, "--no-fair-share", "--patterns", "rr-name")["structure"]

    def test_directors_sharing_one_placeholder_guid_are_told_apart_by_their_cabling(self):
        topo = gen_real(self.path("anon.topo"), "director", "--directors", 3, "--lines", 8, "--spine-asics", 6, "--edges", 12,
                        "--edge-hosts", 10, "--spread", "--anonymous-chassis", "--seed", 4)
        nodes = read_topology(topo)
        by_guid = {}
        for k, n in nodes.items():
            if n["kind"] == "sw":
                by_guid.setdefault(n["sysimg"], set()).add(k)
        shared = [g for g in by_guid.values() if len(g) > 1]
        self.assertEqual(len(shared), 1, "every director ASIC under one placeholder GUID")
        chassis = components(nodes, shared[0])
        lines = {k for c in chassis for k in c if any(p not in c for p in nodes[k]["peers"])}
        edges = {k for k, n in nodes.items() if n["kind"] == "sw" and k not in shared[0]}
        st = self.analyze(topo)
        self.assertEqual(len(st["chassis"]), len(chassis), st["summary"])
        self.assertEqual(sorted(len(c["asics"]) for c in st["chassis"]), sorted(len(c) for c in chassis))
        self.assertEqual(sum(c["line_asics"] for c in st["chassis"]), len(lines))
        self.assertEqual(sum(c["spine_asics"] for c in st["chassis"]), len(shared[0]) - len(lines))
        self.assertEqual(len({c["name"] for c in st["chassis"]}), len(chassis), "each chassis its own name")
        # Edge switches, line ASICs, spine ASICs; a tree.
        self.assertEqual([lv["switches"] for lv in st["per_level"]], [len(edges), len(lines), len(shared[0]) - len(lines)])
        self.assertTrue(st["tree"])
        self.assertEqual(st["lateral"], [])

    def test_hosts_on_the_second_level_over_blade_switch_modules(self):
        # Blade-chassis switch modules (10 hosts, 4 up-links) below the cluster's own switches,
        # which carry 14 login and storage hosts each: more hosts than a module, yet the second level.
        topo = gen_real(self.path("blade.topo"), "three-level", "--pods", 3, "--pod-leaves", 6, "--pod-aggs", 4, "--down", 10,
                        "--up", 4, "--core-per-agg", 2, "--agg-hosts", 14)
        nodes = read_topology(topo)
        count = {p: sum(1 for n in nodes.values() if n["kind"] == "sw" and n["desc"].startswith(p)) for p in ("leaf", "agg", "core")}
        on_aggs = sorted(nodes[k]["desc"].split()[0] for k, n in nodes.items()
                         if n["kind"] == "ca" and any(nodes[p]["desc"].startswith("agg") for p in n["peers"]))
        st = self.analyze(topo)
        self.assertEqual(st["levels"], 3, st["summary"])
        self.assertEqual([lv["switches"] for lv in st["per_level"]], [count["leaf"], count["agg"], count["core"]])
        self.assertTrue(st["tree"])
        self.assertEqual((st["lateral"], st["extra"]), ([], []))
        self.assertEqual(sorted(h.split()[0] for h in st["hosts_above_lowest_level"]), on_aggs)

    def test_real_dumps(self):
        # Per dump: levels and switches per level counted from the file's descriptions.
        pod = dump("nvidia-topograph", "example.out")
        nodes = read_topology(pod)
        leaves = sum(1 for n in nodes.values() if n["kind"] == "sw" and "IBLEAF" in n["desc"])
        spines = sum(1 for n in nodes.values() if n["kind"] == "sw" and "IBSPINE" in n["desc"])
        st = self.analyze(pod)
        self.assertEqual([lv["switches"] for lv in st["per_level"]], [leaves, spines])
        self.assertTrue(st["tree"])
        self.assertEqual(st["chassis"], [])
        # avakas: a QLogic director's 25 ASICs, leaf ("L1xx") and spine ("S2xx") ASICs by description.
        text, _ = ports_report_to_topology(open(dump("hwloc-netloc", "avakas", "ib-raw", "ib-subnet-fe80:0000:0000:0000.txt"),
                                                encoding="utf-8", errors="replace").read())
        topo = self.path("avakas.topo")
        open(topo, "w").write(text)
        nodes = read_topology(topo)
        qlogic = [n["desc"] for n in nodes.values() if n["kind"] == "sw"]
        asic = [re.search(r"\s([LS])\d+[A-Z]?$", d) for d in qlogic]
        self.assertTrue(all(asic), qlogic[:3])
        guids = {re.search(r"GUID=(0x[0-9a-fA-F]+)", d).group(1) for d in qlogic}
        st = self.analyze(topo)
        self.assertEqual([lv["switches"] for lv in st["per_level"]],
                         [sum(a.group(1) == "L" for a in asic), sum(a.group(1) == "S" for a in asic)])
        self.assertTrue(st["tree"])
        # The chassis' GUID is in every ASIC's description (a port report has no system image GUID).
        self.assertEqual(len(st["chassis"]), len(guids))
        self.assertEqual(st["chassis"][0]["system_image_guid"], "0x%016x" % int(guids.pop(), 16))
        self.assertEqual((st["chassis"][0]["line_asics"], st["chassis"][0]["spine_asics"]), st_lines_spines(asic))


if __name__ == "__main__":
    unittest.main()
