"""ibroute counters on ibsim: the ports' own PerfMgt counters, values set through ibsim's console
(PerformanceSet), read as snapshots, printed per link as what changed; a 32-bit counter that
wrapped between snapshots; a switch that does not answer; accept's max_link_errors check."""
import json
import unittest

from common import EXAMPLES, TempDirTest, ibroute, ibroute_json
from simfabric import SimFabric, read_text, write_text

TOPO = f"{EXAMPLES}/hft96-shuffled.topo"


def cabled_ports(topo):
    """Connected ports of the topology file, counted independently of ibroute (a line per port)."""
    return sum(1 for line in read_text(topo).splitlines() if line.startswith("[") and '"' in line)


def by_link(doc):
    return {p["link"]: p for p in doc["ports"]}


class Counters(TempDirTest):
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
        expect = write_text(self.path("e.json"), json.dumps({"max_link_errors": 0}))
        r = ibroute("accept", "--db", db, "--expect", expect, "--simulate", "--json", "--report", self.path("a.html"), check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        checks = {c["check"]: c for c in json.loads(r.stdout)["checks"]}
        self.assertEqual(checks["link_errors"]["result"], "fail")
        self.assertEqual(checks["link_errors"]["detail"], hot["link"] + ": LinkDownedCounter +1")
        ok = write_text(self.path("ok.json"), json.dumps({"max_link_errors": 1}))
        r = ibroute("accept", "--db", db, "--expect", ok, "--simulate", "--json", "--report", self.path("b.html"), check=False)
        self.assertEqual({c["check"]: c["result"] for c in json.loads(r.stdout)["checks"]}["link_errors"], "pass")
        # The snapshots are in the database, labelled.
        self.assertEqual(len(json.loads(ibroute("scans", "--db", db, "--json").stdout)), 1)

    def test_not_measured_without_two_snapshots(self):
        db = self.path("n.db")
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
        expect = write_text(self.path("e.json"), json.dumps({"max_link_errors": 0}))
        r = ibroute("accept", "--db", db, "--expect", expect, "--simulate", "--json", "--report", self.path("a.html"), check=False)
        c = {c["check"]: c for c in json.loads(r.stdout)["checks"]}["link_errors"]
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
