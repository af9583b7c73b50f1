"""Every file admins keep, written by the real tools on an ibsim + OpenSM fabric, imports offline
and gives the live scan's routes: ibnetdiscover plain, -g, -p and --cache; dump_lfts.sh (ibroute
per switch), dump_fts, OpenSM's opensm-lfts.dump and opensm.fdbs. Damaged and partial files:
cut tables and iberror lines (exit 3 naming the switch), topology alone (routes unknown, plan
refuses), no subnet manager (LIDs 0: stored with a warning), a node-name map. And one real
ibdiagnet run of an NDR cluster (../shared/realdata): its .ibnetdiscover, .lst and db_csv are one scan."""
import os
import re
import unittest

from common import SOURCE, TempDirTest, db_rows, ibroute, ibroute_json
from realdata import dump
from simfabric import SimFabric, generate, read_text, write_text


def dump_lfts_sh(sim):
    """What infiniband-diags' dump_lfts.sh does: `ibroute <lid>` for every switch, concatenated."""
    out = []
    for line in sim.run(["timeout", "60", "ibswitches"]).stdout.splitlines():
        m = re.search(r" lid (\d+) ", line)
        if m:
            out.append(sim.run(["timeout", "30", "ibroute", m.group(1)]).stdout)
    return "".join(out)


class ImportFormats(TempDirTest):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls._cls_tmp = tempfile.TemporaryDirectory(prefix="ibroute-formats-")
        d = cls.dir = cls._cls_tmp.name
        topo = generate(os.path.join(d, "f.topo"), "--leaves", 8, "--down", 6, "--up", 3, "--spines", 3,
                        "--switch-ports", 12, "--spine-ports", 12, "--shuffle", "--seed", 9)
        dumps = os.path.join(d, "osm")
        os.mkdir(dumps)
        cls.db = os.path.join(d, "f.db")
        cls.files = {}
        with SimFabric(topo, lmc=2, engine="minhop", osm_args=["-D", "0x43", "--dump_files_dir", dumps]) as sim:
            cls.live = ibroute_json("scan", "--db", cls.db, sim=sim)
            run = lambda *a: sim.run(["timeout", "60", *a]).stdout
            cls.files["plain"] = write_text(os.path.join(d, "plain.txt"), run("ibnetdiscover"))
            cls.files["grouped"] = write_text(os.path.join(d, "grouped.txt"), run("ibnetdiscover", "-g"))
            cls.files["ports"] = write_text(os.path.join(d, "ports.txt"), run("ibnetdiscover", "-p"))
            # As gatherers keep them: the discovery's progress lines (-s) in front, verbose (-v).
            cls.files["ports_progress"] = write_text(os.path.join(d, "ports-s.txt"), run("ibnetdiscover", "-s", "-v", "-p"))
            cls.files["plain_progress"] = write_text(os.path.join(d, "plain-s.txt"), run("ibnetdiscover", "-s", "-v"))
            cls.files["cache"] = os.path.join(d, "fabric.cache")
            sim.run(["timeout", "60", "ibnetdiscover", "--cache", cls.files["cache"]])
            cls.files["dump_lfts"] = write_text(os.path.join(d, "dump_lfts.txt"), dump_lfts_sh(sim))
            cls.files["dump_fts"] = write_text(os.path.join(d, "dump_fts.txt"), run("dump_fts"))
        cls.files["osm_lfts"] = os.path.join(dumps, "opensm-lfts.dump")
        cls.files["osm_fdbs"] = os.path.join(dumps, "opensm.fdbs")
        # Without a subnet manager: every LID is 0.
        sim = SimFabric(topo, lmc=0)
        sim.start(route=False)
        try:
            cls.files["unrouted"] = write_text(os.path.join(d, "unrouted.txt"), sim.run(["timeout", "60", "ibnetdiscover"]).stdout)
        finally:
            sim.stop()

    @classmethod
    def tearDownClass(cls):
        cls._cls_tmp.cleanup()

    def import_and_compare(self, topo, lfts):
        off = ibroute_json("scan", "--db", self.db, "--topology", self.files[topo], "--lfts", self.files[lfts])
        self.assertTrue(off["complete"], off["problems"])
        for k in ("switches", "cas", "links", "lmc", "lids"):
            self.assertEqual(off[k], self.live[k], k)
        d = ibroute_json("diff", "--db", self.db, self.live["scan_id"], off["scan_id"])
        self.assertEqual(d["routes_compared"], self.live["routes"]["total"])
        self.assertEqual(d["routes_changed"], 0, d["route_examples"])
        return off

    def test_every_topology_and_table_format_gives_the_live_routes(self):
        for topo, lfts in (("plain", "dump_lfts"), ("grouped", "dump_fts"), ("cache", "osm_lfts"), ("plain", "osm_fdbs"),
                           ("plain_progress", "dump_lfts")):
            with self.subTest(topology=topo, lfts=lfts):
                self.import_and_compare(topo, lfts)

    def test_ports_report_with_progress_lines_is_the_same_fabric(self):
        self.assertIn("DR path slid", read_text(self.files["ports_progress"]))
        a = ibroute_json("scan", "--db", self.db, "--topology", self.files["ports"])
        b = ibroute_json("scan", "--db", self.db, "--topology", self.files["ports_progress"])
        for k in ("switches", "cas", "links"):
            self.assertEqual(b[k], a[k], k)
        d = ibroute_json("diff", "--db", self.db, a["scan_id"], b["scan_id"])
        self.assertTrue(d["identical"], d)

    def test_ports_report_gives_the_cabling_without_lmc(self):
        off = ibroute_json("scan", "--db", self.db, "--topology", self.files["ports"])
        for k in ("switches", "cas", "links"):
            self.assertEqual(off[k], self.live[k], k)
        self.assertFalse(off["forwarding_tables"])
        self.assertTrue(any(p["kind"] == "no_lmc" for p in off["problems"]))
        # The cabling is the live one: same links per switch description.
        q = ("SELECT n.desc, p.num, m.desc, p.peer_port FROM port p JOIN node n ON n.scan_id=p.scan_id AND n.idx=p.node_idx "
             "JOIN node m ON m.scan_id=p.scan_id AND m.idx=p.peer_node WHERE p.scan_id=? ORDER BY 1, 2")
        self.assertEqual(db_rows(self.db, q, off["scan_id"]), db_rows(self.db, q, self.live["scan_id"]))

    def test_topology_alone_is_a_fabric_without_routes(self):
        r = ibroute("scan", "--db", self.db, "--topology", self.files["plain"])
        self.assertIn("routes    unknown", r.stdout)
        a = ibroute_json("analyze", "--db", self.db)
        self.assertEqual(len(a["structure"]["leaves"]), 8)
        p = ibroute("plan", "--db", self.db, "--name", "x", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("no forwarding tables", p.stderr)
        t = ibroute("topo", "--db", self.db, "--format", "dot")
        self.assertIn("digraph", t.stdout + "digraph")
        # Against the live scan: the same cabling, and the tables said not compared, not "0 of 0".
        off = ibroute_json("scans", "--db", self.db)
        newest = max(x["scan_id"] for x in off["scans"])
        d = ibroute("diff", "--db", self.db, self.live["scan_id"], newest, check=False)
        self.assertIn("not compared", d.stdout)
        self.assertNotIn("routes changed", d.stdout)
        j = ibroute_json("diff", "--db", self.db, self.live["scan_id"], newest, check=False)
        self.assertFalse(j["tables_compared"])

    def test_cut_table_and_iberror_are_incomplete_naming_the_switch(self):
        text = read_text(self.files["dump_lfts"])
        headers = [m.start() for m in re.finditer(r"^Unicast lids", text, re.M)]
        third = text[headers[2]:headers[3]]
        name = re.search(r"\((.*)\):", third.splitlines()[0]).group(1)
        rows = third.splitlines()
        # The third table stops after 5 rows with the error ibroute prints, as dump_lfts.sh files do.
        cut = text[:headers[2]] + "\n".join(rows[:8]) + "\nibroute: iberror: [pid 4242] main: linear forwarding table get failed\n" + text[headers[3]:]
        f = write_text(self.path("cut.txt"), cut)
        r = ibroute("scan", "--db", self.db, "--topology", self.files["plain"], "--lfts", f, "--json", check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        import json
        s = json.loads(r.stdout)
        self.assertFalse(s["complete"])
        self.assertTrue(any(p["kind"] == "lft_cut" and name in p["detail"] for p in s["problems"]), s["problems"])
        self.assertGreater(s["routes"]["unknown"], 0)
        self.assertGreater(s["routes"]["ok"], 0)
        # A file that stops in the middle of the last table's line.
        half = text[: headers[-1] + (len(text) - headers[-1]) // 2]
        g = write_text(self.path("half.txt"), half.rstrip("\n")[:-3])
        r = ibroute("scan", "--db", self.db, "--topology", self.files["plain"], "--lfts", g, check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("is cut", r.stdout)

    def test_a_real_directors_dumps_whose_tables_end_in_an_error_line(self):
        """avakas (../shared/realdata, netloc's gather of 2016: a QLogic 12800-180 director, its port
        report and 25 `ibroute` table dumps, each ending with ibroute's "linear forwarding table
        get failed" after the row of its top LID): every table whole, every route known and
        working, counted here from the dumps themselves."""
        from realdata import dump
        raw = dump("hwloc-netloc", "avakas", "ib-raw")
        tables = os.path.join(raw, "ibroutes-fe80:0000:0000:0000")
        text = "".join(read_text(os.path.join(tables, n)) for n in sorted(os.listdir(tables)))
        lfts = write_text(self.path("avakas.lfts"), text)
        r = ibroute("scan", "--db", self.path("avakas.db"), "--topology", os.path.join(raw, "ib-subnet-fe80:0000:0000:0000.txt"),
                    "--lfts", lfts, "--json")
        import json
        s = json.loads(r.stdout)
        switches = len(re.findall(r"^Unicast lids", text, re.M))
        self.assertEqual(switches, 25)
        self.assertEqual(text.count("linear forwarding table get failed"), switches)
        # Every route: each LID (a CA's or a switch's) from every switch a CA hangs off — the rows
        # say which LIDs there are; the port report says which switches have CAs.
        lids = len(set(re.findall(r"^(0x[0-9a-f]{4}) \d{3} : \((?:Channel Adapter|Switch)", text, re.M)))
        with open(os.path.join(raw, "ib-subnet-fe80:0000:0000:0000.txt")) as f:
            leaves = {m.group(1) for m in re.finditer(r"^CA\s+\d+\s+\d+\s+0x[0-9a-f]+\s+\S+\s+\S+\s+-\s+SW\s+\d+\s+\d+\s+(0x[0-9a-f]+)", f.read(), re.M)}
        self.assertTrue(s["complete"], s["problems"][:3])
        self.assertEqual(s["routes"]["unknown"], 0)
        self.assertEqual(s["routes"]["ok"], s["routes"]["total"])
        self.assertEqual(s["routes"]["total"], lids * len(leaves), (lids, len(leaves)))
        self.assertFalse(any(p["kind"] == "lft_cut" for p in s["problems"]))
        self.assertEqual(sum(p["kind"] == "tool_message" and "kept" in p["detail"] for p in s["problems"]), switches)
        # One spine ASIC's table cut after 100 of its rows: its routes are unknown, not lost —
        # analyze says so, plan refuses naming it, and prints no rate.
        headers = [m.start() for m in re.finditer(r"^Unicast lids", text, re.M)]
        spine = next(k for k, h in enumerate(headers) if re.search(r"S2\d\d[AB]\)", text[h:text.index("\n", h)]))
        end = headers[spine + 1] if spine + 1 < len(headers) else len(text)
        rows = text[headers[spine]:end].splitlines()
        name = re.search(r"\((QLogic[^)]*)\):", rows[0]).group(1)
        cut = text[:headers[spine]] + "\n".join(rows[:100]) + "\n/usr/sbin/ibroute: iberror: failed: dump tables: linear forwarding table get failed\n" + text[end:]
        db = self.path("avakas-cut.db")
        r = ibroute("scan", "--db", db, "--topology", os.path.join(raw, "ib-subnet-fe80:0000:0000:0000.txt"),
                    "--lfts", write_text(self.path("cut.lfts"), cut), "--json", check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        cut_scan = json.loads(r.stdout)
        # The rows read stand: unknown are exactly the routes that, in the whole dumps' scan, cross
        # that ASIC towards a LID after the last of its 100 lines kept — counted from the stored hops.
        last = max(int(m.group(1), 16) for m in (re.match(r"(0x[0-9a-f]{4}) \d{3} ", x) for x in rows[:100]) if m)
        full = self.path("avakas.db")
        ((idx,),) = db_rows(full, "SELECT idx FROM node WHERE scan_id = ? AND (desc = ? OR node_desc = ?)", 1, name, name)
        crossing = sum(1 for dlid, hops in db_rows(full, "SELECT dlid, hops FROM route WHERE scan_id = ?", 1)
                       if dlid > last and any(int(h.split(":")[0]) == idx for h in hops.split()))
        self.assertGreater(crossing, 0)
        self.assertEqual(cut_scan["routes"]["unknown"], crossing)
        self.assertEqual(cut_scan["routes"]["ok"], s["routes"]["ok"] - crossing)
        self.assertTrue(any(p["kind"] == "lft_cut" and name in p["detail"] and f"LID 0x{last + 1:04x} and above unknown" in p["detail"]
                            for p in cut_scan["problems"]), cut_scan["problems"])
        a = ibroute_json("analyze", "--db", db, "--patterns", "rr-name", "--lids", "base", "--no-fair-share")
        rr = a["patterns"][0]
        self.assertGreater(rr["unknown"], 0)
        self.assertEqual(rr["broken"], rr["unknown"], "every transfer not delivered is unknown, none lost")
        p = ibroute("plan", "--db", db, "--name", "p", check=False)
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len([x for x in p.stderr.splitlines() if not x.startswith("ibroute: warning:")]), 1, p.stderr)
        self.assertIn(f"cross {name}, whose forwarding table was read only below LID 0x{last + 1:04x}", p.stderr)
        self.assertIn("their routes are unknown", p.stderr)
        # A schedule planned on the whole dumps, checked against the cut scan: validate fails the
        # routes, its transfers through the cut table counted as unknown (as many as analyze's
        # round-robin, the same pairs at LMC 0), none as lost.
        ibroute("plan", "--db", full, "--name", "whole")
        whole = self.path("whole.json")
        ibroute("export", "--db", full, "--schedule", "whole", "--format", "json", "-o", whole)
        v = ibroute("validate", "--db", db, whole, "--json", check=False)
        self.assertEqual(v.returncode, 1, v.stderr)
        routes = next(c for c in json.loads(v.stdout)["checks"] if c["check"] == "routes")
        self.assertFalse(routes["ok"])
        self.assertIn(f"{rr['unknown']} cross a switch whose table was not read (routes unknown)", routes["detail"])
        self.assertNotIn("no working route", routes["detail"])

    def test_mad_error_lines_in_a_topology_are_problems_not_failures(self):
        text = read_text(self.files["plain"])
        lines = text.splitlines()
        lines.insert(len(lines) // 2, "src/query_smp.c:228; umad (DR path slid 0; dlid 0; 0,1,3 Attr 0x11:0) bad status 110; Connection timed out")
        f = write_text(self.path("t.txt"), "\n".join(lines) + "\n")
        r = ibroute("scan", "--db", self.db, "--topology", f, "--lfts", self.files["dump_fts"], check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("bad status 110", r.stdout)

    def test_no_subnet_manager_is_stored_with_a_warning(self):
        r = ibroute("scan", "--db", self.db, "--topology", self.files["unrouted"], check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no subnet manager", r.stderr)
        self.assertIn("no port has a LID", r.stdout)

    def test_node_name_map_names_every_output(self):
        rows = db_rows(self.db, "SELECT guid, desc FROM node WHERE scan_id=? AND type='switch' ORDER BY idx", self.live["scan_id"])
        m = write_text(self.path("names.map"), "# site names\n" + "".join(f'{g} "sw-{i:02d}"\n' for i, (g, _) in enumerate(rows)))
        s = ibroute_json("scan", "--db", self.db, "--topology", self.files["plain"], "--lfts", self.files["dump_fts"],
                         "--node-name-map", m)
        names = [r[0] for r in db_rows(self.db, "SELECT desc FROM node WHERE scan_id=? AND type='switch' ORDER BY desc", s["scan_id"])]
        self.assertEqual(names, sorted(f"sw-{i:02d}" for i in range(len(rows))))
        host = db_rows(self.db, "SELECT desc FROM node WHERE scan_id=? AND type='ca' LIMIT 1", s["scan_id"])[0][0]
        out = ibroute("routes", "--db", self.db, "--from", host, "--to", "sw-00").stdout
        self.assertIn("sw-0", out)


class IbdiagnetRun(TempDirTest):
    """A real ibdiagnet 2.10 run of an NDR cluster (Quantum-2, 8 HCAs per host, SHARP nodes): the
    three files that hold its topology import, give the same scan, and hold what the files say,
    counted here from the files' text by this test's own reading."""

    def read_lst(self, path):
        """(switch GUIDs, CA GUIDs, cables) of a .lst: one cable per line, two ends in braces."""
        switches, cas, cables = set(), set(), 0
        for line in read_text(path).splitlines():
            ends = re.findall(r"\{ (SW|CA) Ports:\w+ SystemGUID:\w+ NodeGUID:(\w+)", line)
            if not ends:
                continue
            self.assertEqual(len(ends), 2, line)
            cables += 1
            for kind, guid in ends:
                (switches if kind == "SW" else cas).add(int(guid, 16))
        return switches, cas, cables

    def test_one_runs_three_files_are_one_scan(self):
        db = self.path("ndr.db")
        files = [dump("ibdiagnet-ndr", "ibdiagnet2." + ext) for ext in ("ibnetdiscover", "lst", "db_csv")]
        scans = [ibroute_json("scan", "--db", db, "--topology", f) for f in files]
        switches, cas, cables = self.read_lst(files[1])
        csv = read_text(files[2])
        links_section = csv[csv.index("START_LINKS"):csv.index("END_LINKS")].splitlines()[2:]
        self.assertEqual(len(links_section), cables)  # the two files agree before ibroute reads them
        for s in scans:
            self.assertTrue(s["complete"], s["problems"])
            self.assertEqual((s["switches"], s["cas"], s["links"]), (len(switches), len(cas), cables), s["origin"])
            self.assertFalse([p for p in s["problems"] if p["kind"].startswith("file_")], "the tool's own output")
        for s in scans[1:]:
            d = ibroute_json("diff", "--db", db, scans[0]["scan_id"], s["scan_id"])
            self.assertTrue(d["identical"], {k: v for k, v in d.items() if v})

    def test_the_runs_machines_rails_and_rail_group(self):
        """Machines, rails and the rail group as the .lst's cabling says, counted here: each machine's
        HCAs in device-number order, the switch each reaches; the group's order the most common one."""
        db = self.path("m.db")
        ibroute("scan", "--db", db, "--topology", dump("ibdiagnet-ndr", "ibdiagnet2.db_csv"))
        rails = {}
        for line in read_text(dump("ibdiagnet-ndr", "ibdiagnet2.lst")).splitlines():
            ends = re.findall(r"\{ (SW|CA) .*?NodeGUID:(\w+) .*?\{([^}]*)\} LID:\w+ PN:\w+ \}", line)
            for (k1, _, d1), (k2, g2, _) in (ends, ends[::-1]) if len(ends) == 2 else ():
                if k1 == "CA" and k2 == "SW" and re.fullmatch(r"\S+ HCA-\d+", d1):
                    host, dev = d1.split()
                    rails.setdefault(host, []).append((int(dev[4:]), g2))
        orders = [tuple(g for _, g in sorted(v)) for v in rails.values()]
        common = max(set(orders), key=orders.count)
        a = ibroute_json("analyze", "--db", db)
        self.assertEqual(a["machines"]["count"], len(rails))
        self.assertEqual(a["machines"]["machines_by_hcas"], {str(len(common)): len(rails)})
        groups = a["structure"]["rail_groups"]
        self.assertEqual(len(groups), 1)
        self.assertEqual((groups[0]["rails"], groups[0]["machines"]), (len(common), len(rails)))
        self.assertEqual(groups[0]["machines_crossed"], sum(o != common for o in orders))
        self.assertGreater(groups[0]["machines_crossed"], 0)  # the run has such machines: the check has teeth
        self.assertEqual(a["structure"]["other_leaves"], [])

    def test_a_capture_of_the_run_with_crlf_banner_and_prompt_is_the_same_fabric(self):
        db = self.path("cap.db")
        text = read_text(dump("ibdiagnet-ndr", "ibdiagnet2.ibnetdiscover"))
        body = text.replace("\nSwitch\t", "\nSwitch").replace("\nSwitch  ", "\nSwitch").replace("\nCa\t", "\nCa").replace("\nCa  ", "\nCa")
        capture = "Last login: Mon Mar 17 08:00:00 2025\n[admin@ufm ~]$ cat ibdiagnet2.ibnetdiscover\n" + body + "[admin@ufm ~]$ "
        path = self.path("capture.txt")
        with open(path, "w", newline="\r\n") as f:
            f.write(capture)
        a = ibroute_json("scan", "--db", db, "--topology", dump("ibdiagnet-ndr", "ibdiagnet2.ibnetdiscover"))
        b = ibroute_json("scan", "--db", db, "--topology", path)
        kinds = {p["kind"]: p["detail"] for p in b["problems"]}
        for k in ("file_crlf", "file_banner", "file_trailer", "file_glued_keyword"):
            self.assertIn(k, kinds)
        self.assertIn("2 line(s)", kinds["file_banner"])
        self.assertIn(f"{a['switches'] + a['cas']} node record(s)", kinds["file_glued_keyword"])
        self.assertTrue(ibroute_json("diff", "--db", db, a["scan_id"], b["scan_id"])["identical"])

    def test_a_db_csv_with_counters_stores_them_as_a_snapshot(self):
        """PM_INFO (the fixture's: the real run skipped it) becomes a counters snapshot of the scan,
        each value as the file has it, counted here from the file's own rows; N/A ports unanswered."""
        path = os.path.join(SOURCE, "tests", "fixtures", "ndr-lab.db_csv")
        db = self.path("pm.db")
        s = ibroute_json("scan", "--db", db, "--topology", path)
        text = read_text(path)
        rows = text[text.index("START_PM_INFO"):text.index("END_PM_INFO")].splitlines()
        header, rows = rows[1].split(","), [r.split(",") for r in rows[2:]]
        na = [r for r in rows if "N/A" in r]
        self.assertEqual(s["counters"]["ports"], len(rows) - len(na))
        self.assertEqual(s["counters"]["unanswered"], len(na))
        stored = dict(((g, p), (xd, wait)) for g, p, xd, wait in db_rows(
            db, "SELECT n.guid, c.port, c.xmit_data, c.xmit_wait FROM counter_port c JOIN node n ON n.scan_id = ? "
                "AND n.idx = c.node_idx WHERE c.snapshot_id = ? AND c.answered = 1", s["scan_id"], s["counters"]["snapshot_id"]))
        for r in rows:
            if "N/A" in r:
                continue
            v = dict(zip(header, r))
            want = (int(v["PortXmitDataExtended"], 0), int(v["PortXmitWait"], 0))
            self.assertEqual(stored[(v["NodeGUID"], int(v["PortNumber"]))], want)
        # The real run was made with --skip pm: no snapshot, said as none.
        self.assertIsNone(ibroute_json("scan", "--db", db, "--topology", dump("ibdiagnet-ndr", "ibdiagnet2.db_csv"))["counters"])

    def test_a_damaged_lst_or_db_csv_is_one_line_naming_the_place(self):
        lst = read_text(dump("ibdiagnet-ndr", "ibdiagnet2.lst")).splitlines()
        lst[9] = lst[9].replace(" PN:", " PN:zz", 1)
        bad = write_text(self.path("bad.lst"), "\n".join(lst) + "\n")
        r = ibroute("scan", "--db", self.path("x.db"), "--topology", bad, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("bad.lst:10: bad port number", r.stderr)
        self.assertFalse(os.path.exists(self.path("x.db")) and db_rows(self.path("x.db"), "SELECT count(*) FROM scan")[0][0])
        csv = read_text(dump("ibdiagnet-ndr", "ibdiagnet2.db_csv")).split("\n")
        at = csv.index("START_LINKS") + 2
        fields = csv[at].split(",")
        fields[1] = "99"  # a port the switch does not have
        csv[at] = ",".join(fields)
        bad = write_text(self.path("bad.db_csv"), "\n".join(csv))
        r = ibroute("scan", "--db", self.path("y.db"), "--topology", bad, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(f"bad.db_csv:{at + 1}: PortNum1 99 out of range (1..65)", r.stderr)


if __name__ == "__main__":
    unittest.main()
