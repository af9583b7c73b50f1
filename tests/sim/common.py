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
    env = dict(os.environ)
    if args and args[0] == "run" and "LSAN_OPTIONS" in env:
        # `ibroute run` is ibroute-run, an Open MPI singleton: Open MPI's blocks lost in its own
        # unloaded components cannot be named, hence not suppressed (the VM suite runs no
        # sanitizer for the same reason). Addresses and undefined behaviour are still checked.
        env["LSAN_OPTIONS"] += ":detect_leaks=0"
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 5, env=env)
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


def png_pixels(path):
    """The pixels of an 8-bit RGB(A) PNG as Chromium writes its screenshots: pixel(x, y) -> (r, g, b)."""
    import struct
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + size]
        pos += 12 + size
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):  # undo the per-row filters (PNG spec, section 9)
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3])
