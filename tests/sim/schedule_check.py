"""Independent checks of an exported schedule: structure, and link loads recomputed from the
database's stored routes (the `route` table), not from the planner's own code."""
import collections
import json

from common import db_rows


def load_schedule(path):
    with open(path) as f:
        return json.load(f)


def groups_of(doc):
    n = len(doc["hosts"])
    g = doc.get("groups")
    return (g["senders"], g["receivers"]) if g else (list(range(n)), list(range(n)))


def phases_of(doc):
    """Every phase as a list of {src, dst, dlid}: the compact encoding (format version 2, docs/
    schedule-format.md) decoded here from its description, independently of ibroute's reader."""
    ph = doc["phases"]
    if isinstance(ph, list):
        return ph
    assert ph["encoding"] == "shift"
    senders, receivers = groups_of(doc)
    m = max(len(senders), len(receivers))
    d = ph["offset_digits"]
    out = []
    for k, line in zip(ph["shifts"], ph["offsets"], strict=True):
        assert len(line) == d * len(senders)
        phase = []
        for i, s in enumerate(senders):
            j = (i + k) % m
            code = line[i * d:(i + 1) * d]
            if j >= len(receivers) or receivers[j] == s:
                assert code == "." * d, f"shift {k}, sender {i}: {code!r} where there is no transfer"
                continue
            dst = receivers[j]
            phase.append({"src": s, "dst": dst, "dlid": doc["hosts"][dst]["base_lid"] + int(code, 16)})
        out.append(phase)
    return out


def explicit(doc):
    """The same all-to-all schedule in format version 1: every transfer an object."""
    assert "groups" not in doc
    old = dict(doc)
    old["version"] = 1
    old["phases"] = phases_of(doc)
    return old


def check_groups(doc):
    """Every (sender, receiver) pair once (none to itself), nobody sending or receiving twice in a
    phase, max(senders, receivers) phases (less one when a shift would only send to self)."""
    senders, receivers = groups_of(doc)
    phases = phases_of(doc)
    assert len(phases) <= max(len(senders), len(receivers))
    pairs = collections.Counter()
    for k, phase in enumerate(phases):
        assert len({t["src"] for t in phase}) == len(phase), f"phase {k}: a rank sends twice"
        assert len({t["dst"] for t in phase}) == len(phase), f"phase {k}: a rank receives twice"
        pairs.update((t["src"], t["dst"]) for t in phase)
    want = {(s, r) for s in senders for r in receivers if s != r}
    assert set(pairs) == want and all(c == 1 for c in pairs.values())


def check_all_to_all(doc):
    """Each ordered pair exactly once, each phase a permutation."""
    n = len(doc["hosts"])
    pairs = set()
    phases = phases_of(doc)
    assert len(phases) == n - 1, f"{len(phases)} phases for {n} hosts"
    for k, phase in enumerate(phases):
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
    for phase in phases_of(doc):
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
