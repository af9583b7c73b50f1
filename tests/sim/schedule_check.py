"""Independent checks of an exported schedule: structure, and link loads recomputed from the
database's stored routes (the `route` table), not from the planner's own code."""
import collections
import math
import json

from common import db_rows


def load_schedule(path):
    with open(path) as f:
        return json.load(f)


def groups_of(doc):
    n = len(doc["hosts"])
    g = doc.get("groups")
    return (g["senders"], g["receivers"]) if g else (list(range(n)), list(range(n)))


def slice_transfers(s, direction):
    """A slice's "sends" or "receives" as a list of {phase, dst|src, dlid}, whichever version wrote
    it: a list of objects (1..3), or columns (4: "phase" left out where transfer i is in phase i)."""
    t = s[direction]
    if isinstance(t, list):
        return t
    key = "dst" if direction == "sends" else "src"
    phases = t.get("phase", list(range(len(t[key]))))
    assert len(phases) == len(t[key]) == len(t["dlid"]), "columns of one length"
    return [{"phase": p, key: peer, "dlid": d} for p, peer, d in zip(phases, t[key], t["dlid"])]


def phases_of(doc):
    """Every phase as a list of {src, dst, dlid}: the compact encoding (format version 2, docs/
    schedule-format.md) decoded here from its description, independently of ibroute's reader."""
    ph = doc["phases"]
    if isinstance(ph, list):
        return ph
    if ph["encoding"] == "ring":
        return ring_phases_of(doc)
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


def ring_phases_of(doc):
    """The "ring" encoding (version 3, an all-to-all): rank r at place places[r] of `size`; in shift
    k the rank at place q sends to the rank at place (q + k) mod size, if a rank holds it."""
    ph = doc["phases"]
    assert doc["version"] >= 3 and "groups" not in doc
    n, size, d = len(doc["hosts"]), ph["size"], ph["offset_digits"]
    assert len(ph["places"]) == n and len(set(ph["places"])) == n and all(0 <= q < size for q in ph["places"])
    holder = {q: r for r, q in enumerate(ph["places"])}
    out = []
    for k, line in zip(ph["shifts"], ph["offsets"], strict=True):
        assert 1 <= k < size and len(line) == d * n
        phase = []
        for r in range(n):
            code = line[r * d:(r + 1) * d]
            dst = holder.get((ph["places"][r] + k) % size)
            if dst is None:
                assert code == "." * d, f"ring shift {k}, rank {r}: {code!r} where the place is empty"
                continue
            phase.append({"src": r, "dst": dst, "dlid": doc["hosts"][dst]["base_lid"] + int(code, 16)})
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
    phase, max(senders, receivers) phases (less one when a shift would only send to self; more in
    a version-3 file whose waiting transfers were packed apart)."""
    senders, receivers = groups_of(doc)
    phases = phases_of(doc)
    assert len(phases) <= max(len(senders), len(receivers)) or doc.get("version") == 3
    pairs = collections.Counter()
    for k, phase in enumerate(phases):
        assert len({t["src"] for t in phase}) == len(phase), f"phase {k}: a rank sends twice"
        assert len({t["dst"] for t in phase}) == len(phase), f"phase {k}: a rank receives twice"
        pairs.update((t["src"], t["dst"]) for t in phase)
    want = {(s, r) for s in senders for r in receivers if s != r}
    assert set(pairs) == want and all(c == 1 for c in pairs.values())


def check_all_to_all(doc):
    """Each ordered pair exactly once; each phase a permutation (N-1 phases) — or, in a version-3
    file whose busy leaves' transfers waited, more phases, nobody twice in one."""
    n = len(doc["hosts"])
    pairs = set()
    phases = phases_of(doc)
    if doc.get("version") == 3 and len(phases) > n - 1:
        for k, phase in enumerate(phases):
            assert len({t["src"] for t in phase}) == len(phase), f"phase {k}: a rank sends twice"
            assert len({t["dst"] for t in phase}) == len(phase), f"phase {k}: a rank receives twice"
            for t in phase:
                assert t["src"] != t["dst"] and (t["src"], t["dst"]) not in pairs
                pairs.add((t["src"], t["dst"]))
        assert len(pairs) == n * (n - 1)
        return
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


# Data rate per lane in Gb/s, after the line code (8b/10b up to QDR, 64b/66b from FDR10 on): what
# a lane carries of a message, so a QDR host (8) on FDR10 switch links (10) has 1.25 of its rate
# there, not the signalling rates' 1.03.
LANE = {"SDR": 2.0, "DDR": 4.0, "QDR": 8.0, "FDR10": 10.0, "FDR": 13.64, "EDR": 25.0, "HDR": 50.0, "NDR": 100.0,
        "XDR": 200.0}


def host_link_rate(r, hosts):
    """The slot's rate: the most common of the planned hosts' link rates, the lowest of a tie (a
    message at it is one slot; docs/planner.md). Not the median: where no rate has half the hosts
    the median can be a rate few hosts have, and the slots a slow host's message takes change."""
    counts = collections.Counter(r.rate[(n, p)] for n, p, _, _, _ in hosts)
    return min(counts, key=lambda rate: (-counts[rate], rate))


class Routes:
    """The fabric as the database stores it, read here without ibroute's code: ports, link rates,
    and the stored route of every (ingress switch, DLID)."""

    def __init__(self, db, scan):
        self.ports = {}
        self.rate = {}
        self.peer = {}
        self.kind = dict(db_rows(db, "SELECT idx, type FROM node WHERE scan_id=?", scan))
        rows = db_rows(db, "SELECT node_idx, num, guid, base_lid, lmc, peer_node, peer_port, width, speed FROM port WHERE scan_id=?", scan)
        mine = {(n, p): (w or 0) * LANE.get(sp or "", 0) for n, p, g, b, l, pn, pp, w, sp in rows}
        for node, num, guid, base, lmc, peer, peer_port, width, speed in rows:
            self.ports[guid] = (node, num, base, lmc, peer)
            if peer is not None:
                self.peer[(node, num)] = (peer, peer_port)
                self.rate[(node, num)] = min(mine[(node, num)], mine.get((peer, peer_port), 0)) or mine[(node, num)]
        self.routes = {(i, d): (s, h) for i, d, s, h in db_rows(db, "SELECT ingress, dlid, status, hops FROM route WHERE scan_id=?", scan)}
        self._parsed = {}

    def hops(self, ingress, dlid):
        """The stored route's status and its directed links (node, port), parsed once per key."""
        key = (ingress, dlid)
        got = self._parsed.get(key)
        if got is None:
            status, hops = self.routes.get(key, (None, ""))
            links = tuple(lk for lk in (tuple(map(int, h.split(":"))) for h in (hops or "").split()) if lk[1] not in (0, 255))
            got = self._parsed[key] = (status, links)
        return got

    def switch_link(self, n, p):
        return self.kind.get(n) == "switch" and self.kind.get(self.peer.get((n, p), (None,))[0]) == "switch"


def phase_link_loads(r, hosts, phase):
    """Transfers per directed link (node, port) of one phase: the source's own link, then every hop
    of the stored route."""
    load = collections.Counter()
    parsed = r._parsed
    for t in phase:
        node, num, base, lmc, ingress = hosts[t["src"]]
        load[(node, num)] += 1
        key = (ingress, t["dlid"])
        got = parsed.get(key)
        if got is None:
            if key not in r.routes:
                raise KeyError(key)
            got = r.hops(*key)
        for lk in got[1]:
            load[lk] += 1
    return load


def least_of(r, hosts, senders, receivers, host_rate, counts):
    """T*: each host's messages over its own link, each leaf's leaving and entering transfers over
    its up-links — those `counts(leaf, port)` admits."""
    S, R = set(senders), set(receivers)
    least = 0.0
    for i, (n, p, _, _, _) in enumerate(hosts):
        msgs = max(len(R - {i}) if i in S else 0, len(S - {i}) if i in R else 0)
        least = max(least, msgs * host_rate / r.rate[(n, p)])
    by_leaf = collections.defaultdict(list)
    for i, (n, p, _, _, leaf) in enumerate(hosts):
        by_leaf[leaf].append(i)
    for leaf, members in by_leaf.items():
        up = sum(r.rate[(leaf, q)] / host_rate for (m, q) in r.peer if m == leaf and r.switch_link(leaf, q) and counts(leaf, q))
        s_in = sum(1 for i in members if i in S)
        r_in = sum(1 for i in members if i in R)
        if up > 0:
            least = max(least, s_in * (len(R) - r_in) / up, r_in * (len(S) - s_in) / up)
    return least


def efficiency(db, scan, doc, totals=None):
    """T, T* and T*/T of an exported schedule from the stored routes: T sums each phase's time (its
    worst link's transfers x host rate / link rate, at least 1), T* is the largest of each host's
    messages over its link and each leaf's leaving and entering transfers over its up-links.
    Returns (T, T*, phases). `totals` (a Counter): each link's transfers over all phases added to it,
    for worst_link_total without a second pass."""
    r = Routes(db, scan)
    hosts = [r.ports[h["port_guid"]] for h in doc["hosts"]]
    host_rate = host_link_rate(r, hosts)
    senders, receivers = groups_of(doc)
    total = 0
    phases = phases_of(doc)
    for phase in phases:
        load = phase_link_loads(r, hosts, phase)
        if totals is not None:
            totals.update(load)
        worst = max((c * host_rate / r.rate[l] for l, c in load.items()), default=0)
        total += math.ceil(worst - 1e-9) if worst > 1 else (1 if phase else 0)
    return total, least_of(r, hosts, senders, receivers, host_rate, lambda leaf, q: True), len(phases)


def tables_least_time(db, scan, doc):
    """T* over the routing tables, recomputed from the stored routes: each leaf's leaving and
    entering transfers over only the up-links some stored route from a host's leaf to a host's
    LID uses (an idle up-link carries nothing), and each host's messages over its link."""
    r = Routes(db, scan)
    hosts = [r.ports[h["port_guid"]] for h in doc["hosts"]]
    host_rate = host_link_rate(r, hosts)
    senders, receivers = groups_of(doc)
    leaves = {leaf for _, _, _, _, leaf in hosts}
    used = set()
    for leaf in leaves:
        for _, _, base, lmc, _ in hosts:
            for o in range(1 << (lmc or 0)):
                status, hops = r.routes.get((leaf, base + o), (None, ""))
                for hop in (hops or "").split():
                    n, p = map(int, hop.split(":"))
                    used.add((n, p))
    return least_of(r, hosts, senders, receivers, host_rate, lambda leaf, q: (leaf, q) in used)


def worst_link_total(db, scan, doc, totals=None):
    """The most transfers of the whole exchange on one switch-to-switch link, per host-link rate,
    from the stored routes of the DLIDs the file names: at LMC 0 (one route per pair) no plan can
    take less than this many message-times, so T* / this is the ceiling the tables leave.
    `totals`: the links' transfers as efficiency(..., totals) counted them (else counted here)."""
    r = Routes(db, scan)
    hosts = [r.ports[h["port_guid"]] for h in doc["hosts"]]
    host_rate = host_link_rate(r, hosts)
    total = totals
    if total is None:
        total = collections.Counter()
        for phase in phases_of(doc):
            total.update(phase_link_loads(r, hosts, phase))
    return max((c * host_rate / r.rate[l] for l, c in total.items() if r.switch_link(*l)), default=0)


def round_robin(db, scan, names, senders=(), receivers=(), topology=False):
    """Round-robin over a host set (names, in rank order) with base LIDs, as an exported document:
    the baseline a user would run. Two groups: the shifts of senders -> receivers (names).
    topology: ranks by leaf and port instead of the order given."""
    r = Routes(db, scan)
    guid = dict(db_rows(db, "SELECT n.desc, p.guid FROM node n JOIN port p ON p.scan_id = n.scan_id AND p.node_idx = n.idx "
                            "AND p.num = 1 WHERE n.scan_id = ? AND n.type = 'ca'", scan))
    order = list(names)
    if topology:
        order.sort(key=lambda h: (r.ports[guid[h]][4], r.peer[r.ports[guid[h]][:2]][1]))
    hosts = [{"name": h, "port_guid": guid[h], "base_lid": r.ports[guid[h]][2]} for h in order]
    rank = {h: i for i, h in enumerate(order)}
    S = [rank[h] for h in senders] or list(range(len(order)))
    R = [rank[h] for h in receivers] or list(range(len(order)))
    m = max(len(S), len(R))
    phases = [[{"src": s, "dst": R[(i + k) % m], "dlid": hosts[R[(i + k) % m]]["base_lid"]}
               for i, s in enumerate(S) if (i + k) % m < len(R) and R[(i + k) % m] != s] for k in range(m)]
    doc = {"hosts": hosts, "phases": [p for p in phases if p]}
    if senders:
        doc["groups"] = {"senders": S, "receivers": R}
    return doc


def rate_check(db, scan, doc):
    """The per-node rate an exported schedule runs at, from its file and the stored routes (not the
    planner's figure): the busiest sender's bytes over the sum of the phases' lengths (phase_slots x
    slot_s). Returns (bytes per second per node, [(phase, seconds it lasts, seconds its busiest link
    needs)]), the need being each link's transfers x message size at that link's own rate."""
    r = Routes(db, scan)
    hosts = [r.ports[h["port_guid"]] for h in doc["hosts"]]
    timing = doc["timing"]
    size, slot = timing["message_size"], timing["slot_s"]
    phases = phases_of(doc)
    slots = timing.get("phase_slots") or [1] * len(phases)
    sent = collections.Counter()
    lengths = []
    for k, phase in enumerate(phases):
        sent.update(t["src"] for t in phase)
        load = phase_link_loads(r, hosts, phase)
        need = max((c * size * 8 / (r.rate[l] * 1e9) for l, c in load.items()), default=0)
        lengths.append((k, slots[k] * slot, need))
    total = sum(length for _, length, _ in lengths)
    return max(sent.values()) * size / total, lengths


def tree_groups(r):
    """A three-level tree read from its cabling, not from ibroute: leaves (switches with hosts), aggs
    (their switch neighbours), and per leaf and agg its pod (leaves and aggs joined by cables)."""
    switches = {n for n, k in r.kind.items() if k == "switch"}
    leaves = {n for (n, p), (peer, _) in r.peer.items() if n in switches and r.kind.get(peer) == "ca"}
    aggs = {peer for (n, p), (peer, _) in r.peer.items() if n in leaves and peer in switches and peer not in leaves}
    pod = {x: x for x in leaves | aggs}

    def find(x):
        while pod[x] != x:
            x = pod[x]
        return x
    for (n, p), (peer, _) in r.peer.items():
        if n in leaves and peer in aggs:
            pod[find(n)] = find(peer)
    return leaves, aggs, {x: find(x) for x in pod}


def phase_group_bound(r, hosts, phase, groups):
    """The least worst link of a phase that its leaves and pods allow, from the stored routes of every
    LID of each transfer's destination: per leaf and pod, the transfers that must leave (enter) it
    over the links leaving (entering) it that any of their routes use, ceil(transfers / links)."""
    leaves, aggs, pod = groups
    crossing = collections.defaultdict(lambda: [0, set()])  # (group, direction) -> [transfers, links]
    for t in phase:
        _, _, _, _, src_leaf = hosts[t["src"]]
        _, _, base, lmc, dst_leaf = hosts[t["dst"]]
        if src_leaf == dst_leaf:
            continue
        cuts = [(("leaf", src_leaf), "out"), (("leaf", dst_leaf), "in")]
        if pod[src_leaf] != pod[dst_leaf]:
            cuts += [(("pod", pod[src_leaf]), "out"), (("pod", pod[dst_leaf]), "in")]
        for c in cuts:
            crossing[c][0] += 1
        for o in range(1 << (lmc or 0)):
            _, hops = r.routes.get((src_leaf, base + o), (None, ""))
            for hop in (hops or "").split():
                n, p = map(int, hop.split(":"))
                peer = r.peer.get((n, p), (None,))[0]
                if n == src_leaf and peer in aggs:
                    crossing[(("leaf", src_leaf), "out")][1].add((n, p))
                if peer == dst_leaf and n in aggs:
                    crossing[(("leaf", dst_leaf), "in")][1].add((n, p))
                if n in aggs and peer not in pod and r.kind.get(peer) == "switch" and pod[n] == pod[src_leaf] != pod[dst_leaf]:
                    crossing[(("pod", pod[src_leaf]), "out")][1].add((n, p))
                if peer in aggs and n not in pod and pod[peer] == pod[dst_leaf] != pod[src_leaf]:
                    crossing[(("pod", pod[dst_leaf]), "in")][1].add((n, p))
    return max((-(-count // len(links)) for count, links in crossing.values() if links), default=0)


def tables_route_bound(db, scan, doc):
    """The least time the stored routes allow an exchange, recomputed here from the `route` table
    for every transfer and every LID of its destination: each host's messages over its own link,
    and per switch and direction every set of links the transfers whose every route passes that
    switch leave (enter) it by — the transfers whose set lies within it, over what its links carry
    at the host rate. Returns (bound, what sets it)."""
    r = Routes(db, scan)
    hosts = [r.ports[h["port_guid"]] for h in doc["hosts"]]
    host_rate = host_link_rate(r, hosts)
    senders, receivers = groups_of(doc)
    S, R = set(senders), set(receivers)
    best = (0.0, "")
    for i, (n, p, _, _, _) in enumerate(hosts):
        msgs = max(len(R - {i}) if i in S else 0, len(S - {i}) if i in R else 0)
        best = max(best, (msgs * host_rate / r.rate[(n, p)], f"host link {n}:{p}"))
    sets = collections.Counter()  # (switch, direction, frozenset of links) -> transfers
    for i in S:
        ingress = hosts[i][4]
        for j in R - {i}:
            _, _, base, lmc, _ = hosts[j]
            routes = []
            for o in range(1 << (lmc or 0)):
                status, hops = r.routes.get((ingress, base + o), (None, ""))
                if status != 0:
                    continue
                links = [tuple(map(int, h.split(":"))) for h in (hops or "").split()]
                links = [lk for lk in links if lk[1] not in (0, 255)]
                leave = {lk[0]: lk for lk in links}
                enter = {r.peer[lk][0]: lk for lk in links[:-1]}
                routes.append((leave, enter))
            if not routes:
                continue
            for d in (0, 1):
                for sw in set.intersection(*(set(rt[d]) for rt in routes)):
                    sets[(sw, d, frozenset(rt[d][sw] for rt in routes))] += 1
    by_switch = collections.defaultdict(list)
    for (sw, d, links), count in sets.items():
        by_switch[(sw, d)].append((links, count))
    for (sw, d), entries in by_switch.items():
        for links, _ in entries:
            demand = sum(c for other, c in entries if other <= links)
            cap = sum(r.rate[lk] / host_rate for lk in links)
            if cap > 0:
                best = max(best, (demand / cap, f"switch {sw} {'out' if d == 0 else 'in'} by {sorted(links)}"))
    return best


def tables_pod_bound(db, scan, doc):
    """The least time the stored routes allow, per pod: the switches below the top level fall into
    groups connected without it (a three-level tree's pods; a two-level tree's single leaves); the
    transfers into a group from outside it can enter only over the links into it that some stored
    route of theirs (any LID of the destination) takes. Levels are counted here from the cabling:
    the hosts' switches are level 1, each further switch one above the nearest lower one.
    Returns (bound, what sets it)."""
    r = Routes(db, scan)
    hosts = [r.ports[h["port_guid"]] for h in doc["hosts"]]
    host_rate = host_link_rate(r, hosts)
    senders, receivers = groups_of(doc)
    S, R = set(senders), set(receivers)
    switches = {n for n, k in r.kind.items() if k == "switch"}
    neighbours = collections.defaultdict(set)
    for (n, p), (m, q) in r.peer.items():
        if n in switches and m in switches and n != m:
            neighbours[n].add(m)
    level = {leaf: 1 for _, _, _, _, leaf in hosts}
    frontier = list(level)
    while frontier:
        nxt = []
        for n in frontier:
            for m in neighbours[n]:
                if m not in level:
                    level[m] = level[n] + 1
                    nxt.append(m)
        frontier = nxt
    top = max(level.values())
    group = {}
    for start in level:
        if level[start] == top or start in group:
            continue
        group[start], stack = start, [start]
        while stack:
            n = stack.pop()
            for m in neighbours[n]:
                if level.get(m, top) < top and m not in group:
                    group[m] = start
                    stack.append(m)
    by_leaf = collections.Counter(leaf for i, (_, _, _, _, leaf) in enumerate(hosts) if i in S)
    demand, entries = collections.Counter(), collections.defaultdict(set)
    for leaf, count in by_leaf.items():
        for j in R:
            _, _, base, lmc, dleaf = hosts[j]
            into = group.get(dleaf)
            if into is None or group.get(leaf) == into:
                continue
            routed = False  # a transfer with no working route enters nowhere: not counted
            for o in range(1 << (lmc or 0)):
                status, links = r.hops(leaf, base + o)
                if status != 0:
                    continue
                routed = True
                for n, p in links:
                    if group.get(n) != into and group.get(r.peer[(n, p)][0]) == into:
                        entries[into].add((n, p))
            demand[into] += count if routed else 0
    best = (0.0, "")
    for into, links in entries.items():
        cap = sum(r.rate[lk] / host_rate for lk in links)
        if cap > 0:
            best = max(best, (demand[into] / cap, f"{demand[into]} transfers into the group of switch {into} over {len(links)} links"))
    return best
