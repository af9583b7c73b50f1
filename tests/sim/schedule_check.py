"""Independent checks of an exported schedule: structure, and link loads recomputed from the
database's stored routes (the `route` table), not from the planner's own code."""
import collections
import json

from common import db_rows


def load_schedule(path):
    with open(path) as f:
        return json.load(f)


def check_all_to_all(doc):
    """Each ordered pair exactly once, each phase a permutation."""
    n = len(doc["hosts"])
    pairs = set()
    assert len(doc["phases"]) == n - 1, f"{len(doc['phases'])} phases for {n} hosts"
    for k, phase in enumerate(doc["phases"]):
        srcs = [t["src"] for t in phase]
        dsts = [t["dst"] for t in phase]
        assert sorted(srcs) == list(range(n)), f"phase {k}: not every rank sends once"
        assert sorted(dsts) == list(range(n)), f"phase {k}: not every rank receives once"
        for t in phase:
            assert t["src"] != t["dst"]
            pairs.add((t["src"], t["dst"]))
    assert len(pairs) == n * (n - 1)


def link_loads(db, scan, doc):
    """Per phase, transfers per directed link (node_idx, out_port), from the stored routes.
    Returns (max load on switch-to-switch links per phase, dict of route status counts)."""
    ports = {}
    for node, num, guid, base, lmc, peer, peer_port in db_rows(
            db, "SELECT node_idx, num, guid, base_lid, lmc, peer_node, peer_port FROM port WHERE scan_id=?", scan):
        ports[guid] = (node, num, base, lmc, peer)
    kinds = dict(db_rows(db, "SELECT idx, type FROM node WHERE scan_id=?", scan))
    peer_of = {(n, p): pn for n, p, pn in db_rows(db, "SELECT node_idx, num, peer_node FROM port WHERE scan_id=?", scan)}
    routes = {(i, d): (s, h) for i, d, s, h in db_rows(db, "SELECT ingress, dlid, status, hops FROM route WHERE scan_id=?", scan)}
    hosts = [ports[h["port_guid"]] for h in doc["hosts"]]
    statuses = collections.Counter()
    maxima = []
    for phase in doc["phases"]:
        load = collections.Counter()
        for t in phase:
            node, num, base, lmc, ingress = hosts[t["src"]]
            dnode, dnum, dbase, dlmc, _ = hosts[t["dst"]]
            assert dbase <= t["dlid"] < dbase + (1 << dlmc), "DLID not owned by the destination"
            status, hops = routes[(ingress, t["dlid"])]
            statuses[status] += 1
            for hop in hops.split():
                n, p = map(int, hop.split(":"))
                if p not in (0, 255):
                    load[(n, p)] += 1
        switch_loads = [c for (n, p), c in load.items()
                        if kinds[n] == "switch" and kinds.get(peer_of.get((n, p)), "") == "switch"]
        maxima.append(max(switch_loads, default=0))
    return maxima, statuses
