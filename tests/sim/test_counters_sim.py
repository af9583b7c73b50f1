"""ibroute counters on ibsim: the ports' own PerfMgt counters, values set through ibsim's console
(PerformanceSet), read as snapshots, printed per link as what changed; a 32-bit counter that
wrapped between snapshots; a switch that does not answer; accept's max_link_errors check."""
import collections
import json
import unittest

from common import EXAMPLES, TempDirTest, db_rows, ibroute, ibroute_json
from simfabric import SimFabric, read_text, write_text

TOPO = f"{EXAMPLES}/hft96-shuffled.topo"


def cabled_ports(topo):
    """Connected ports of the topology file, counted independently of ibroute (a line per port)."""
    return sum(1 for line in read_text(topo).splitlines() if line.startswith("[") and '"' in line)


def by_link(doc):
    return {p["link"]: p for p in doc["ports"]}


class Counters(TempDirTest):
    def accept(self, db, expect, report, *args):
        """accept --simulate with this expectation: its exit code, its JSON, and its checks by name."""
        e = write_text(self.path(report + ".json"), json.dumps(expect))
        r = ibroute("accept", "--db", db, "--expect", e, "--simulate", "--counters", "snapshots", *args, "--json", "--report",
                    self.path(report + ".html"), check=False)
        doc = json.loads(r.stdout) if r.stdout else {"checks": []}
        return r, doc, {c["check"]: c for c in doc["checks"]}

    def test_snapshots_deltas_wrap_and_errors(self):
        db = self.path("c.db")
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
            # A 32-bit PortXmitWait near its top before the first snapshot.
            sim.console('PerformanceSet "ibswitch05"[2] PortCounters.PortXmitWait=4294967000')
            first = ibroute_json("counters", "--db", db, "--label", "before", sim=sim)
            self.assertIsNone(first["previous_snapshot_id"])
            self.assertEqual(first["ports_read"], cabled_ports(TOPO))
            self.assertEqual(first["unanswered"], [])
            sim.console('PerformanceSet "ibswitch12"[3] PortCounters.SymbolErrorCounter=7')
            sim.console('PerformanceSet "ibswitch12"[3] PortCounters.PortXmitWait=12345')
            sim.console('PerformanceSet "ibswitch12"[3] PortCountersExtended.PortXmitData=987654321')
            sim.console('PerformanceSet "ibswitch05"[2] PortCounters.PortXmitWait=100')
            second = ibroute_json("counters", "--db", db, "--label", "after", sim=sim)
            sim.console('PerformanceSet "ibswitch12"[3] PortCounters.LinkDownedCounter=1')
            text = ibroute("counters", "--db", db, "--top", "3", sim=sim).stdout
        self.assertEqual(second["previous_snapshot_id"], first["snapshot_id"])
        ports = by_link(second)
        hot = [p for p in second["ports"] if p["link"].startswith("ibswitch12[3] ->")]
        self.assertEqual(len(hot), 1)
        hot = hot[0]
        self.assertEqual(second["ports"][0]["link"], hot["link"])  # worst first: the port whose errors rose
        self.assertEqual(hot["delta"]["symbol_errors"], 7)
        self.assertEqual(hot["delta"]["xmit_wait"], 12345)
        # Set, plus the few MADs the port forwarded since (the second reading's own among them).
        self.assertTrue(987654321 <= hot["now"]["xmit_data"] < 987654321 + 10000, hot["now"])
        self.assertGreater(hot["delta"]["xmit_data"], 987654321 - 10000)  # less what the first snapshot had
        self.assertEqual(hot["xmit_bytes"], hot["delta"]["xmit_data"] * 4)  # PortXmitData counts 4-octet words
        self.assertEqual(hot["errors"], 7)
        wrapped = [p for p in second["ports"] if p["link"].startswith("ibswitch05[2] ->")][0]
        self.assertEqual(wrapped["delta"]["xmit_wait"], 100 + 2**32 - 4294967000)
        self.assertIn("xmit_wait", wrapped["wrapped"])
        self.assertEqual([e["link"] for e in second["error_counts"]], [hot["link"]])
        self.assertEqual(second["no_extended"], [])  # ibsim's PMAs all have PortCountersExtended
        # The terminal names the link as topo and routes do, with its deltas.
        self.assertIn(hot["link"], text)
        self.assertIn("LinkDownedCounter +1", text)  # since the second snapshot
        self.assertIn("SymbolErrorCounter 7, LinkDownedCounter 1", text)  # absolute
        self.assertEqual(len(ports), cabled_ports(TOPO))

        # accept: the scan's last two snapshots (the link went down once between them), so
        # max_link_errors 0 fails naming it.
        r, r_json, checks = self.accept(db, {"max_link_errors": 0}, "a")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(checks["link_errors"]["result"], "fail")
        self.assertEqual(checks["link_errors"]["detail"], hot["link"] + ": LinkDownedCounter +1")
        # ... and the repair list names that port, by its node GUID and number.
        named = [x for x in r_json["diagnosis"]["suspects"] if x["where"] == hot["link"]]
        self.assertEqual(len(named), 1, r_json["diagnosis"])
        self.assertEqual((named[0]["guid"], named[0]["port"]), (hot["node_guid"], hot["port"]))
        self.assertIn("LinkDownedCounter +1", named[0]["evidence"][0])
        _, _, checks = self.accept(db, {"max_link_errors": 1}, "b")
        self.assertEqual(checks["link_errors"]["result"], "pass")
        # The snapshots are in the database, labelled.
        self.assertEqual(len(json.loads(ibroute("scans", "--db", db, "--json").stdout)["scans"]), 1)

    def test_measured_against_planned_per_link_and_congestion(self):
        """accept --simulate: the scan's last two snapshots beside one round of the plan. The planned
        bytes per link are recomputed here from the stored routes: at LMC 0 each ordered pair of the
        host set sends one message over its only route, whatever the phases."""
        db = self.path("m.db")
        size = 1 << 20
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
            name = dict(db_rows(db, "SELECT idx, desc FROM node WHERE scan_id=1"))
            cas = db_rows(db, "SELECT p.node_idx, p.base_lid, p.peer_node FROM port p JOIN node n ON n.idx=p.node_idx AND "
                              "n.scan_id=p.scan_id WHERE p.scan_id=1 AND n.type='ca' AND p.peer_node IS NOT NULL ORDER BY n.desc")[::7]
            routes = {(i, d): h for i, d, h in db_rows(db, "SELECT ingress, dlid, hops FROM route WHERE scan_id=1")}
            per_link = collections.Counter()
            for src, _, ingress in cas:
                for dst, dlid, _ in cas:
                    if src != dst:
                        for hop in routes[(ingress, dlid)].split():
                            n, p = map(int, hop.split(":"))
                            per_link[(n, p)] += 1
            (busy_node, busy_port), transfers = per_link.most_common(1)[0]
            busy = f"{name[busy_node]}[{busy_port}]"
            idle = next(f"{name[n]}[{p}]" for n, p in ((n, p) for n in name for p in range(1, 13))
                        if name[n].startswith("ibswitch") and (n, p) not in per_link and
                        db_rows(db, "SELECT 1 FROM port WHERE scan_id=1 AND node_idx=? AND num=? AND peer_node IS NOT NULL", n, p))
            for port in (busy, idle):
                sim.console(f'PerformanceSet "{port.split("[")[0]}"[{port.split("[")[1][:-1]}] PortCountersExtended.PortXmitData=0')
            ibroute("counters", "--db", db, "--label", "before", sim=sim)
            # The busy link carried its planned bytes; a link the plan never uses carried 64 MiB.
            sim.console(f'PerformanceSet "{busy.split("[")[0]}"[{busy_port}] PortCountersExtended.PortXmitData={transfers * size // 4}')
            sim.console(f'PerformanceSet "{busy.split("[")[0]}"[{busy_port}] PortCounters.PortXmitWait=4000000000')
            sim.console(f'PerformanceSet "{idle.split("[")[0]}"[{idle.split("[")[1][:-1]}] PortCountersExtended.PortXmitData={(64 << 20) // 4}')
            ibroute("counters", "--db", db, "--label", "after", sim=sim)
        hosts = ",".join(name[n] for n, _, _ in cas)
        r, doc, checks = self.accept(db, {"max_congestion": 0.5, "xmit_wait_tick_ns": 1000}, "m", "--hosts", hosts, "--message-size", "1MiB")
        self.assertEqual(r.returncode, 1, r.stderr)
        lm = doc["links_measured"]
        self.assertTrue(lm["measured"])
        rows = {x["link"].split(" ->")[0]: x for x in lm["rows"]}
        self.assertEqual(rows[busy]["planned_bytes"], transfers * size)
        # Measured: what was set, plus the few MADs the port forwarded between the readings.
        self.assertGreaterEqual(rows[busy]["measured_bytes"], transfers * size)
        self.assertLess(rows[busy]["measured_bytes"], transfers * size + 100000)
        self.assertAlmostEqual(rows[busy]["ratio"], 1.0, places=3)
        self.assertEqual(rows[idle]["planned_bytes"], 0)
        self.assertGreaterEqual(rows[idle]["measured_bytes"], 64 << 20)
        self.assertIsNone(rows[idle]["ratio"])
        self.assertGreaterEqual(lm["off_links"], 1)
        self.assertEqual(lm["planned_links"], len(per_link) + len(cas), "every switch out-port of a route (the last into the host), and every host's own up-link")
        # Congestion: 4e9 ticks of 1 us exceed the plan's round: the whole run waited on that link.
        self.assertEqual(rows[busy]["wait_share"], 1.0)
        c = checks["congestion"]
        self.assertEqual(c["result"], "fail")
        self.assertTrue(c["detail"].startswith(busy + " ->"), c["detail"])
        # Without --counters snapshots a simulation judges no counters: nothing ran in its window.
        r2 = ibroute("accept", "--db", db, "--expect", self.path("m.json"), "--simulate", "--json", "--hosts", hosts,
                     "--report", self.path("m2.html"), check=False)
        d2 = json.loads(r2.stdout)
        self.assertFalse(d2["links_measured"]["measured"])
        self.assertIn("a simulation sends no traffic", d2["links_measured"]["why"])
        self.assertEqual({x["check"]: x for x in d2["checks"]}["congestion"]["result"], "not measured")
        with open(self.path("m.html")) as f:
            html = f.read()
        self.assertIn('id="measured-vs-planned"', html)
        self.assertIn(busy, html)
        # Without the switches' tick the share cannot be told: not measured, said so.
        c = self.accept(db, {"max_congestion": 0.5}, "m2", "--hosts", hosts)[2]["congestion"]
        self.assertEqual(c["result"], "not measured")
        self.assertIn("xmit_wait_tick_ns", c["measured"])

    def test_not_measured_without_two_snapshots(self):
        db = self.path("n.db")
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
        c = self.accept(db, {"max_link_errors": 0}, "a")[2]["link_errors"]
        self.assertEqual(c["result"], "not measured")
        self.assertIn("0 counter snapshot(s)", c["measured"])

    def test_a_switch_that_does_not_answer(self):
        db = self.path("s.db")
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
            for p in range(0, 13):
                sim.console(f'Error "ibspine02"[{p}] 100')  # every packet into the spine dropped
            r = ibroute("counters", "--db", db, "--json", "--timeout", "50", "--retries", "1", sim=sim, check=False, timeout=120)
        self.assertEqual(r.returncode, 3, r.stderr)  # stored, but some ports did not answer
        d = json.loads(r.stdout)
        silent = {u["link"].split(" ->")[0] for u in d["unanswered"]}
        # The spine's 12 ports, and those whose PMA the reading port reaches through the spine
        # (its LID route crosses it); every other port is read.
        self.assertEqual({s for s in silent if s.startswith("ibspine02[")}, {f"ibspine02[{p}]" for p in range(1, 13)})
        self.assertEqual(d["ports_read"] + len(d["unanswered"]), cabled_ports(TOPO))
        self.assertGreater(d["ports_read"], cabled_ports(TOPO) // 2)


if __name__ == "__main__":
    unittest.main()
