"""Shared helpers for the integration tests: the ibroute binary, its database, ibtracert parsing."""
import json
import os
import re
import sqlite3
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("IBROUTE_SOURCE", os.path.abspath(os.path.join(HERE, "..", "..")))
IBROUTE = os.environ.get("IBROUTE", os.path.join(SOURCE, "build", "src", "ibroute"))
EXAMPLES = os.path.join(SOURCE, "examples")


def ibroute(*args, sim=None, timeout=120, check=True):
    """Run ibroute; through the simulator's preload when `sim` is given."""
    cmd = ["timeout", str(timeout), IBROUTE, *map(str, args)]
    if sim:
        return sim.run(cmd, timeout=timeout + 5, check=check)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 5)
    if check and r.returncode != 0:
        raise AssertionError(f"ibroute {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}")
    return r


def ibroute_json(*args, **kw):
    return json.loads(ibroute(*args, "--json", **kw).stdout)


_HOP = re.compile(r"^\[(\d+)\] -> (?:switch|ca|router) port \{(0x[0-9a-f]+)\}\[(\d+)\]")
_FROM = re.compile(r"^From (?:ca|switch|router) \{(0x[0-9a-f]+)\}")


def ibtracert(sim, slid, dlid):
    """The path ibtracert reports, as [(node guid, out port), ...] (ibsim: switch port GUID = node GUID)."""
    r = sim.run(["timeout", "20", "ibtracert", str(slid), str(dlid)], timeout=30, check=False)
    lines = r.stdout.splitlines()
    if r.returncode != 0 or not lines:
        return None, r.stderr
    hops, cur = [], _FROM.match(lines[0]).group(1)
    for line in lines[1:]:
        m = _HOP.match(line)
        if m:
            hops.append((int(cur, 16), int(m.group(1))))
            cur = m.group(2)
    return hops, lines


def db_rows(path, sql, *params):
    with sqlite3.connect(path) as c:
        return c.execute(sql, params).fetchall()


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="ibroute-test-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)
