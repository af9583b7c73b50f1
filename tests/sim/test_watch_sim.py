"""ibroute watch on a live ibsim fabric routed by OpenSM: a cable lost and routed around, a host
gone and back, a read that comes back incomplete — each a new epoch (or none), checked from the
exported files and the stored routes by code that is not the planner's (schedule_check)."""
import errno
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
import unittest

from common import EXAMPLES, IBROUTE, TempDirTest, ibroute, ibroute_json
from schedule_check import check_all_to_all, efficiency, link_loads
from simfabric import SimFabric

TOPO = f"{EXAMPLES}/hft96-shuffled.topo"


def narrowed(text):
    """The tiny corpus topology with n02's link to leaf1 at 1x (a change of width, both ends)."""
    return (text.replace('# "n02 HCA-1" lid 12 4xEDR', '# "n02 HCA-1" lid 12 1xEDR')
            .replace('[2]\t\t# lid 12 lmc 1 "leaf1" lid 2 4xEDR', '[2]\t\t# lid 12 lmc 1 "leaf1" lid 2 1xEDR'))


class WatchProcess:
    """`ibroute watch --json` under the simulator; its events (one JSON object per line) queued."""

    def __init__(self, sim, *args):  # sim None: an offline watch (--topology)
        self.proc = subprocess.Popen(["timeout", "900", IBROUTE, "watch", *map(str, args), "--json"], env=sim.env() if sim else None,
                                     cwd=sim.dir if sim else None,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.events, self.seen = queue.Queue(), []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.events.put(json.loads(line))

    def next(self, kinds, timeout=90):
        """The next event of one of `kinds` (the others are kept in `seen`)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                e = self.events.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {kinds} event within {timeout} s; saw {self.seen[-5:]}; stderr {self.proc.stderr.read() if self.proc.poll() is not None else ''}")
            self.seen.append(e)
            if e["event"] in kinds:
                return e

    def poll(self, kinds, timeout):
        """The next event of one of `kinds` within `timeout` s, else None (the others kept in `seen`)."""
        try:
            return self.next(kinds, timeout)
        except AssertionError:
            return None

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=60)
        return rc, self.next(["stopped"], timeout=10)


class Watch(TempDirTest):
    def epoch_doc(self, out, k):
        with open(os.path.join(out, f"epoch-{k:06d}", "schedule.json")) as f:
            return json.load(f)

    def newest_scan(self, db):
        return ibroute_json("scans", "--db", db)["scans"][-1]["scan_id"]

    def epoch_after_sweep(self, sim, w, db, hosts):
        """OpenSM sweeps once; the watch's first epoch of `hosts` hosts planned on a scan stored
        after it. Others may come first: one planned around a dead link on the old tables, or one
        from a read made while the sweep was under way (a host cabled again but not yet given its
        LID is absent from it; a slow machine makes that window wide)."""
        top = self.newest_scan(db)
        sim.route()
        e = w.next(["epoch"])
        while e["scan_id"] <= top or e["hosts"] != hosts:
            e = w.next(["epoch"])
        return self.settled(w, db, e, hosts)

    def settled(self, w, db, e, hosts, timeout=120):
        """Epoch `e` once its scan's routes are stored (the check reads them). `top` above may predate
        a read of the change itself, made before the sweep: the sweep's scan then drops that read's
        routes (`routes_dropped`), and the newer epoch of `hosts` hosts is the one to check."""
        deadline = time.monotonic() + timeout
        while not self.scan_info(db, e["scan_id"])["routes_stored"]:
            self.assertLess(time.monotonic(), deadline, f"scan {e['scan_id']}'s routes not stored within {timeout} s; saw {w.seen[-5:]}")
            newer = w.poll(["epoch"], 0.2)
            if newer and newer["hosts"] == hosts:
                e = newer
        return e

    def scan_info(self, db, scan_id):
        return [s for s in ibroute_json("scans", "--db", db)["scans"] if s["scan_id"] == scan_id][0]

    def routes_stored(self, db, scan_id, timeout=120):
        """The watch stores a changed scan's routes after its epoch is out (until then they are
        answered from the stored tables): waits until they are in the database."""
        deadline = time.monotonic() + timeout
        while True:
            scan = self.scan_info(db, scan_id)
            if scan["routes_stored"]:
                return scan
            self.assertLess(time.monotonic(), deadline, f"scan {scan_id}'s routes not stored within {timeout} s")
            time.sleep(0.2)

    def check_epoch(self, db, out, e):
        """The epoch's own file, checked from the scan's stored routes: an all-to-all of its hosts,
        every route working, no link over the bound, at least 0.9 of the least possible time."""
        self.assertGreater(self.routes_stored(db, e["scan_id"])["routes"], 0)
        doc = self.epoch_doc(out, e["epoch"])
        self.assertEqual(doc["epoch"], e["epoch"])
        self.assertEqual(doc["fabric"]["scan_id"], e["scan_id"])
        self.assertEqual(len(doc["hosts"]), e["hosts"])
        check_all_to_all(doc)
        maxima, statuses = link_loads(db, e["scan_id"], doc)
        self.assertEqual(set(statuses), {0}, statuses)  # 0: ok
        self.assertLessEqual(max(maxima), doc["bound"])
        t, least, _ = efficiency(db, e["scan_id"], doc)
        self.assertGreaterEqual(least / t, 0.9, (t, least))
        self.assertTrue(os.path.islink(os.path.join(out, "current")))
        return doc

    def test_epochs_follow_cable_and_host_changes(self):
        db, out = self.path("w.db"), self.path("epochs")
        with SimFabric(TOPO, lmc=2) as sim:
            ibroute_json("scan", "--db", db, sim=sim)
            ibroute_json("plan", "--db", db, "--name", "daq", "--message-size", "64K")
            w = WatchProcess(sim, "--db", db, "--schedule", "daq", "--export", out, "--interval", "0.3", "--handover", "2",
                             "--keep", "2")
            try:
                first = w.next(["epoch"])
                self.assertEqual((first["epoch"], first["hosts"], first["absent"]), (1, 96, []))
                self.check_epoch(db, out, first)
                self.assertEqual(os.readlink(os.path.join(out, "current")), "epoch-000001")
                # A leaf-spine cable lost, then routed around by OpenSM: a new epoch on the new tables.
                sim.console('Unlink "ibswitch03"[10]')
                w.next(["changed"])
                e = self.epoch_after_sweep(sim, w, db, 96)
                doc = self.check_epoch(db, out, e)
                self.assertGreater(doc["epoch_from_unix_ns"], time.time_ns() - 60e9)
                # A host's cable unlinked: the next epoch is planned without it.
                gone = doc["hosts"][5]["name"].split()[0]
                sim.console(f'Unlink "{gone}"')
                e = self.epoch_after_sweep(sim, w, db, 95)
                self.assertEqual([a.split()[0] for a in e["absent"]], [gone])
                doc = self.check_epoch(db, out, e)
                self.assertNotIn(gone, [h["name"].split()[0] for h in doc["hosts"]])
                # Its cable back: planned again, in the set's order (its rank as in epoch 1).
                sim.console(f'ReLink "{gone}"')
                e = self.epoch_after_sweep(sim, w, db, 96)
                self.assertEqual(e["absent"], [])
                doc = self.check_epoch(db, out, e)
                self.assertEqual(doc["hosts"][5]["name"].split()[0], gone)
                # A read that comes back incomplete (a spine drops every MAD): no epoch, one line.
                for p in range(0, 13):
                    sim.console(f'Error "ibspine02"[{p}] 100')
                bad = w.next(["incomplete", "epoch"], timeout=120)
                self.assertEqual(bad["event"], "incomplete", bad)
                for p in range(0, 13):
                    sim.console(f'Error "ibspine02"[{p}] 0')
            finally:
                rc, stopped = w.stop()
                if os.environ.get("IBROUTE_SHOW_EVENTS"):
                    print("\n".join(x["text"] for x in w.seen)); print(w.proc.stderr.read())
            self.assertEqual(rc, 0)
            self.assertGreaterEqual(stopped["epoch"], 4)
        epochs = sorted(d for d in os.listdir(out) if d.startswith("epoch-"))
        self.assertEqual(len(epochs), 2, "the oldest epochs go (--keep 2)")
        self.assertEqual(os.readlink(os.path.join(out, "current")), f"epoch-{stopped['epoch']:06d}")
        # Every epoch's schedule is stored; the newest is what validate checks on its scan.
        names = [s["name"] for s in ibroute_json("schedules", "--db", db)["schedules"]]
        self.assertIn(f"daq.e{stopped['epoch']}", names)
        # ... and the database keeps the same epochs as the directory (weeks of epochs do not pile up).
        self.assertEqual(sorted(n for n in names if n.startswith("daq.e")), [f"daq.e{stopped['epoch'] - 1}", f"daq.e{stopped['epoch']}"])

    def test_a_plan_made_stale_by_a_newer_change_is_abandoned(self):
        """864 hosts: a leaf-spine cable lost (the watch plans around the dead link, seconds at this
        size) and back before that plan ends: the reads go on meanwhile, the stale plan is abandoned
        (not stored, no epoch), and the next epoch is planned on the newest tables."""
        db, out = self.path("w.db"), self.path("epochs")
        with SimFabric(f"{EXAMPLES}/hft864-shuffled.topo", lmc=2) as sim:
            ibroute_json("scan", "--db", db, sim=sim)
            ibroute_json("plan", "--db", db, "--name", "daq")
            w = WatchProcess(sim, "--db", db, "--schedule", "daq", "--export", out, "--interval", "0.2", "--keep", "3")
            try:
                self.assertEqual(w.next(["epoch"], timeout=180)["epoch"], 1)
                sim.console('Unlink "ibswitch13"[25]')
                dead = w.next(["scan"], timeout=120)["scan_id"]  # its plan starts now
                sim.console('ReLink "ibswitch13"[25]')
                sim.route()
                gone = w.next(["abandoned", "epoch", "no_epoch"], timeout=180)
                self.assertEqual((gone["event"], gone["scan_id"]), ("abandoned", dead), gone)
                # The newer read that made it stale also dropped its scan's routes (said before the abandon).
                self.assertIn(dead, [x["scan_id"] for x in w.seen if x["event"] == "routes_dropped"], w.seen[-5:])
                e = w.next(["epoch"], timeout=180)
                while e["hosts"] != 864 or e["efficiency"] < 0.9:  # a read during the sweep may come first
                    e = w.next(["epoch"], timeout=180)
                self.assertGreater(e["scan_id"], dead)
                self.assertEqual(e["epoch"], 2, "the abandoned plan took no epoch number")
                self.check_epoch(db, out, e)
            finally:
                rc, stopped = w.stop()
                if os.environ.get("IBROUTE_SHOW_EVENTS"):
                    print("\n".join(x["text"] for x in w.seen)); print(w.proc.stderr.read())
            self.assertEqual(rc, 0)
        names = [s["name"] for s in ibroute_json("schedules", "--db", db)["schedules"]]
        self.assertNotIn(f"daq.e{stopped['epoch'] + 1}", names, "nothing stored for the abandoned plan")

    def test_run_follow_refuses_what_is_no_epoch_in_one_line(self):
        """ibroute run --follow (the VM tests run it): a directory without epochs, a file that is no
        epoch, and --follow beside --schedule are refused before any rank starts, one line, exit 2."""
        db = self.path("f.db")
        corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus")
        ibroute("scan", "--db", db, "--topology", os.path.join(corpus, "ibnetdiscover", "tiny.topo"), "--lfts",
                os.path.join(corpus, "lft_dump", "tiny.dump_fts"))
        ibroute("plan", "--db", db, "--name", "a2a")
        epochs = self.path("ep")
        os.makedirs(os.path.join(epochs, "epoch-000001"))
        plain = os.path.join(epochs, "epoch-000001", "schedule.json")
        ibroute("export", "--db", db, "--schedule", "a2a", "-o", plain, "--per-node", self.path("slices"))
        table = os.path.join(epochs, "epoch-000001", "hosts.json")
        shutil.copy(os.path.join(self.path("slices"), "hosts.json"), table)
        for args, text in ((["--follow", self.path("none")], "no epoch published"),
                           (["--follow", epochs], "no epoch published"),
                           (["--follow", epochs, "--schedule", "a2a"], "give one of"),
                           (["--follow", epochs, "--find-rate"], "--find-rate"),
                           (["--follow", epochs, "--dead-after", "0.1"], "--dead-after")):
            if args == ["--follow", epochs, "--find-rate"]:
                with open(plain) as f:
                    doc = json.load(f)
                with open(plain, "w") as f:
                    json.dump(dict(doc, epoch=1, epoch_from_unix_ns=1), f)
            r = ibroute("run", "--db", db, *args, check=False)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(text, r.stderr)
            if args == ["--follow", epochs]:
                os.symlink("epoch-000001", os.path.join(epochs, "current"))
                r = ibroute("run", "--db", db, *args, check=False)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("not an epoch", r.stderr)
        # The ranks other than 0 read their slices through the epoch's host table: none, or
        # another schedule's, refused up front.
        with open(table) as f:
            other = json.load(f)
        other["created_at"] = "2020-01-01T00:00:00Z"
        for content, text in ((None, "no host table (hosts.json) beside it"), (json.dumps(other), "another schedule's host table")):
            if os.path.exists(table):
                os.remove(table)
            if content:
                with open(table, "w") as f:
                    f.write(content)
            r = ibroute("run", "--db", db, "--follow", epochs, check=False)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(text, r.stderr)

    def test_bad_input_is_one_line(self):
        for args, text in ((["--db", self.path("none.db"), "--schedule", "daq"], "none.db"),
                           (["--db", self.path("none.db"), "--schedule", "daq", "--interval", "0"], "--interval"),
                           # nan, inf and hex, which CLI11 converts and its Range lets through: refused by name
                           (["--db", self.path("none.db"), "--schedule", "daq", "--interval", "nan"], "--interval: 'nan' is not a decimal number"),
                           (["--db", self.path("none.db"), "--schedule", "daq", "--handover", "nan"], "--handover: 'nan' is not a decimal number"),
                           (["--db", self.path("none.db"), "--schedule", "daq", "--handover", "inf"], "from 0 to 3600"),
                           (["--db", self.path("none.db"), "--schedule", "daq", "--interval", "0x10"], "--interval: '0x10'")):
            r = ibroute("watch", *args, "--export", self.path("e"), check=False)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(text, r.stderr)
        self.assertFalse(os.path.exists(self.path("e")), "nothing written")

    def test_one_writer_per_directory_and_a_failed_publish_tried_again(self):
        """Offline (--topology): a second watch on the directory refused naming the first; a dead
        watch's temporaries removed at start, the user's own schedule.json left alone; a publish that
        fails (a file of someone else's where the next epoch goes) said in one event, not stored in
        the database, tried again until it works, the watch running on; a directory whose last
        epoch is the last peers read refused."""
        corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus")
        topo, lfts, db, out = self.path("t.topo"), os.path.join(corpus, "lft_dump", "tiny.dump_fts"), self.path("o.db"), self.path("ep")
        with open(os.path.join(corpus, "ibnetdiscover", "tiny.topo")) as f:
            text = f.read()
        with open(topo, "w") as f:
            f.write(text)
        ibroute("scan", "--db", db, "--topology", topo, "--lfts", lfts)
        ibroute("plan", "--db", db, "--name", "a2a")
        os.makedirs(os.path.join(out, ".epoch-000001.tmp-99999999"))
        open(os.path.join(out, ".current.tmp-99999999"), "w").close()
        with open(os.path.join(out, "schedule.json"), "w") as f:
            f.write("mine")
        args = ["--db", db, "--schedule", "a2a", "--export", out, "--topology", topo, "--lfts", lfts]
        w = WatchProcess(None, *args, "--interval", "0.3", "--handover", "0")
        try:
            self.assertEqual(w.next(["stale_removed"])["count"], 2)
            self.assertEqual(w.next(["epoch"])["epoch"], 1)
            self.assertEqual(sorted(n for n in os.listdir(out) if ".tmp-" in n), [])
            with open(os.path.join(out, "schedule.json")) as f:
                self.assertEqual(f.read(), "mine")
            r = ibroute("watch", *args, "--scans", "1", check=False)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            holder = re.search(r"another ibroute watch \(pid (\d+)\)", r.stderr)
            self.assertTrue(holder, r.stderr)
            with open(f"/proc/{holder.group(1)}/stat") as f:  # the first watch (a child of `timeout`)
                self.assertEqual(int(f.read().rsplit(")", 1)[1].split()[1]), w.proc.pid)
            # Someone's file where epoch 2 goes, then a link's width changed: the publish fails.
            planted = os.path.join(out, "epoch-000002")
            open(planted, "w").close()
            with open(topo, "w") as f:
                f.write(narrowed(text))
            failed = w.next(["publish_failed"])
            self.assertIn("exists already", failed["error"])
            names = [s["name"] for s in ibroute_json("schedules", "--db", db)["schedules"]]
            self.assertNotIn("a2a.e2", names)
            self.assertEqual(os.readlink(os.path.join(out, "current")), "epoch-000001")
            os.remove(planted)
            w.next(["retry"])
            self.assertEqual(w.next(["epoch"])["epoch"], 2)
            self.assertEqual(os.readlink(os.path.join(out, "current")), "epoch-000002")
            self.assertIn("a2a.e2", [s["name"] for s in ibroute_json("schedules", "--db", db)["schedules"]])
        finally:
            rc, _ = w.stop()
        self.assertEqual(rc, 0)
        last = self.path("last")
        os.makedirs(os.path.join(last, "epoch-999999999999999"))
        os.symlink("epoch-999999999999999", os.path.join(last, "current"))
        r = ibroute("watch", *args[:4], "--export", last, *args[6:], "--scans", "1", check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("the last peers read", r.stderr)

    def test_a_full_filesystem_and_a_missing_file_survived(self):
        """Offline (--topology), the export directory on a small tmpfs of its own: the topology file
        gone for a moment is one read_failed event, the watch running on; the filesystem full when
        the next epoch is due is one publish_failed event with the errno's text, nothing half-built
        left and nothing stored, and once space is freed the epoch is published."""
        if os.geteuid() != 0 or not shutil.which("mount"):
            self.skipTest("mounting a tmpfs needs root")
        corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus")
        topo, lfts, db, out = self.path("t.topo"), os.path.join(corpus, "lft_dump", "tiny.dump_fts"), self.path("o.db"), self.path("ep")
        with open(os.path.join(corpus, "ibnetdiscover", "tiny.topo")) as f:
            text = f.read()
        with open(topo, "w") as f:
            f.write(text)
        ibroute("scan", "--db", db, "--topology", topo, "--lfts", lfts)
        ibroute("plan", "--db", db, "--name", "a2a")
        os.makedirs(out)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", out], check=True)
        w = None
        try:
            w = WatchProcess(None, "--db", db, "--schedule", "a2a", "--export", out, "--topology", topo, "--lfts", lfts,
                             "--interval", "0.3", "--handover", "0")
            self.assertEqual(w.next(["epoch"])["epoch"], 1)
            os.rename(topo, topo + ".away")
            failed = w.next(["read_failed", "scan_failed"])
            self.assertEqual(failed["event"], "read_failed", failed)
            self.assertIn(topo + ": No such file or directory", failed["error"])
            os.rename(topo + ".away", topo)
            self.assertIsNone(w.proc.poll())
            # The filesystem full (a file of the user's takes what is left), then a link's width changed.
            filler = os.path.join(out, "filler")
            with open(filler, "wb") as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                        f.flush()
                except OSError as e:
                    self.assertEqual(e.errno, errno.ENOSPC)
            with open(topo + ".new", "w") as f:
                f.write(narrowed(text))
            os.rename(topo + ".new", topo)
            failed = w.next(["publish_failed"])
            self.assertIn("No space left on device", failed["error"])
            self.assertEqual(sorted(n for n in os.listdir(out) if ".tmp-" in n), [])
            self.assertEqual(os.readlink(os.path.join(out, "current")), "epoch-000001")
            self.assertNotIn("a2a.e2", [s["name"] for s in ibroute_json("schedules", "--db", db)["schedules"]])
            self.assertIsNone(w.proc.poll())
            os.remove(filler)
            w.next(["retry"])
            self.assertEqual(w.next(["epoch"])["epoch"], 2)
            self.assertEqual(os.readlink(os.path.join(out, "current")), "epoch-000002")
            self.assertIn("a2a.e2", [s["name"] for s in ibroute_json("schedules", "--db", db)["schedules"]])
        finally:
            rc = w.stop()[0] if w else 0
            subprocess.run(["umount", out], check=False)
        self.assertEqual(rc, 0)


if __name__ == "__main__":
    unittest.main()
