#!/usr/bin/env python3
"""ibroute demo: a simulated 864-host half fat-tree, scanned live; routes, analysis, a
congestion-free all-to-all plan, its export for peers, its validation, and the acceptance test
with its HTML report (the plan played on the fabric: no hardware here to run it on).

Starts ibsim and OpenSM itself (nothing else needs to run) and stops them at the end.
Options: --topology FILE (another ibsim topology), --lmc N, --engine minhop|updn, --db FILE.
"""
import argparse
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))
from simfabric import SimFabric  # noqa: E402

IBROUTE = os.path.join(ROOT, "build", "src", "ibroute")


def step(title, args, sim=None, accept_exit=(0, 3)):
    print(f"\n$ ibroute {' '.join(shlex.quote(str(a)) for a in args)}    # {title}", flush=True)
    cmd = ["timeout", "120", IBROUTE, *map(str, args)]
    r = sim.run(cmd, check=False) if sim else subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    err = "".join(l + "\n" for l in r.stderr.splitlines() if not l.startswith("ibwarn:"))  # simulator chatter
    sys.stderr.write(err)
    if r.returncode not in accept_exit:
        sys.exit(f"demo: ibroute {args[0]} failed with exit code {r.returncode}")
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topology", default=os.path.join(HERE, "hft864-shuffled.topo"))
    ap.add_argument("--lmc", type=int, default=4)
    ap.add_argument("--engine", default="minhop")
    ap.add_argument("--db", default="demo.db")
    args = ap.parse_args()
    args.db = os.path.abspath(args.db)  # the simulator clients run in its own directory
    if os.path.exists(args.db):
        os.remove(args.db)
    print(f"Starting ibsim with {os.path.relpath(args.topology)} and OpenSM ({args.engine}, LMC {args.lmc}) ...",
          flush=True)
    with SimFabric(args.topology, lmc=args.lmc, engine=args.engine) as sim:
        step("live scan: libibnetdisc + libibmad, every route into SQLite", ["scan", "--db", args.db], sim)
    print("\nThe simulator is stopped: everything below comes from the database alone.")
    step("one route, like ibtracert", ["routes", "--db", args.db, "--from", "node1-001", "--to", "node5-036"])
    step("all 16 LIDs of a host: 16 paths over the spines",
         ["routes", "--db", args.db, "--from", "node1-001", "--to", "node5-036", "--lid", "all"])
    base = os.path.splitext(args.db)[0]
    step("the fabric as a picture: switches per level, parallel links folded per switch pair",
         ["topo", "--db", args.db, "--format", "svg", "-o", base + ".svg"])
    step("the cabling as a leaf x spine matrix (missing and slow links stand out)",
         ["topo", "--db", args.db, "--format", "matrix", "-o", base + "-cabling.svg"])
    print(f"wrote {base}.svg and {base}-cabling.svg")
    step("structure, routing balance, and the link load of round-robin all-to-all",
         ["analyze", "--db", args.db, "--samples", "5"])
    step("a congestion-free all-to-all: the DLID (path) of every transfer",
         ["plan", "--db", args.db, "--name", "demo", "--message-size", "1MiB", "--replace"])
    step("export it for peers: the whole schedule, and one slice per node",
         ["export", "--db", args.db, "--schedule", "demo", "-o", base + "-schedule.json", "--per-node", base + "-slices"])
    print(f"wrote {base}-schedule.json and {base}-slices/ (format: docs/schedule-format.md)")
    step("read it back and check it against the scan", ["validate", "--db", args.db, base + "-schedule.json"])
    step("link load of round-robin in name order (red: above the bound)",
         ["topo", "--db", args.db, "--pattern", "rr-name", "--format", "matrix", "-o", base + "-rr.svg"])
    step("link load of the plan (green: within the bound)",
         ["topo", "--db", args.db, "--schedule", "demo", "--format", "matrix", "-o", base + "-plan.svg"])
    print(f"wrote {base}-rr.svg and {base}-plan.svg")
    # The expectation describes the default fabric; another --topology is judged against it too.
    step("acceptance test: the plan played on the scanned fabric (max-min fair sharing), with a report",
             ["accept", "--db", args.db, "--expect", os.path.join(HERE, "expect-hft864.json"), "--simulate",
              "--report", base + "-accept.html"], accept_exit=(0, 1))
    print(f"wrote {base}-accept.html (open it in a browser; expectation format: docs/acceptance.md)")
    step("the scans in the database", ["scans", "--db", args.db])
    print(f"\nQuery it yourself: sqlite3 {args.db} 'SELECT * FROM scan'   (schema: docs/database.md)")


if __name__ == "__main__":
    main()
