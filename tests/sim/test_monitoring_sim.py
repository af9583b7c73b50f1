"""ibroute counters and ibroute exporter for monitoring systems, on ibsim + OpenSM with counters set through ibsim's
console (PerformanceSet): --format prometheus checked by Prometheus' own promtool and read back
metric by metric, --format influx written to a real InfluxDB (Debian's influxd, started here) and
queried back through its HTTP API. A switch renamed by a node-name map to a name with a backslash,
a comma, an equals sign, spaces and a non-ASCII letter shows in both as written. Nothing is stored
in the database unless --store. `ibroute exporter` scraped by a real Prometheus server (Debian's),
queried back through its HTTP API for a counter set in ibsim; its memory flat over many scrapes."""
import json
import os
import re
import signal
import shutil
import socket
import subprocess
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from common import EXAMPLES, IBROUTE, TempDirTest, db_rows, ibroute
from simfabric import SimFabric, read_text, write_text

TOPO = f"{EXAMPLES}/hft96-shuffled.topo"
ODD_NAME = "Leaf\\1, row=2 \u00fc"  # Leaf\1, row=2 ü


def cabled_ports(topo):
    """Connected ports of the topology file, counted independently of ibroute (a line per port)."""
    return sum(1 for line in read_text(topo).splitlines() if line.startswith("[") and '"' in line)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prom_samples(text):
    """{(name, frozenset(labels)): value} of an exposition, parsed here (labels unescaped)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-z0-9_]+)(?:\{(.*)\})? (\S+)$', line)
        assert m, line
        labels = {}
        for k, v in re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""):
            labels[k] = re.sub(r'\\(.)', lambda x: {"n": "\n"}.get(x.group(1), x.group(1)), v)
        out[(m.group(1), frozenset(labels.items()))] = float(m.group(3))
    return out


def find(samples, name, **labels):
    hits = [(dict(k[1]), v) for k, v in samples.items() if k[0] == name and all(dict(k[1]).get(a) == b for a, b in labels.items())]
    assert len(hits) == 1, (name, labels, hits[:3])
    return hits[0]


class InfluxServer:
    """Debian's influxd on a port of its own, its data in `d`."""

    def __init__(self, d):
        os.makedirs(d, exist_ok=True)
        self.port = free_port()
        conf = write_text(os.path.join(d, "influxdb.conf"), f"""reporting-disabled = true
bind-address = "127.0.0.1:{free_port()}"
[meta]
  dir = "{d}/meta"
[data]
  dir = "{d}/data"
  wal-dir = "{d}/wal"
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:{self.port}"
  log-enabled = false
[monitor]
  store-enabled = false
""")
        self.log = open(os.path.join(d, "influxd.log"), "w")
        self.proc = subprocess.Popen(["influxd", "-config", conf], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/ping", timeout=2) as r:
                    if r.status == 204:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"influxd did not start: {read_text(os.path.join(d, 'influxd.log'))[-2000:]}")
            time.sleep(0.2)

    def request(self, path, data=None, **params):
        url = f"http://127.0.0.1:{self.port}{path}?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(urllib.request.Request(url, data=data, method="POST" if data is not None else "GET"), timeout=30) as r:
            return r.status, r.read().decode()

    def query(self, q):
        return json.loads(self.request("/query", db="ib", q=q)[1])["results"][0]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


@unittest.skipUnless(shutil.which("promtool") and shutil.which("influxd") and shutil.which("prometheus"), "Prometheus and InfluxDB (scripts/deps.sh)")
class Monitoring(TempDirTest):
    def test_prometheus_and_influx_read_back_by_the_real_consumers(self):
        db, prom, line = self.path("m.db"), self.path("ib.prom"), self.path("ib.influx")
        write_text(prom, "the previous reading\n")
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
            first = prom_samples(ibroute("counters", "--db", db, "--format", "prometheus", sim=sim).stdout)
            guid = find(first, "infiniband_switch_info", switch="ibswitch12")[0]["guid"]
            hca = find(first, "infiniband_hca_info", hca="node2-014")[0]["guid"]
            # ibswitch12 renamed by a node-name map; the scan taken again with it.
            names = write_text(self.path("names"), f'{guid} "{ODD_NAME}"\n')
            ibroute("scan", "--db", db, "--node-name-map", names, sim=sim)
            sim.console('PerformanceSet "ibswitch12"[3] PortCounters.SymbolErrorCounter=7')
            sim.console('PerformanceSet "ibswitch12"[3] PortCounters.LinkDownedCounter=2')
            sim.console('PerformanceSet "ibswitch12"[3] PortCounters.PortXmitWait=12345')
            sim.console('PerformanceSet "ibswitch12"[3] PortCountersExtended.PortXmitData=987654321')
            r = ibroute("counters", "--db", db, "--format", "prometheus", "-o", prom, sim=sim)
            self.assertEqual(r.stdout, "")
            ibroute("counters", "--db", db, "--format", "influx", "-o", line, sim=sim)
        self.assertEqual(db_rows(db, "SELECT COUNT(*) FROM counter_snapshot"), [(0,)], "nothing stored without --store")
        text = read_text(prom)
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        s = prom_samples(text)
        # Every cabled port of the file, switch and host ports, read once.
        read = [k for k in s if k[0] in ("infiniband_switch_port_symbol_error_total", "infiniband_hca_port_symbol_error_total")]
        self.assertEqual(len(read), cabled_ports(TOPO))
        self.assertEqual(sum(v for k, v in s.items() if k[0].endswith("_port_answered")), cabled_ports(TOPO))
        # The values set, on the port the name map renamed; data in bytes (4-octet words x 4).
        self.assertEqual(find(s, "infiniband_switch_info", guid=guid)[0]["switch"], ODD_NAME)
        self.assertEqual(find(s, "infiniband_switch_port_symbol_error_total", guid=guid, port="3")[1], 7)
        self.assertEqual(find(s, "infiniband_switch_port_link_downed_total", guid=guid, port="3")[1], 2)
        self.assertEqual(find(s, "infiniband_switch_port_transmit_wait_total", guid=guid, port="3")[1], 12345)
        data = find(s, "infiniband_switch_port_transmit_data_bytes_total", guid=guid, port="3")[1]
        self.assertTrue(4 * 987654321 <= data < 4 * (987654321 + 10000), data)  # plus the MADs it forwarded since
        # Both ends of the cable, as the topology file has it: ibswitch12[3] - node2-014[1].
        up = find(s, "infiniband_switch_uplink_info", guid=guid, port="3")[0]
        self.assertEqual((up["uplink"], up["uplink_guid"], up["uplink_port"], up["uplink_type"]), ("node2-014", hca, "1", "CA"))
        down = find(s, "infiniband_hca_uplink_info", guid=hca, port="1")[0]
        self.assertEqual((down["uplink"], down["uplink_guid"], down["uplink_port"], down["uplink_type"], down["hca"]),
                         (ODD_NAME, guid, "3", "SW", "node2-014"))
        self.assertEqual(find(s, "infiniband_switch_port_width_lanes", guid=guid, port="3")[1], 4)
        self.assertEqual(find(s, "infiniband_switch_port_rate_bytes_per_second", guid=guid, port="3")[1], 4 * 25e9 / 8)  # 4x EDR: 100 Gb/s of data
        self.assertEqual(find(s, "ibroute_counters_ports", answered="no")[1], 0)

        influx = InfluxServer(self.path("influx"))
        try:
            influx.request("/query", data=b"", q="CREATE DATABASE ib")
            status, body = influx.request("/write", data=read_text(line).encode(), db="ib", precision="ns")
            self.assertEqual(status, 204, body)
            got = influx.query(f"SELECT symbol_errors, link_downed, xmit_wait, xmit_data_bytes FROM infiniband_port "
                               f"WHERE guid = '{guid}' AND port = '3'")
            self.assertEqual(len(got["series"][0]["values"]), 1, got)
            _, symbols, downed, wait, data = got["series"][0]["values"][0]
            self.assertEqual((symbols, downed, wait), (7, 2, 12345))
            self.assertTrue(4 * 987654321 <= data < 4 * (987654321 + 10000), data)
            tags = influx.query(f"SHOW TAG VALUES FROM infiniband_port WITH KEY = node WHERE guid = '{guid}'")
            self.assertEqual([v[1] for v in tags["series"][0]["values"]], [ODD_NAME])
            far = influx.query(f"SHOW TAG VALUES FROM infiniband_port WITH KEY = remote_node WHERE guid = '{hca}'")
            self.assertEqual([v[1] for v in far["series"][0]["values"]], [ODD_NAME])
            points = influx.query("SELECT COUNT(symbol_errors) FROM infiniband_port")
            self.assertEqual(points["series"][0]["values"][0][1], cabled_ports(TOPO))
            active = influx.query("SELECT COUNT(port_state) FROM infiniband_port WHERE port_state = 4 AND physical_state = 5")
            self.assertEqual(active["series"][0]["values"][0][1], cabled_ports(TOPO), "every port Active, LinkUp, read now")
        finally:
            influx.stop()

    def test_store_and_bad_input(self):
        db = self.path("m.db")
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
            ibroute("counters", "--db", db, "--format", "influx", "--store", "--label", "cron", sim=sim)
            self.assertEqual(db_rows(db, "SELECT label FROM counter_snapshot"), [("cron",)])
            for args, text in ((["--format", "graphite"], "--format"), (["-o", self.path("x")], "-o is for --format prometheus or influx"),
                               (["--json", "--format", "prometheus"], "--json and --format prometheus: give one of them"),
                               (["--carry", self.path("c")], "--carry is for --format prometheus or influx")):
                r = ibroute("counters", "--db", db, *args, sim=sim, check=False)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(text, r.stderr)
            r = ibroute("counters", "--db", db, "--format", "prometheus", "-o", self.path("no/such/dir/x.prom"), sim=sim, check=False)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_exporter_scraped_by_a_real_prometheus(self):
        db, port, web = self.path("e.db"), free_port(), free_port()
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
            exporter = subprocess.Popen([IBROUTE, "exporter", "--db", db, "--listen", f"127.0.0.1:{port}", "--min-interval", "0.2"],
                                        env=sim.env(), cwd=sim.dir, stderr=subprocess.PIPE, text=True)
            prom = None
            try:
                url = f"http://127.0.0.1:{port}/metrics"
                body = wait_for(lambda: get(url))
                guid = find(prom_samples(body), "infiniband_switch_info", switch="ibswitch12")[0]["guid"]
                sim.console('PerformanceSet "ibswitch12"[3] PortCounters.SymbolErrorCounter=7')
                # Only GET /metrics is answered; the port taken is said in one line.
                for method, path in (("GET", "/"), ("POST", "/metrics")):
                    with self.assertRaises(urllib.error.HTTPError, msg=(method, path)):
                        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=b"" if method == "POST" else None,
                                                                      method=method), timeout=10)
                r = ibroute("exporter", "--db", db, "--listen", f"127.0.0.1:{port}", sim=sim, check=False)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("cannot listen there", r.stderr)
                self.assertEqual(len([l for l in r.stderr.splitlines() if l.startswith("ibroute:")]), 1, r.stderr)
                # A real Prometheus scrapes it every second; its API gives back the value set.
                d = self.path("prometheus")
                os.makedirs(d)
                conf = write_text(os.path.join(d, "prometheus.yml"), "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                                  f"scrape_configs:\n  - job_name: ib\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
                prom = subprocess.Popen(["prometheus", f"--config.file={conf}", f"--storage.tsdb.path={d}/data",
                                         f"--web.listen-address=127.0.0.1:{web}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                q = urllib.parse.urlencode({"query": f'infiniband_switch_port_symbol_error_total{{guid="{guid}",port="3"}}'})

                def seven():
                    got = json.loads(get(f"http://127.0.0.1:{web}/api/v1/query?{q}"))["data"]["result"]
                    return got if got and got[0]["value"][1] == "7" else None
                result = wait_for(seven, timeout=90)
                self.assertEqual(result[0]["metric"]["job"], "ib")
                up = json.loads(get(f"http://127.0.0.1:{web}/api/v1/query?query=up"))["data"]["result"]
                self.assertEqual([x["value"][1] for x in up], ["1"])
                # Memory flat over many scrapes: each reading is a process of its own. (Not under
                # AddressSanitizer, whose quarantine keeps what was freed by design.)
                for _ in range(20):
                    get(url)
                before = rss_kib(exporter.pid)
                for _ in range(100):
                    get(url)
                if "ASAN_OPTIONS" not in os.environ:
                    self.assertLess(rss_kib(exporter.pid) - before, 2048, "resident memory grew by 2 MiB over 100 scrapes")
            finally:
                if prom:
                    prom.terminate()
                    prom.wait(30)
                exporter.send_signal(signal.SIGTERM)
                rc = exporter.wait(30)
        self.assertEqual(rc, 0, exporter.stderr.read())

    def test_a_port_that_goes_down_stays_reported_with_its_last_counters(self):
        """node2-040's cable (ibswitch01 port 1) pulled in ibsim while the exporter runs: the host port
        no longer answers and is still reported, with the counters last read (answered 0); the switch
        port answers with PortState Down; nothing else changes its state."""
        db, port = self.path("down.db"), free_port()
        with SimFabric(TOPO, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
            sim.console('PerformanceSet "node2-040"[1] PortCounters.SymbolErrorCounter=5')
            sim.console('PerformanceSet "node2-040"[1] PortCounters.PortXmitWait=4321')
            exporter = subprocess.Popen([IBROUTE, "exporter", "--db", db, "--listen", f"127.0.0.1:{port}", "--min-interval", "0"],
                                        env=sim.env(), cwd=sim.dir, stderr=subprocess.PIPE, text=True)
            try:
                url = f"http://127.0.0.1:{port}/metrics"
                before = prom_samples(wait_for(lambda: get(url)))
                host = find(before, "infiniband_hca_info", hca="node2-040")[0]["guid"]
                switch = find(before, "infiniband_switch_info", switch="ibswitch01")[0]["guid"]
                self.assertEqual(find(before, "infiniband_hca_port_symbol_error_total", guid=host, port="1")[1], 5)
                self.assertEqual(find(before, "infiniband_hca_port_answered", guid=host, port="1")[1], 1)
                self.assertEqual(find(before, "infiniband_hca_port_state", guid=host, port="1")[1], 4, "Active")
                self.assertEqual(find(before, "infiniband_switch_port_state", guid=switch, port="1")[1], 4)
                states = {k: v for k, v in before.items() if k[0].endswith("_port_state")}
                self.assertEqual(set(states.values()), {4}, "every cabled port Active before")
                self.assertEqual(len(states), cabled_ports(TOPO))
                sim.console('Unlink "ibswitch01"[1]')
                after = prom_samples(get(url))
                self.assertEqual(find(after, "infiniband_hca_port_answered", guid=host, port="1")[1], 0)
                self.assertEqual(find(after, "infiniband_hca_port_symbol_error_total", guid=host, port="1")[1], 5, "its last counters")
                self.assertEqual(find(after, "infiniband_hca_port_transmit_wait_total", guid=host, port="1")[1], 4321)
                self.assertNotIn(("infiniband_hca_port_state", frozenset({("guid", host), ("port", "1")})), after, "not read: not said")
                self.assertEqual(find(after, "infiniband_switch_port_state", guid=switch, port="1")[1], 1, "Down, read at the switch")
                self.assertEqual(find(after, "ibroute_counters_ports_carried")[1], 1)
                changed = {k for k, v in after.items() if k[0].endswith("_port_state") and v != 4}
                self.assertEqual(changed, {("infiniband_switch_port_state", frozenset({("guid", switch), ("port", "1")}))})
                # Still there a reading later (carried on), and promtool takes the exposition.
                again = get(url)
                self.assertEqual(find(prom_samples(again), "infiniband_hca_port_symbol_error_total", guid=host, port="1")[1], 5)
                check = subprocess.run(["promtool", "check", "metrics"], input=again, capture_output=True, text=True)
                self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
            finally:
                exporter.send_signal(signal.SIGTERM)
                rc = exporter.wait(30)
        self.assertEqual(rc, 0, exporter.stderr.read())


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


def wait_for(probe, timeout=60):
    """probe()'s first true answer; a probe that raises OSError (not up yet) is tried again."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = probe()
            if got:
                return got
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing within {timeout} s")
        time.sleep(0.3)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


if __name__ == "__main__":
    unittest.main()
