"""`ibroute topo --format slurm` read back by Slurm itself: slurmctld (Debian's package) started
here with TopologyPlugin=topology/tree and the generated topology.conf, `scontrol show topology`
compared with the cabling as the topology file says it (parsed here, not by ibroute): a live
ibsim + OpenSM fabric with host names that do not follow the cabling and a host's cable pulled, and
a real DGX SuperPOD dump (several HCAs per host, 69 HCAs with the adapter's default description,
SHARP aggregation nodes) imported offline."""
import getpass
import os
import re
import shutil
import socket
import subprocess
import time
import unittest

from common import EXAMPLES, IBROUTE, TempDirTest, ibroute
from realdata import dump
from simfabric import SimFabric

SLURM_CONF = """ClusterName=ibroute
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={port}
SlurmdPort={dport}
AuthType=auth/none
CredType=cred/none
SlurmUser={user}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmctldLogFile={dir}/slurmctld.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/linear
TopologyPlugin=topology/tree
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(shutil.which("slurmctld") and shutil.which("scontrol"), "Slurm (slurmctld, scontrol) not installed: scripts/deps.sh")
class SlurmTopology(TempDirTest):
    def slurm_reads(self, topology_conf, nodes):
        """slurmctld with this topology.conf and `nodes` as its nodes; `scontrol show topology` as
        {switch: (level, {nodes}, {switches})}, every host list expanded by scontrol itself."""
        d = self.path("slurm")
        os.makedirs(os.path.join(d, "state"), exist_ok=True)
        conf = os.path.join(d, "slurm.conf")
        with open(conf, "w") as f:
            f.write(SLURM_CONF.format(host=socket.gethostname(), port=free_port(), dport=free_port(), user=getpass.getuser(), dir=d))
            for n in sorted(nodes):
                f.write(f"NodeName={n} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n")
            f.write("PartitionName=all Nodes=ALL Default=YES State=UP\n")
        shutil.copy(topology_conf, os.path.join(d, "topology.conf"))
        env = dict(os.environ, SLURM_CONF=conf)
        ctld = subprocess.Popen(["timeout", "120", "slurmctld", "-D", "-c"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            out = None
            for _ in range(60):
                r = subprocess.run(["scontrol", "show", "topology"], env=env, capture_output=True, text=True, timeout=20)
                if r.returncode == 0 and "SwitchName=" in r.stdout:
                    out = r.stdout
                    break
                self.assertIsNone(ctld.poll(), f"slurmctld ended: {ctld.stderr.read()[-800:]}")
                time.sleep(0.5)
            self.assertIsNotNone(out, "scontrol never showed a topology")

            def expand(hostlist):
                if not hostlist:
                    return set()
                r = subprocess.run(["scontrol", "show", "hostnames", hostlist], env=env, capture_output=True, text=True, timeout=20, check=True)
                return set(r.stdout.split())
            seen = {}
            for line in out.splitlines():
                fields = dict(re.findall(r"(\w+)=(\S+)", line))
                if "SwitchName" in fields:
                    seen[fields["SwitchName"]] = (int(fields["Level"]), expand(fields.get("Nodes", "")), expand(fields.get("Switches", "")))
            return seen
        finally:
            ctld.terminate()
            ctld.wait(timeout=30)

    def test_a_live_fabric_with_a_host_cable_pulled(self):
        # The cabling from the topology file: per switch, its hosts and its switch neighbours.
        topo = os.path.join(EXAMPLES, "hft96-shuffled.topo")
        text = open(topo).read()
        switches = set(re.findall(r'^Switch\s+\d+\s+"([^"]+)"', text, re.M))
        hosts_of, peers_of, cur = {}, {}, None
        for line in text.splitlines():
            if m := re.match(r'^(Switch|Hca)\s+\d+\s+"([^"]+)"', line):
                cur = m.group(2) if m.group(1) == "Switch" else None
                if cur:
                    hosts_of[cur], peers_of[cur] = set(), set()
            elif cur and (m := re.match(r'^\[\d+\]\s+"([^"]+)"', line)):
                (peers_of if m.group(1) in switches else hosts_of)[cur].add(m.group(1))
        pulled = "node2-040"  # on ibswitch01 port 1 (the file's first port of that switch)
        self.assertIn(pulled, hosts_of["ibswitch01"])
        db, conf = self.path("f.db"), self.path("topology.conf")
        with SimFabric(topo, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)  # before the cable is pulled
            sim.console('Unlink "ibswitch01"[1]')
            sim.route()
            ibroute("scan", "--db", db, sim=sim)
        r = ibroute("topo", "--db", db, "--format", "slurm", "-o", conf)
        everyone = set().union(*hosts_of.values()) - {pulled}
        seen = self.slurm_reads(conf, everyone)
        leaves = {k: v for k, v in hosts_of.items() if v}
        expected = sorted(sorted(v - {pulled}) for v in leaves.values())
        self.assertEqual(sorted(sorted(nodes) for level, nodes, _ in seen.values() if level == 0), expected)
        spines = [k for k, v in hosts_of.items() if not v]
        tops = [s for s in seen.values() if s[0] == 1]
        self.assertEqual(len(tops), len(spines))
        # Each spine's children: the leaves it is cabled to (4 up-links per leaf, one to each spine).
        self.assertEqual(sorted(len(sw) for _, _, sw in tops), sorted(len(peers_of[s]) for s in spines))
        # Every host named; the one the fabric lost since the scan before said so.
        self.assertEqual(r.stderr.splitlines(), [f"topo: left out {pulled}: in scan 1, gone from scan 2"])

    def test_a_real_superpod_with_rails_default_descriptions_and_sharp_nodes(self):
        path = dump("nvidia-topograph", "example.out")
        db, conf = self.path("pod.db"), self.path("topology.conf")
        ibroute("scan", "--db", db, "--topology", path)
        r = ibroute("topo", "--db", db, "--format", "slurm", "-o", conf)
        # From the file: every CA's description and the switch it is cabled to, and each switch's
        # leaf or spine number as its description gives it ("IBLEAF-01-02").
        ca_leaf, switch_desc, cur, ident, desc = [], {}, None, None, None
        for line in open(path, encoding="utf-8", errors="replace"):
            if m := re.match(r'^(Switch|Ca)\s+\d+\s+"([^"]+)"\s+#\s+"([^"]*)"', line):
                cur, ident, desc = m.group(1), m.group(2), m.group(3)
                if cur == "Switch":
                    switch_desc[ident] = desc
            elif cur == "Ca" and (m := re.match(r'^\[\d+\]\S*\s+"([^"]+)"\[\d+\]', line)):
                ca_leaf.append((desc, m.group(1)))
        place = re.compile(r"IB(?:LEAF|SPINE)-[0-9-]*[0-9]")
        default = re.compile(r"^MT\d+ ")
        named = {(d.split()[0], place.search(switch_desc[sw]).group(0)) for d, sw in ca_leaf
                 if not default.match(d) and "Aggregation Node" not in d}
        hosts = {h for h, _ in named}
        left = sum(1 for d, _ in ca_leaf if default.match(d))
        self.assertEqual(len(re.findall(r"default description|describe themselves so", r.stderr)), left, r.stderr[-500:])
        seen = self.slurm_reads(conf, hosts)
        listed = [n for level, nodes, _ in seen.values() for n in nodes if level == 0]
        self.assertEqual(sorted(listed), sorted(hosts), "every named host once, under one leaf")
        # Each under a leaf one of its HCAs is cabled to; every spine above all the leaves it is cabled to.
        for name, (level, nodes, children) in seen.items():
            where = place.search(name).group(0)
            if level == 0:
                self.assertTrue(nodes, name)
                for n in nodes:
                    self.assertIn((n, where), named, f"{n} under {name}")
            else:
                self.assertIn("SPINE", where)
                self.assertTrue(children, name)

# Slurm's block topology (topology.yaml, Slurm 25.05 and later) is read by a newer Slurm than
# Debian 12 ships: Debian unstable's, in a chroot that debootstrap makes once (about 300 MB, 30 s
# on a good link) and keeps in the cache directory.
SID = os.path.join(os.environ.get("IBROUTE_CACHE", "/var/tmp"), "ibroute-slurm-sid")


def sid_root():
    if os.path.exists(os.path.join(SID, "usr", "sbin", "slurmctld")):
        return SID
    tmp = SID + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run(["debootstrap", "--variant=minbase", "--include=slurmctld,slurm-client", "sid", tmp, "http://deb.debian.org/debian"],
                   check=True, capture_output=True, timeout=1200)
    os.rename(tmp, SID)
    return SID


def in_sid(root, *cmd, **kw):
    """A command in the chroot, with /proc mounted in a mount namespace of its own (gone with it)."""
    return subprocess.run(["unshare", "-m", "--fork", "sh", "-c", f'mount -t proc proc "{root}/proc" && exec chroot "$0" "$@"', root,
                           "env", "SLURM_CONF=/ibroute-slurm/slurm.conf", *cmd], **kw)


@unittest.skipUnless(os.geteuid() == 0 and shutil.which("debootstrap") and shutil.which("unshare"),
                     "needs root, debootstrap and unshare (scripts/deps.sh) for a chroot with Slurm 25.05 or later")
class SlurmBlockTopology(TempDirTest):
    def test_blocks_read_back_by_a_slurm_with_the_block_plugin(self):
        root = sid_root()
        topo = os.path.join(EXAMPLES, "hft96-shuffled.topo")
        text = open(topo).read()
        switches = set(re.findall(r'^Switch\s+\d+\s+"([^"]+)"', text, re.M))
        hosts_of, cur = {}, None
        for line in text.splitlines():
            if m := re.match(r'^(Switch|Hca)\s+\d+\s+"([^"]+)"', line):
                cur = m.group(2) if m.group(1) == "Switch" else None
                if cur:
                    hosts_of[cur] = set()
            elif cur and (m := re.match(r'^\[\d+\]\s+"([^"]+)"', line)) and m.group(1) not in switches:
                hosts_of[cur].add(m.group(1))
        pulled = "node2-040"  # ibswitch01 port 1: that leaf keeps 7 of its 8 hosts
        db = self.path("f.db")
        with SimFabric(topo, lmc=0) as sim:
            ibroute("scan", "--db", db, sim=sim)
            sim.console('Unlink "ibswitch01"[1]')
            sim.route()
            ibroute("scan", "--db", db, sim=sim)
        d = os.path.join(root, "ibroute-slurm")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "state"))
        r = ibroute("topo", "--db", db, "--format", "slurm-block", "-o", os.path.join(d, "topology.yaml"))
        self.assertEqual(r.stderr.splitlines(), [f"topo: left out {pulled}: in scan 1, gone from scan 2"])
        everyone = set().union(*hosts_of.values()) - {pulled}
        port = free_port()
        with open(os.path.join(d, "slurm.conf"), "w") as f:
            f.write(SLURM_CONF.format(host=socket.gethostname(), port=port, dport=free_port(), user="root", dir="/ibroute-slurm")
                    .replace("SelectType=select/linear", "SelectType=select/cons_tres").replace("TopologyPlugin=topology/tree\n", ""))
            for n in sorted(everyone):
                f.write(f"NodeName={n} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n")
            f.write("PartitionName=all Nodes=ALL Default=YES State=UP\n")
        ctld = subprocess.Popen(["unshare", "-m", "--fork", "--kill-child=SIGTERM", "sh", "-c", f'mount -t proc proc "{root}/proc" && exec chroot "$0" "$@"', root,
                                 "env", "SLURM_CONF=/ibroute-slurm/slurm.conf", "timeout", "120", "slurmctld", "-D", "-c"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            out = None
            for _ in range(60):
                got = in_sid(root, "scontrol", "show", "topology", capture_output=True, text=True, timeout=20)
                if got.returncode == 0 and "BlockName=" in got.stdout:
                    out = got.stdout
                    break
                self.assertIsNone(ctld.poll(), f"slurmctld ended: {ctld.stderr.read()[-800:]}")
                time.sleep(0.5)
            self.assertIsNotNone(out, "scontrol never showed a block topology")
            blocks = {}
            for line in out.splitlines():
                fields = dict(re.findall(r"(\w+)=(\S+)", line))
                nodes = in_sid(root, "scontrol", "show", "hostnames", fields["Nodes"], capture_output=True, text=True, timeout=20, check=True)
                blocks[fields["BlockName"]] = (int(fields["BlockIndex"]), set(nodes.stdout.split()), int(fields["BlockSize"]))
        finally:
            ctld.kill()  # unshare --fork waits out SIGTERM; killed, it hands slurmctld SIGTERM (--kill-child)
            ctld.wait(timeout=30)
        leaves = {k: v - {pulled} for k, v in hosts_of.items() if v}
        self.assertEqual({k: v[1] for k, v in blocks.items()}, leaves, "a block per leaf, its hosts as cabled, the pulled one gone")
        self.assertEqual({v[2] for v in blocks.values()}, {min(len(v) for v in leaves.values())}, "the base block: the smallest leaf")
        self.assertEqual(sorted(blocks, key=lambda b: blocks[b][0]), sorted(leaves), "side by side in the order of their names")


if __name__ == "__main__":
    unittest.main()
