"""Real fabric dumps in ../shared/realdata (its SOURCES.md says where each comes from), read in
place and never copied into the project; and, for ibsim (which replays only `ibnetdiscover`
output), the `ibnetdiscover -v -p` port report of such a dump rewritten as ibnetdiscover text,
with cables left out where a test asks for a variant."""
import os
import re

from common import SOURCE

REALDATA = os.path.normpath(os.path.join(SOURCE, "..", "shared", "realdata"))

# "SW 18 36 0x00066a00ec002dd9 4x QDR - SW 2 19 0x00066a00eb002cb2 ( 'L112 desc' - 'S201A desc' )"
LINK = re.compile(r"^(CA|SW|RT)\s+\d+\s+(\d+)\s+(0x[0-9a-fA-F]+)\s+(\d+x)\s+(\S+)\s+-\s+(CA|SW|RT)\s+\d+\s+(\d+)\s+(0x[0-9a-fA-F]+)"
                  r"\s+\(\s+'(.*)'\s+-\s+'(.*)'\s+\)\s*$")


def dump(*parts):
    """The path of a dump; a missing one fails the test (CI has ../shared beside the clone)."""
    path = os.path.join(REALDATA, *parts)
    assert os.path.exists(path), f"{path}: the real dumps are not beside the clone (../shared/realdata)"
    return path


def ports_report_to_topology(text, drop=0):
    """ibnetdiscover text of the linked ports of a `-v -p` report (ports without a peer are left
    out, as they are down); `drop`: that many switch-to-switch cables, spread evenly over the
    report's order, left out as well: a variant with cables missing. Returns (text, the cables dropped)."""
    nodes, cables = {}, []
    for line in text.splitlines():
        m = LINK.match(line)
        if not m:
            continue
        k1, p1, g1, width, speed, k2, p2, g2, d1, d2 = m.groups()
        for kind, guid, desc, port, peer, peer_port in ((k1, g1, d1, p1, g2, p2), (k2, g2, d2, p2, g1, p1)):
            n = nodes.setdefault(guid.lower(), {"kind": kind, "desc": desc, "ports": {}})
            n["ports"][int(port)] = (peer.lower(), int(peer_port), width + speed)
        if k1 == "SW" and k2 == "SW" and (g2.lower(), int(p2)) not in cables:
            cables.append((g1.lower(), int(p1)))
    dropped = cables[::max(1, len(cables) // drop)][:drop] if drop else []  # spread over the fabric
    for guid, port in dropped:
        peer, peer_port, _ = nodes[guid]["ports"].pop(port)
        nodes[peer]["ports"].pop(peer_port)

    def node_id(guid):
        return ("S-" if nodes[guid]["kind"] == "SW" else "H-") + guid[2:].rjust(16, "0")

    out = ["#", "# Topology file: from a port report (tests/sim/realdata.py)", "#"]
    for guid, n in sorted(nodes.items(), key=lambda x: x[1]["kind"] != "SW"):
        if n["kind"] == "SW":
            out.append(f'Switch\t{max(36, max(n["ports"], default=1))} "{node_id(guid)}"\t\t# "{n["desc"]}" base port 0 lid 0 lmc 0')
            for p in sorted(n["ports"]):
                peer, peer_port, rate = n["ports"][p]
                out.append(f'[{p}]\t"{node_id(peer)}"[{peer_port}]\t\t# "{nodes[peer]["desc"]}" lid 0 {rate}')
        elif n["ports"]:
            out.append(f'Ca\t{max(n["ports"])} "{node_id(guid)}"\t\t# "{n["desc"]}"')
            for p in sorted(n["ports"]):
                peer, peer_port, rate = n["ports"][p]
                out.append(f'[{p}]({guid[2:]}) \t"{node_id(peer)}"[{peer_port}]\t\t# lid 0 lmc 0 "{nodes[peer]["desc"]}" lid 0 {rate}')
        out.append("")
    return "\n".join(out) + "\n", dropped
