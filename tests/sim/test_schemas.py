"""The JSON Schemas of the exchange formats (docs/schemas/) against what ibroute really writes and
reads. Offline and fast: the fuzz targets' tiny fabric (3 hosts, LMC 1) imported from text, no
simulator. Schedules (version 2 shift and list encodings, two groups, version 1 rebuilt from the
CSV export), per-node slices, expectation files and run reports must pass their schema; damaged
ones must be refused by the schema and by ibroute alike (exit 2). The rule checked over the fuzz
corpus: whatever the schema refuses, ibroute refuses too (the schema is never stricter than the
reader; the reader additionally checks cross-field rules a schema cannot state)."""
import copy
import csv
import glob
import json
import os
import unittest

from common import EXAMPLES, SOURCE, TempDirTest, ibroute
from schedule_check import check_all_to_all, check_groups, explicit, phases_of
from test_accept_sim import EXPECT

try:
    from jsonschema import Draft202012Validator  # python3-jsonschema (Debian 12: 4.10.3)
except ImportError:  # pragma: no cover
    Draft202012Validator = None

SCHEMAS = os.path.join(SOURCE, "docs", "schemas")
CORPUS = os.path.join(SOURCE, "tests", "fuzz", "corpus")
TOPO = os.path.join(CORPUS, "ibnetdiscover", "tiny.topo")
LFTS = os.path.join(CORPUS, "lft_dump", "tiny.dump_fts")
NAMES = ("schedule", "schedule-slice", "schedule-hosts", "run-report", "expectation")


def load(path):
    with open(path) as f:
        return json.load(f)


def dig(doc, keys):
    """The container of keys[-1] in doc (keys: a path of dict keys and list indices)."""
    for k in keys[:-1]:
        doc = doc[k]
    return doc


def setting(*keys, value):
    def edit(doc):
        dig(doc, keys)[keys[-1]] = value
    return edit


def deleting(*keys):
    def edit(doc):
        del dig(doc, keys)[keys[-1]]
    return edit


def full_hosts(test, schedule):
    return test.export(schedule)["hosts"]


class SchemaTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        if Draft202012Validator is None:
            raise AssertionError("python3-jsonschema is not installed (scripts/deps.sh installs it)")
        cls.schemas = {n: load(os.path.join(SCHEMAS, f"{n}.schema.json")) for n in NAMES}
        # No format checker: "format" keywords are annotations here (and the schemas use none).
        cls.validators = {n: Draft202012Validator(s) for n, s in cls.schemas.items()}

    def setUp(self):
        super().setUp()
        self.db = self.path("f.db")
        ibroute("scan", "--db", self.db, "--topology", TOPO, "--lfts", LFTS)
        ibroute("plan", "--db", self.db, "--name", "a2a")
        names = [h["name"] for h in self.export("a2a")["hosts"]]
        # Two overlapping groups: shifts where a sender has no receiver, or would send to itself ('.').
        ibroute("plan", "--db", self.db, "--name", "daq", "--senders", ",".join(names[:2]), "--receivers", ",".join(names[1:]))

    # --- helpers ---------------------------------------------------------------------------------

    def export(self, schedule, *args, name=None):
        out = self.path(name or f"{schedule}.json")
        ibroute("export", "--db", self.db, "--schedule", schedule, "-o", out, *args)
        return load(out) if out.endswith(".json") else out

    def write(self, name, doc):
        p = self.path(name)
        with open(p, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return p

    def errors(self, schema, doc):
        return [f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:160]}" for e in self.validators[schema].iter_errors(doc)]

    def assert_valid(self, schema, doc, label=""):
        errors = self.errors(schema, doc)
        self.assertEqual(errors, [], f"{label} does not match docs/schemas/{schema}.schema.json")

    def assert_invalid(self, schema, doc, label=""):
        self.assertNotEqual(self.errors(schema, doc), [], f"{label}: the {schema} schema accepts it")

    def validate(self, path):
        """`ibroute validate` on a schedule file: exit 0 all checks pass, 1 one fails, 2 not readable."""
        return ibroute("validate", "--db", self.db, path, "--json", check=False)

    def assert_refused(self, r, label):
        """ibroute's answer to bad input: exit 2 and one line on stderr."""
        self.assertEqual(r.returncode, 2, f"{label}: ibroute read it ({r.stderr or r.stdout[:300]})")
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, f"{label}: {r.stderr}")

    def accept(self, expect, *args):
        return ibroute("accept", "--db", self.db, "--expect", expect, "--report", self.path("r.html"), "--json", *args, check=False)

    # --- the schemas themselves ------------------------------------------------------------------

    def test_schemas_are_draft_2020_12_and_self_describing(self):
        for name, schema in self.schemas.items():
            with self.subTest(schema=name):
                Draft202012Validator.check_schema(schema)
                self.assertEqual(schema["$schema"], "https://json-schema.org/draft/2020-12/schema")
                self.assertEqual(schema["$id"], f"https://ibroute.invalid/schemas/{name}.schema.json")
                self.assertTrue(schema["title"] and schema["description"])
                self.assertTrue(schema.get("required") or name == "expectation")  # every expectation key is optional
                # Every top-level field is described (directly, or by the definition it refers to).
                for key, sub in schema["properties"].items():
                    ref = sub.get("$ref", "")
                    described = "description" in sub or "description" in schema["$defs"].get(ref.rsplit("/", 1)[-1], {})
                    self.assertTrue(described, f"{name}: {key} has no description")

    # --- schedules ---------------------------------------------------------------------------------

    def test_exported_all_to_all_shift_encoding(self):
        doc = self.export("a2a")
        self.assertEqual((doc["version"], doc["phases"]["encoding"]), (2, "shift"))
        self.assertNotIn("groups", doc)
        check_all_to_all(doc)
        self.assert_valid("schedule", doc, "export --format json")
        self.assertEqual(self.validate(self.path("a2a.json")).returncode, 0)

    def test_exported_two_groups(self):
        doc = self.export("daq")
        self.assertEqual(doc["groups"], {"senders": [0, 1], "receivers": [1, 2]})
        self.assertTrue(any("." in line for line in doc["phases"]["offsets"]), doc["phases"])
        check_groups(doc)
        self.assert_valid("schedule", doc, "two-group export")
        self.assertEqual(self.validate(self.path("daq.json")).returncode, 0)
        # The same in the list encoding (version 2, as another tool may write it): read alike.
        listed = dict(doc, phases=phases_of(doc))
        self.assert_valid("schedule", listed, "two groups, list encoding")
        r = self.validate(self.write("daq-list.json", listed))
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_version_1_built_from_the_csv_export(self):
        doc = self.export("a2a")
        phases = [[] for _ in doc["phases"]["shifts"]]
        hosts = doc["hosts"]
        with open(self.export("a2a", "--format", "csv", name="a2a.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(list(rows[0]), ["phase", "src", "dst", "src_name", "dst_name", "dlid", "dlid_offset"])
        for row in rows:
            src, dst, dlid = int(row["src"]), int(row["dst"]), int(row["dlid"])
            self.assertEqual((row["src_name"], row["dst_name"]), (hosts[src]["name"], hosts[dst]["name"]))
            self.assertEqual(int(row["dlid_offset"]), dlid - hosts[dst]["base_lid"])
            phases[int(row["phase"])].append({"src": src, "dst": dst, "dlid": dlid})
        v1 = {k: v for k, v in doc.items() if k != "phases"}
        v1.update(version=1, phases=phases)
        # The CSV and the shift encoding (decoded independently) say the same.
        key = lambda t: (t["src"], t["dst"], t["dlid"])
        self.assertEqual([sorted(p, key=key) for p in phases], [sorted(p, key=key) for p in explicit(doc)["phases"]])
        self.assert_valid("schedule", v1, "version 1 from the CSV")
        r = self.validate(self.write("v1.json", v1))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertTrue(json.loads(r.stdout)["ok"])
        # Version 1 has no shift encoding: schema and reader refuse it alike.
        bad = dict(doc, version=1)
        self.assert_invalid("schedule", bad, "version 1 with shift phases")
        self.assert_refused(self.validate(self.write("v1-shift.json", bad)), "version 1 with shift phases")

    def test_two_digit_offsets(self):
        """LMC above 4: two hex digits per offset (synthesised; the tiny fabric has LMC 1)."""
        doc = self.export("a2a")
        for k, h in enumerate(doc["hosts"]):
            h.update(lmc=5, base_lid=32 * (k + 1))
        doc["fabric"]["lmc"] = 5
        doc["phases"]["offset_digits"] = 2
        doc["phases"]["offsets"] = ["1f" * len(doc["hosts"]) for _ in doc["phases"]["shifts"]]
        self.assert_valid("schedule", doc, "two-digit offsets")
        r = self.validate(self.write("lmc5.json", doc))
        self.assertEqual(r.returncode, 1, "readable; fails the fabric check (other LIDs than the scan's)")
        for bad, label in ((["1f0"] * 2, "three characters"), (["1." * 3] * 2, "half a dot code")):
            broken = copy.deepcopy(doc)
            broken["phases"]["offsets"] = bad
            self.assert_invalid("schedule", broken, label)
            self.assert_refused(self.validate(self.write("bad.json", broken)), label)

    def test_what_the_reader_also_takes(self):
        """The schema is no stricter than the reader: GUIDs in either case without leading zeros, and
        unknown keys (ignored by the reader) pass both."""
        good = self.export("a2a")
        port = good["hosts"][1]["port_guid"]
        cases = [("upper-case GUID without leading zeros", setting("hosts", 1, "port_guid", value="0x" + port[2:].lstrip("0").upper())),
                 ("GUID with 17 digits", setting("hosts", 1, "port_guid", value="0x0" + port[2:])),
                 ("unknown keys", lambda d: (d.update(comment="planned for the DAQ"), d["hosts"][0].update(rack="A3"),
                                             d["phases"].update(note="x")))]
        for label, edit in cases:
            with self.subTest(label):
                doc = copy.deepcopy(good)
                edit(doc)
                self.assert_valid("schedule", doc, label)
                r = self.validate(self.write("ok.json", doc))
                self.assertEqual(r.returncode, 0, f"{label}: {r.stderr}")

    def test_damaged_schedules_are_refused_by_schema_and_reader(self):
        good, daq = self.export("a2a"), self.export("daq")
        v1 = explicit(good)
        cases = [
            ("wrong format", good, setting("format", value="ibroute-schedules")),
            ("version 4", good, setting("version", value=4)),
            ("version as a string", good, setting("version", value="2")),
            ("missing hosts", good, deleting("hosts")),
            ("no hosts", good, setting("hosts", value=[])),
            ("LID 60000", good, setting("hosts", 0, "base_lid", value=60000)),
            ("LMC 8", good, setting("hosts", 1, "lmc", value=8)),
            ("LIDs beyond the unicast range", good, setting("hosts", 2, "base_lid", value=49151)),
            ("GUID without 0x", good, setting("hosts", 0, "port_guid", value="0002c90300a00011")),
            ("control character", good, setting("hosts", 0, "name", value="n01\tHCA-1")),
            ("negative rate", good, setting("timing", "rate", value=-1)),
            ("missing fabric", good, deleting("fabric")),
            ("missing phases", good, deleting("phases")),
            ("unknown encoding", good, setting("phases", "encoding", value="zigzag")),
            ("three offset digits", good, setting("phases", "offset_digits", value=3)),
            ("not a hex digit", good, setting("phases", "offsets", 0, value="0g0")),
            ("upper-case hex", good, setting("phases", "offsets", 0, value="0A0")),
            ("a shift twice", good, setting("phases", "shifts", value=[1, 1])),
            ("empty group", daq, setting("groups", "senders", value=[])),
            ("a rank twice in a group", daq, setting("groups", "receivers", value=[2, 2])),
            ("no shifts", good, lambda d: d["phases"].update(shifts=[], offsets=[])),
            ("v1 without phases", v1, setting("phases", value=[])),
            ("v1 DLID 60000", v1, setting("phases", 0, 0, "dlid", value=60000)),
            ("v1 rank as a string", v1, setting("phases", 1, 0, "src", value="0")),
            ("v1 transfer without dlid", v1, deleting("phases", 0, 1, "dlid")),
        ]
        for label, base, edit in cases:
            with self.subTest(label):
                doc = copy.deepcopy(base)
                edit(doc)
                self.assert_invalid("schedule", doc, label)
                self.assert_refused(self.validate(self.write("bad.json", doc)), label)
        # A slice is not a schedule.
        self.assert_invalid("schedule", dict(good, format="ibroute-schedule-slice"))

    def test_fuzz_corpus_schedules(self):
        self.corpus("schedule", "schedule", lambda p: self.validate(p))

    # --- per-node slices -------------------------------------------------------------------------

    def test_per_node_slices(self):
        for schedule in ("a2a", "daq"):
            with self.subTest(schedule):
                full = self.export(schedule, "--per-node", self.path(schedule))
                files = sorted(glob.glob(os.path.join(self.path(schedule), "rank*.json")))
                self.assertEqual(len(files), len(full["hosts"]))
                table = load(os.path.join(self.path(schedule), "hosts.json"))
                self.assert_valid("schedule-hosts", table, "hosts.json")
                self.assertEqual((table["hosts"], table.get("groups")), (full["hosts"], full.get("groups")))
                self.assert_invalid("schedule-slice", table, "the host table as a slice")
                for rank, f in enumerate(files):
                    s = load(f)
                    self.assert_valid("schedule-slice", s, os.path.basename(f))
                    self.assertEqual((s["format"], s["version"], s["rank"], s["host"], s["hosts_count"], s["hosts_file"]),
                                     ("ibroute-schedule-slice", 4, rank, full["hosts"][rank], len(full["hosts"]), "hosts.json"))
                    self.assert_invalid("schedule", s, "a slice as a schedule")
                    self.assert_invalid("schedule-hosts", s, "a slice as a host table")
        s = load(sorted(glob.glob(os.path.join(self.path("a2a"), "rank*.json")))[0])
        self.assertTrue(s["sends"]["dst"] and s["receives"]["src"])
        cases = [
            ("wrong format", setting("format", value="ibroute-schedule")),
            ("missing rank", deleting("rank")),
            ("missing host", deleting("host")),
            ("missing hosts_count", deleting("hosts_count")),
            ("hosts_file in another folder", setting("hosts_file", value="../hosts.json")),
            ("DLID 60000", setting("sends", "dlid", 0, value=60000)),
            ("negative phase", setting("receives", "phase", value=[-1])),
            ("sends a list (older versions' form)", setting("sends", value=[{"phase": 0, "dst": 1, "dlid": 5}])),
            ("receives without src", deleting("receives", "src")),
            ("version 5", setting("version", value=5)),
        ]
        for label, edit in cases:
            doc = copy.deepcopy(s)
            edit(doc)
            self.assert_invalid("schedule-slice", doc, label)
        # A slice of versions 1..3 (every host in each) still passes: older exports stay valid.
        old = {k: v for k, v in s.items() if k not in ("host", "hosts_count", "hosts_file", "phases")}
        old.update(version=2, hosts=full_hosts(self, "a2a"), sends=[{"phase": 0, "dst": 1, "dlid": s["sends"]["dlid"][0]}], receives=[])
        self.assert_valid("schedule-slice", old, "a version-2 slice")

    def test_epochs(self):
        """ibroute watch's epochs (offline: the same files read again): their files match the schemas,
        carry the epoch, and a damaged epoch header is refused by schema and reader alike."""
        out = self.path("epochs")
        r = ibroute("watch", "--db", self.db, "--schedule", "daq", "--export", out, "--topology", TOPO, "--lfts", LFTS, "--scans", "2",
                    "--interval", "0.05", "--json")
        events = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual([e["event"] for e in events], ["start", "epoch", "stopped"], "the second read: no change, no epoch")
        self.assertEqual(os.readlink(os.path.join(out, "current")), "epoch-000001")
        whole = load(os.path.join(out, "schedule.json"))
        self.assert_valid("schedule", whole, "an epoch's schedule")
        self.assertEqual(whole["epoch"], 1)
        self.assertGreater(whole["epoch_from_unix_ns"], 0)
        check_groups(whole)
        for f in glob.glob(os.path.join(out, "epoch-000001", "rank*.json")):
            s = load(f)
            self.assert_valid("schedule-slice", s, os.path.basename(f))
            self.assertEqual((s["epoch"], s["epoch_from_unix_ns"]), (1, whole["epoch_from_unix_ns"]))
        for label, edit in (("epoch 0", setting("epoch", value=0)), ("epoch without its time", deleting("epoch_from_unix_ns")),
                            ("a negative time", setting("epoch_from_unix_ns", value=-1))):
            doc = copy.deepcopy(whole)
            edit(doc)
            self.assert_invalid("schedule", doc, label)
            self.assert_refused(self.validate(self.write("bad-epoch.json", doc)), label)

    # --- expectation files -----------------------------------------------------------------------

    def test_expectations(self):
        examples = [("examples/expect-hft864.json", load(os.path.join(EXAMPLES, "expect-hft864.json"))),
                    ("test_accept_sim.EXPECT", EXPECT),
                    ("empty", {}),
                    ("variants", {"topology": 3, "link_speed": "XDR", "min_sustainable_rate": "4G", "message_size": "64KiB"}),
                    ("variants 2", {"topology": "4-level", "min_rate_per_node": "12.5G", "message_size": "1048576"}),
                    ("variants 3", {"topology": "single-level", "min_rate_per_node": "800MB/s", "congestion_free": False}),
                    ("rates in bits", {"min_rate_per_node": "40 Gb/s", "min_sustainable_rate": "30Gbit/s"})]
        for label, doc in examples:
            with self.subTest(label):
                self.assert_valid("expectation", doc, label)
                r = self.accept(self.write("expect.json", doc), "--simulate")
                self.assertIn(r.returncode, (0, 1), f"{label}: {r.stderr}")
        bad = [("unknown key", {"hosts": 96, "hostz": 1}),
               ("LMC 8", {"lmc": 8}),
               ("link width 3", {"link_width": 3}),
               ("unknown speed", {"link_speed": "EDR4"}),
               ("topology torus", {"topology": "torus"}),
               ("17 levels", {"topology": 17}),
               ("17-level", {"topology": "17-level"}),
               ("rate as a number", {"min_rate_per_node": 5e9}),
               ("rate 0", {"min_rate_per_node": "0G"}),
               ("rate with two spaces", {"min_rate_per_node": "5  G"}),
               ("size in bits", {"message_size": "1Mb/s"}),
               ("unknown unit", {"message_size": "1Q"}),
               ("share above 1", {"max_skipped_share": 2}),
               ("boolean as a string", {"congestion_free": "yes"}),
               ("imbalance below 1", {"max_routing_imbalance": 0.5}),
               ("no hosts", {"hosts": 0}),
               ("negative broken links", {"max_broken_links": -1})]
        for label, doc in bad:
            with self.subTest(label):
                self.assert_invalid("expectation", doc, label)
                self.assert_refused(self.accept(self.write("expect.json", doc), "--simulate"), label)

    def test_fuzz_corpus_expectations(self):
        self.corpus("expectation", "expectation", lambda p: self.accept(p, "--simulate"))

    # --- run reports -----------------------------------------------------------------------------

    def run_report(self):
        """A version-2 report of a run of the all-to-all on the tiny fabric, as docs/run-report.md
        describes it and ibroute run writes it (ibroute run itself needs MPI and RDMA devices)."""
        doc = self.export("a2a")
        hosts = [h["name"] for h in doc["hosts"]]
        n, phases, rounds, size = len(hosts), len(doc["phases"]["shifts"]), 10, 65536
        planned = n * phases * rounds
        per_node = phases * rounds
        paths = [[i, j, doc["hosts"][j]["base_lid"], rounds, rounds - (i == 2 and j == 0), int(i == 2 and j == 0), 0, 0, 0,
                  rounds - (i == 2 and j == 0), 0, size * (rounds - (i == 2 and j == 0)), 52000 * rounds]
                 for i in range(n) for j in range(n) if i != j]
        link = {"link": "leaf1[7] -> leaf2[7]", "bytes": 1310720, "transfers": 20, "skipped": 0, "failed": 0, "bad_share": 0.0}
        sick = {"link": "n03 HCA-1[1] -> leaf2[1]", "bytes": 1245184, "transfers": 19, "skipped": 1, "failed": 0, "bad_share": 0.05}
        return {
            "format": "ibroute-run", "version": 2, "schedule": doc["name"], "ranks": n, "phases": phases,
            "rounds": rounds, "rounds_run": rounds, "stopped_by": None,
            "message_size": size, "slot_ns": 20000, "rate": size / 20e-6, "skip_after": 2,
            "device": "mlx5_0", "link_layer": "InfiniBand",
            "totals": {"planned": planned, "ok": planned - 1, "skipped": 1, "timeout": 0, "failed": 0, "lost": 0, "corrupt": 0,
                       "bytes_ok": (planned - 1) * size, "seconds": 0.0004, "aggregate_gbps": 77.3, "skipped_share": 1 / planned},
            "lateness_ns": {"median": 850, "p99": 4100, "max": 9300},
            "completion_ns": {"median": 51000, "p99": 60000, "max": 71000},
            "throughput": {"interval_s": 1.0, "gbps": [77.3]},
            "rank0_memory": {"columns": ["seconds", "resident_kib"], "rows": [[0.0, 41234], [0.4, 42020]]},
            "missing_ranks": [],
            "clock": {"reference_rank": 0, "max_uncertainty_ns": 420, "resync_interval_s": 1.0, "max_residual_ns": 35,
                      "ranks": [{"rank": r, "host": hosts[r], "offset_ns": -782 * r, "uncertainty_ns": 300 + 60 * r,
                                 "min_rtt_ns": 2000, "median_rtt_ns": 2100, "samples": 200, "kept": 140,
                                 "after": {"offset_ns": -790 * r, "uncertainty_ns": 310, "drift_ppm": -4.3},
                                 "during": {"offset_ns": -785 * r, "drift_ppm": -4.1, "resyncs": 1, "resync_failures": 0,
                                            "residual_max_ns": 35, "residual_rms_ns": 12.5}}
                                for r in range(1, n)]},
            "nodes": [{"rank": r, "host": hosts[r], "port_guid": doc["hosts"][r]["port_guid"], "bytes_sent": per_node * size - (r == 2) * size,
                       "bytes_received": per_node * size - (r == 0) * size, "ok": per_node - (r == 2), "skipped": int(r == 2),
                       "failed": 0, "send_gbps": 25.8, "late_p99_ns": 4100, "completion_p99_ns": 60000,
                       "completion_in_p99_ns": 61000} for r in range(n)],
            "scan_id": 1, "links": [link, sick], "busiest_links": [link], "suspect_links": [sick],
            "not_ok": [{"src": hosts[2], "dst": hosts[0], "dlid": doc["hosts"][0]["base_lid"], "seq": 7, "status": "skipped",
                        "late_ns": 25000, "path": "n03 HCA-1[1] -> leaf2[1] | leaf2[7] -> leaf1[7] | leaf1[1] -> n01 HCA-1[1]"}],
            "late": [{"src": hosts[1], "dst": hosts[2], "dlid": doc["hosts"][2]["base_lid"], "seq": 3, "status": "ok",
                      "late_ns": 30500}],
            "anomalies": {"kept": 2, "dropped": 0, "late_kept": 1},
            "paths": {"columns": ["src", "dst", "dlid", "planned", "ok", "skipped", "timeout", "failed", "lost", "arrived",
                                  "corrupt", "bytes", "busy_ns"], "listed": "all", "omitted": 0, "rows": paths},
            "pair_mbps": [[0 if i == j else 10082 for j in range(n)] for i in range(n)],
            "run_id": 1,
        }

    def test_run_reports(self):
        report = self.run_report()
        self.assert_valid("run-report", report, "the hand-written report")
        expect = self.write("expect.json", {"lmc": 1, "max_skipped_share": 0.1, "max_clock_uncertainty_us": 1.0,
                                            "min_sustainable_rate": "1G"})
        # accept reads it back, and what it measured is what the report says.
        rate_search = dict(report, find_rate={"max_skipped_share": 0.1, "answer": 2.5e9, "found": True, "steps": [
            {"rate": 2.5e9, "rounds": 10, "planned": 60, "ok": 59, "skipped": 1, "failed": 0, "skipped_share": 1 / 60,
             "gbps_per_node": 19.9, "held": True}]})
        self.assert_valid("run-report", rate_search, "with a rate search")
        stretch = {"epoch": 2, "from_round": 40, "rounds": 60, "seconds": 1.2, "hosts": 3, "dropped": ["n3"], "planned": 360, "ok": 360,
                   "skipped": 0, "failed": 0, "gbps_per_node": 19.9, "ranks_at_this_round": 3, "ranks_reporting": 3}
        self.assert_valid("run-report", dict(report, epochs=[dict(stretch, epoch=1, from_round=0, dropped=[]), stretch]), "following epochs")
        self.assert_invalid("run-report", dict(report, epochs=[dict(stretch, epoch=0)]), "an epoch 0")
        self.assert_invalid("run-report", dict(report, epochs=[{k: v for k, v in stretch.items() if k != "ranks_at_this_round"}]),
                            "a stretch without its agreement count")
        r = self.accept(expect, "--run-report", self.write("run.json", rate_search))
        self.assertIn(r.returncode, (0, 1), r.stderr)
        checks = {c["check"]: c for c in json.loads(r.stdout)["checks"]}
        self.assertEqual(checks["skipped_transfers"]["measured"], report["totals"]["skipped_share"])
        self.assertEqual(checks["skipped_transfers"]["result"], "pass")
        self.assertEqual(checks["clock_sync"]["result"], "pass", checks["clock_sync"])
        self.assertEqual(checks["ranks_alive"]["measured"], 0)
        self.assertEqual(checks["sustainable_rate"]["result"], "pass", checks)
        # Without the optional parts (no scan, no rate search, not stored, missing ranks not checked)
        # and with only the keys accept requires.
        lean = {k: v for k, v in report.items() if k not in ("scan_id", "links", "busiest_links", "suspect_links", "run_id",
                                                                "missing_ranks")}
        # (pair_mbps kept here: a report without it is test_report_without_pair_matrix.)
        minimal = {k: report[k] for k in self.schemas["run-report"]["required"] + ["pair_mbps"]}
        extra = dict(report, site="lab 2", nodes=[dict(n, switch="leaf1") for n in report["nodes"]])
        for label, doc in (("without the optional parts", lean), ("only the required keys", minimal), ("unknown keys", extra)):
            self.assert_valid("run-report", doc, label)
            r = self.accept(expect, "--run-report", self.write("lean.json", doc))
            self.assertIn(r.returncode, (0, 1), f"{label}: {r.stderr}")
        # Version 1 (every transfer listed) and the reports of real runs in the fuzz corpus.
        for name in ("valid-4.json", "valid-v2-4.json", "find-rate-v2-4.json", "missing-rank.json"):
            self.assert_valid("run-report", load(os.path.join(CORPUS, "run_report", name)), name)

        bad = [("wrong format", setting("format", value="ibroute-runs")),
               ("version 4", setting("version", value=4)),
               ("DLID 60000", setting("not_ok", 0, "dlid", value=60000)),
               ("missing nodes", deleting("nodes")),
               ("missing clock", deleting("clock")),
               ("skipped share 1.5", setting("totals", "skipped_share", value=1.5)),
               ("negative uncertainty", setting("clock", "ranks", 0, "uncertainty_ns", value=-1)),
               ("rate as a string", setting("nodes", 1, "send_gbps", value="fast")),
               ("missing rank without host", setting("missing_ranks", value=[{"rank": 1}])),
               ("answer as a string", setting("find_rate", value={"answer": "4G"})),
               ("message size 0", setting("message_size", value=0)),
               ("seq below 0", setting("not_ok", 0, "seq", value=-1)),
               ("a matrix of strings", setting("pair_mbps", 0, value=["0", "1", "2"])),
               ("suspect link without its share", deleting("suspect_links", 0, "bad_share"))]
        for label, edit in bad:
            with self.subTest(label):
                doc = copy.deepcopy(report)
                edit(doc)
                self.assert_invalid("run-report", doc, label)
                self.assert_refused(self.accept(expect, "--run-report", self.write("bad.json", doc)), label)

    def test_run_reports_bound_to_their_run(self):
        """A report is read only as the report of a run of this database's schedule on this fabric,
        its numbers consistent: a foreign or self-contradicting one is refused, one line naming the
        field (what a schema cannot state), an older one without scan_id and port GUIDs read with
        one warning line."""
        report = self.run_report()
        expect = self.write("expect.json", {"lmc": 1})
        r = self.accept(expect, "--run-report", self.write("run.json", report))
        self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertNotIn("warning", r.stderr)
        ran = json.loads(r.stdout)["run_schedule"]
        self.assertEqual((ran["schedule"], ran["planned_on_scan"], ran["hosts"], ran["bound_by"]), ("a2a", 1, 3, "scan_id and port GUIDs"))
        older = copy.deepcopy(report)
        del older["scan_id"]
        for n in older["nodes"]:
            del n["port_guid"]
        r = self.accept(expect, "--run-report", self.write("older.json", older))
        self.assertIn(r.returncode, (0, 1), r.stderr)
        warnings = [line for line in r.stderr.splitlines() if "warning" in line]
        self.assertEqual(len(warnings), 1, r.stderr)
        self.assertIn("an older ibroute run", warnings[0])
        self.assertEqual(json.loads(r.stdout)["run_schedule"]["bound_by"], "name and rank count (an older report)")

        hosts = self.export("a2a")["hosts"]
        ibroute("plan", "--db", self.db, "--name", "pair", "--hosts", ",".join(h["name"] for h in hosts[:2]))
        planned = report["totals"]["planned"]

        def swap_hosts(doc):
            doc["nodes"][0]["host"], doc["nodes"][1]["host"] = doc["nodes"][1]["host"], doc["nodes"][0]["host"]

        bad = [("a schedule this database lacks", setting("schedule", value="some-other-run"),
                '/schedule: "some-other-run" is no schedule of this database'),
               ("another schedule's ranks", setting("schedule", value="pair"), "/ranks: 3 ranks, but schedule pair has 2 hosts"),
               ("a scan this database lacks", setting("scan_id", value=42), "/scan_id: scan 42 is no scan of this database"),
               ("a rank on another port", setting("nodes", 1, "port_guid", value="0x0000000000abcdef"),
                "/nodes (rank 1): ran on port 0x0000000000abcdef"),
               ("ranks of other hosts", swap_hosts, "/nodes (rank 0): host"),
               ("skipped -1", setting("totals", "skipped", value=-1), "/totals/skipped"),
               ("skipped 10^12", setting("totals", "skipped", value=10**12), "/totals/skipped"),
               ("planned 0", setting("totals", "planned", value=0), "/totals/planned"),
               ("more ended than planned", setting("totals", "ok", value=planned), "add up to more than"),
               ("a skipped share that is not skipped / planned", setting("totals", "skipped_share", value=0.5), "/totals/skipped_share"),
               ("rank 0 twice, rank 1 missing", setting("nodes", 1, "rank", value=0), "/nodes/1/rank: rank 0 is listed twice"),
               ("more rounds run than asked", setting("rounds_run", value=11), "/rounds_run: 11 rounds run"),
               ("a path row's rank outside the run", setting("paths", "rows", 0, 1, value=96), "/paths/rows/0/1: 96 is not a rank"),
               ("a path row's DLID no unicast LID", setting("paths", "rows", 0, 2, value=65550), "/paths/rows/0/2"),
               ("a path row's DLID of another host", setting("paths", "rows", 0, 2, value=hosts[2]["base_lid"]), "/paths/rows/0/2: DLID"),
               ("not_ok naming no host", setting("not_ok", 0, "dst", value="nobody"), '/not_ok/0/dst: "nobody" is no host'),
               ("not_ok's DLID of another host", setting("not_ok", 0, "dlid", value=hosts[1]["base_lid"]), "/not_ok/0/dlid: DLID")]
        for label, edit, needle in bad:
            with self.subTest(label):
                doc = copy.deepcopy(report)
                edit(doc)
                r = self.accept(expect, "--run-report", self.write("bad.json", doc))
                self.assert_refused(r, label)
                self.assertIn(needle, r.stderr, label)
                self.assertIn("bad.json: ", r.stderr, label)
        # The judged scan is another fabric: one of the schedule's host ports is not in it.
        with open(TOPO) as f:
            other = self.write("other.topo", f.read().replace("2c90300a00031", "2c90300a00f31"))
        ibroute("scan", "--db", self.db, "--topology", other, "--lfts", LFTS)
        r = self.accept(expect, "--run-report", self.write("run.json", report))
        self.assert_refused(r, "another fabric")
        self.assertIn("schedule a2a was planned on scan 1, whose host n03", r.stderr)
        self.assertIn("scan 2 does not have: another fabric", r.stderr)
        r = self.accept(expect, "--run-report", self.path("run.json"), "--scan", "1")
        self.assertIn(r.returncode, (0, 1), r.stderr)
        # A run that read its routes from scan 2 (run --scan 2): scan 2 lacks n03's port.
        r = self.accept(expect, "--run-report", self.write("run2.json", dict(report, scan_id=2)), "--scan", "1")
        self.assert_refused(r, "a run on another fabric's scan")
        self.assertIn("/scan_id: scan 2 has no port", r.stderr)

    def test_report_without_pair_matrix(self):
        """ibroute run leaves pair_mbps out above 2048 ranks, and the schema (like the reader) has it
        optional: accept reads such a report of as many ranks as the plan has hosts (it used to index
        the absent matrix and die of SIGSEGV)."""
        report = {k: v for k, v in self.run_report().items() if k != "pair_mbps"}
        self.assert_valid("run-report", report)
        r = self.accept(self.write("expect.json", {"lmc": 1}), "--run-report", self.write("run.json", report))
        self.assertIn(r.returncode, (0, 1), f"exit {r.returncode}: {r.stderr}")
        with open(self.path("r.html")) as f:
            self.assertIn('<p id="heatmap">Not measured: the run report has no per-pair matrix', f.read())

    def test_fuzz_corpus_run_reports(self):
        expect = self.write("expect.json", {"lmc": 1})
        self.corpus("run_report", "run-report", lambda p: self.accept(expect, "--run-report", p),
                    # The corpus' reports are of runs on other fabrics: read whole, then refused as such.
                    bound_elsewhere="is no schedule of this database")

    # --- the fuzz corpus: the schema is never stricter than the reader --------------------------------

    def corpus(self, target, schema, read, bound_elsewhere=None):
        """Every corpus file ibroute reads (exit 0 or 1) passes the schema (a slice: the slice's).
        `bound_elsewhere`: the refusal of a document read whole but of another database's run."""
        files = sorted(glob.glob(os.path.join(CORPUS, target, "*.json")))
        self.assertTrue(files)
        for f in files:
            with self.subTest(input=f"{target}/{os.path.basename(f)}"):
                try:
                    doc = load(f)
                except ValueError:
                    doc = None  # not JSON: the reader's business alone
                r = read(f)
                self.assertIn(r.returncode, (0, 1, 2), r.stderr)
                readable = r.returncode != 2 or bool(bound_elsewhere and bound_elsewhere in r.stderr)
                if os.path.basename(f).startswith("valid"):
                    self.assertTrue(readable, r.stderr)
                # Read by ibroute => passes the schema (refused by the schema => refused by ibroute).
                if doc is not None and readable:
                    kind = "schedule-slice" if isinstance(doc, dict) and doc.get("format") == "ibroute-schedule-slice" else schema
                    self.assert_valid(kind, doc, f"{os.path.basename(f)} (ibroute reads it)")


if __name__ == "__main__":
    unittest.main()
