"""ibroute run on real libibverbs: Soft-RoCE in a qemu VM, ranks started by Open MPI's mpirun.

Schedules are planned on an ibsim + OpenSM fabric (96 hosts, shuffled names, LMC 2); the VM's
ranks are placed on some of its hosts with --placement, so the per-link figures map onto that
fabric's routes. One VM boot runs every scenario (a boot costs ~10 s under emulation); each
test then checks what its scenario left in the shared job directory.

The VM's ranks share 2 emulated CPUs, so posts are late by milliseconds now and then; tests of
timing take their margins from what the same run measured (the clock residuals, the slot), and
tests of the skip rule from what is certain (a stalled receiver takes one transfer per source).
"""
import json
import os
import random
import re
import shlex
import shutil
import sys
import tempfile
import time
import unittest
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sim"))
sys.path.insert(0, HERE)

from common import EXAMPLES, IBROUTE, db_rows, ibroute  # noqa: E402
from schedule_check import explicit  # noqa: E402
from simfabric import SimFabric  # noqa: E402
import softroce_vm  # noqa: E402

MPI_ENV = ("export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp "
           "OMPI_MCA_pml=ob1 OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo "
           "OMPI_MCA_rmaps_base_oversubscribe=1\n")  # 8 ranks on 2 virtual CPUs
SKEWS_US = [0, 1500, -700, 25000, -12345.6, 3.2, 480, -90000]
DRIFT_PPM = "0,400,-250,100"
DRIFT_S = 90
STALLED, DEAD, BAD_RKEY, SLOWED = 2, 3, 1, 5  # MPI ranks
PRELOAD = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

# Slurm as a cluster runs it, on one node (the VM, hostname "vm"): slurmctld and slurmd from
# Debian's packages, tasks started by srun with PMIx. auth/none: a one-node test cluster inside a
# VM has no munge key to share; config_overrides lets 2 emulated CPUs run 4 tasks.
SLURM_CONF = """ClusterName=ibroute-vm
SlurmctldHost=vm
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=/tmp/slurm/state
SlurmdSpoolDir=/tmp/slurm/spool
SlurmctldPidFile=/tmp/slurm/slurmctld.pid
SlurmdPidFile=/tmp/slurm/slurmd.pid
SlurmctldLogFile=/job/slurmctld.log
SlurmdLogFile=/job/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/linear
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=vm CPUs=8 Sockets=1 CoresPerSocket=8 ThreadsPerCore=1 State=UNKNOWN
PartitionName=all Nodes=vm Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""
# slurmd needs a cgroup hierarchy: the VM has no systemd, so cgroup v2 is mounted by hand and
# Slurm told to make its own directories in it.
CGROUP_CONF = "CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n"
# Waits for rank 0's first progress line (the ranks are past start-up and the clock sync, their
# signal handlers in place): a fixed sleep was too short on a loaded machine.
WHEN_RUNNING = "for i in $(seq 120); do grep -q ' s, round ' {err} && break; sleep 1; done; sleep 2; "
# The README's lines: `srun --mpi=pmix ... ibroute run`, and SIGUSR1 to srun (which forwards it
# to every task) ends a run at a round with a report.
SLURM = ("mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup && mkdir -p /sys/fs/cgroup/system.slice\n"
         "mkdir -p /tmp/slurm/state /tmp/slurm/spool /etc/slurm && cp /job/slurm.conf /job/cgroup.conf /etc/slurm/\n"
         "slurmctld -c && slurmd\n"
         "for i in $(seq 120); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 1; done\n"
         "timeout 300 srun --mpi=pmix -n 4 {run} --schedule vm4 --placement /job/p4.txt --rounds 3 --skip-after 8 "
         "-o /job/slurm.json > /job/slurm.out 2> /job/slurm.err; echo $? > /job/slurm.rc\n"
         "(timeout 300 srun --mpi=pmix -n 4 {run} --schedule small4 --placement /job/p4.txt --duration 60 --skip-after 8 "
         "--progress 1 -o /job/slurmusr1.json > /job/slurmusr1.out 2> /job/slurmusr1.err; echo $? > /job/slurmusr1.rc) &\n"
         + WHEN_RUNNING.format(err="/job/slurmusr1.err") + "pkill -USR1 -x srun; wait\n"
         "pkill slurmd; pkill slurmctld\n")


V3_SLOTS = [1, 3, 1, 2]


def write_epoch(d, doc):
    """An epoch directory as docs/epochs.md and docs/schedule-format.md describe it, written here
    (not by ibroute): the whole schedule, the host table, and per rank a slice of format version 4
    (its own sends and receives as columns with their phases). The ranks other than 0 of a
    following run read only the table and their own slice."""
    os.makedirs(d)
    with open(os.path.join(d, "schedule.json"), "w") as f:
        json.dump(doc, f)
    meta = {k: doc[k] for k in ("name", "created_at", "method", "bound", "fabric", "timing", "epoch", "epoch_from_unix_ns") if k in doc}
    with open(os.path.join(d, "hosts.json"), "w") as f:
        json.dump({"format": "ibroute-schedule-hosts", "version": 1, "name": doc["name"], "created_at": doc["created_at"],
                   "fabric": doc["fabric"], "hosts": doc["hosts"]}, f)
    for r, h in enumerate(doc["hosts"]):
        sends = [(k, t["dst"], t["dlid"]) for k, ph in enumerate(doc["phases"]) for t in ph if t["src"] == r]
        receives = [(k, t["src"], t["dlid"]) for k, ph in enumerate(doc["phases"]) for t in ph if t["dst"] == r]
        piece = dict(meta, format="ibroute-schedule-slice", version=4, rank=r, host=h, hosts_count=len(doc["hosts"]),
                     hosts_file="hosts.json", phases=len(doc["phases"]),
                     sends={"phase": [x[0] for x in sends], "dst": [x[1] for x in sends], "dlid": [x[2] for x in sends]},
                     receives={"phase": [x[0] for x in receives], "src": [x[1] for x in receives], "dlid": [x[2] for x in receives]})
        with open(os.path.join(d, f"rank{r:05d}-{re.sub(r'[^A-Za-z0-9._-]', '_', h['name'])}.json"), "w") as f:
            json.dump(piece, f)


class RunnerInVm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cache = os.environ.get("IBROUTE_VM_CACHE", os.path.join(tempfile.gettempdir(), "ibroute-vm"))
        os.makedirs(cache, exist_ok=True)
        cls.job = tempfile.mkdtemp(prefix="runner-", dir=cache)
        db = os.path.join(cls.job, "fab.db")
        with SimFabric(os.path.join(EXAMPLES, "hft96-shuffled.topo"), lmc=2) as sim:
            ibroute("scan", "--db", db, sim=sim)
        cas = sorted(r[0] for r in db_rows(db, "SELECT desc FROM node WHERE type='ca'"))
        hosts = random.Random(7).sample(cas, 8)
        cls.hosts = hosts
        for n, rate in ((2, "20M"), (4, "10M"), (8, "5M")):
            with open(os.path.join(cls.job, f"p{n}.txt"), "w") as f:
                f.write("\n".join(hosts[:n]) + "\n")
            ibroute("plan", "--db", db, "--hosts", ",".join(hosts[:n]), "--message-size", "64K", "--rate", rate,
                    "--name", f"vm{n}")
        # Small messages in 2 ms slots: long runs, drifting clocks, a run ended by SIGINT.
        ibroute("plan", "--db", db, "--hosts", ",".join(hosts[:4]), "--message-size", "4K", "--rate", "2M", "--name", "small4")
        # Two groups (the event builder's shape): 2 senders to 4 receivers, which send nothing.
        with open(os.path.join(cls.job, "p6.txt"), "w") as f:
            f.write("\n".join(hosts[:6]) + "\n")
        ibroute("plan", "--db", db, "--senders", ",".join(hosts[:2]), "--receivers", ",".join(hosts[2:6]), "--message-size", "64K",
                "--rate", "10M", "--name", "vmgroups")
        # A file of format version 1 (every transfer an object) still runs.
        ibroute("export", "--db", db, "--schedule", "vm2", "-o", os.path.join(cls.job, "vm2.json"))
        with open(os.path.join(cls.job, "vm2.json")) as f:
            v1 = explicit(json.load(f))
        with open(os.path.join(cls.job, "vm2-v1.json"), "w") as f:
            json.dump(v1, f)
        # A schedule for another fabric: the same file with port GUIDs this fabric does not have.
        ibroute("export", "--db", db, "--schedule", "vm4", "-o", os.path.join(cls.job, "vm4.json"))
        with open(os.path.join(cls.job, "vm4.json")) as f:
            doc = json.load(f)
        for h in doc["hosts"]:
            h["port_guid"] = "0x00aa" + h["port_guid"][6:]
        with open(os.path.join(cls.job, "other.json"), "w") as f:
            json.dump(doc, f)
        # Epochs (docs/epochs.md) for run --follow: epoch 1 is vm4 as planned; epoch 2 the same
        # transfers in reverse phase order, each over the next DLID of its destination's four
        # (LMC 2: base LIDs are multiples of 4) -- other paths, as after a re-route.
        with open(os.path.join(cls.job, "vm4.json")) as f:
            v1 = explicit(json.load(f))
        e2 = json.loads(json.dumps(v1))
        e2["phases"] = [[dict(t, dlid=t["dlid"] - t["dlid"] % 4 + (t["dlid"] % 4 + 1) % 4) for t in ph] for ph in reversed(e2["phases"])]
        cls.epoch_paths = {k: {(t["src"], t["dst"], t["dlid"]) for ph in d["phases"] for t in ph} for k, d in ((1, v1), (2, e2))}
        for top, epochs in (("ep", (v1, e2)), ("epd", (v1,))):
            for k, d in enumerate(epochs, 1):
                write_epoch(os.path.join(cls.job, top, f"epoch-{k:06d}"), dict(d, epoch=k, epoch_from_unix_ns=time.time_ns()))
            os.symlink("epoch-000001", os.path.join(cls.job, top, "current"))
        # Version 3: phases of different lengths (timing.phase_slots), and more phases than shifts
        # (the first shift split in two, as a packed plan's waiting transfers are).
        v3 = explicit(json.loads(json.dumps(doc)))
        for h, orig in zip(v3["hosts"], json.load(open(os.path.join(cls.job, "vm4.json")))["hosts"]):
            h["port_guid"] = orig["port_guid"]
        first = v3["phases"][0]
        v3["phases"] = [first[:2], first[2:]] + v3["phases"][1:]
        v3["version"] = 3
        v3["timing"]["phase_slots"] = V3_SLOTS
        with open(os.path.join(cls.job, "vm4-v3.json"), "w") as f:
            json.dump(v3, f)
        run = f"{shlex.quote(IBROUTE)} run --db /tmp/fab.db"
        skews = ",".join(map(str, SKEWS_US))
        # Clean runs (and accept's run) allow many open transfers: on 2 emulated CPUs a rank may
        # sleep for a while, and these runs test delivery, not the skip rule.
        scenarios = {
            # --sl 5: every queue pair on service level 5. RoCE has none (rxe keeps no SL): set, the
            # run clean, the report saying it does not apply; on InfiniBand it is read back per QP.
            "n2": f"mpirun -np 2 {run} --schedule vm2 --placement /job/p2.txt --rounds 3 --skip-after 8 --sl 5 -o /job/n2.json",
            "n4": f"mkdir -p /job/trace && mpirun -np 4 {run} --schedule vm4 --placement /job/p4.txt --rounds 3 --skip-after 8 "
                  f"-o /job/n4.json --svg /job/n4.svg --trace /job/trace",
            "n8": f"mpirun -np 8 {run} --schedule vm8 --placement /job/p8.txt --rounds 2 --skip-after 8 --test-clock-skew-us {skews} -o /job/n8.json",
            "v1": f"mpirun -np 2 {run} --schedule-file /job/vm2-v1.json --placement /job/p2.txt --rounds 2 --skip-after 8 -o /job/v1.json",
            "groups": f"mpirun -np 6 {run} --schedule vmgroups --placement /job/p6.txt --rounds 3 --skip-after 8 -o /job/groups.json",
            # 26 ms slots: a healthy receiver would have to be two slots late to cause a skip.
            "stall": f"mpirun -np 4 {run} --schedule vm4 --placement /job/p4.txt --rounds 5 --skip-after 2 --drain 1 "
                     f"--rate 2.5M --test-stall-rank {STALLED} -o /job/stall.json",
            # Clocks 400 ppm fast, 250 slow, 100 fast (beyond real crystals, so that seconds show
            # what hours would): with re-synchronisation every second the posts stay aligned on
            # the true clock; without it they drift apart by several 2 ms slots in 20 s.
            "drift": f"mpirun -np 4 {run} --schedule small4 --placement /job/p4.txt --duration {DRIFT_S} --skip-after 8 "
                     f"--test-clock-ppm {DRIFT_PPM} --test-clock-skew-us 0,1500,-700,300 --progress 3 -o /job/drift.json",
            # The rate search: from 16 MB/s per node, doubling until skips appear (emulated CPUs
            # post 64 KiB writes at some hundred MB/s at most), then bisecting.
            "findrate": f"mpirun -np 4 {run} --schedule vm4 --placement /job/p4.txt --find-rate --rate 16M --step-duration 0.5 "
                        f"--find-rate-steps 10 --skip-after 2 --max-skipped 0.01 -o /job/findrate.json",
            "nodrift": f"mpirun -np 4 {run} --schedule small4 --placement /job/p4.txt --duration 20 --skip-after 8 "
                       f"--test-clock-ppm {DRIFT_PPM} --test-clock-skew-us 0,1500,-700,300 --resync 0 -o /job/nodrift.json",
            # Open MPI aborts the whole job when one process dies unless told not to.
            "die": f"mpirun --mca orte_abort_on_non_zero_status 0 -np 4 {run} --schedule vm4 --placement /job/p4.txt "
                   f"--rounds 4 --skip-after 8 --finish-timeout 5 --test-die-rank {DEAD} --test-die-at 2 -o /job/die.json",
            "rkey": f"mpirun -np 4 {run} --schedule vm4 --placement /job/p4.txt --rounds 2 --skip-after 8 "
                    f"--test-bad-rkey-rank {BAD_RKEY} -o /job/rkey.json",
            # Unreliable writes (UC): clean when nothing is wrong; with a stalled receiver nothing
            # hangs, nothing is skipped, and what it never took is lost.
            "uc": f"mpirun -np 4 {run} --schedule vm4 --placement /job/p4.txt --rounds 3 --skip-after 8 --transport uc -o /job/uc.json",
            "ucstall": f"mpirun -np 4 {run} --schedule vm4 --placement /job/p4.txt --rounds 5 --skip-after 2 --drain 1 "
                       f"--rate 2.5M --test-stall-rank {STALLED} --transport uc -o /job/ucstall.json",
            "ranks": f"mpirun -np 3 {run} --schedule vm4",
            "device": f"mpirun -np 4 {run} --schedule vm4 --placement /job/p4.txt --device mlx5_7",
            "other": f"mpirun -np 4 {run} --schedule-file /job/other.json --placement /job/p4.txt",
            "v3": f"mkdir -p /job/trace3 && mpirun -np 4 {run} --schedule-file /job/vm4-v3.json --placement /job/p4.txt --rounds 2 "
                  "--skip-after 8 --trace /job/trace3 -o /job/v3.json",
        }
        # The acceptance test's run path: accept plans, launches `ibroute run` through mpirun, judges.
        with open(os.path.join(cls.job, "expect.json"), "w") as f:
            json.dump({"hosts": 96, "link_width": 4, "max_skipped_share": 0.0, "max_clock_uncertainty_us": 5000,
                       "min_rate_per_node": "2M", "min_sustainable_rate": "1M"}, f)
        # The ranks get a /tmp of their own (a mount namespace with a fresh tmpfs), as on another
        # node: the report must come back through the database (on a path both see), not a file
        # in accept's /tmp. Rank 0's own -o file lands in the private /tmp and is gone afterwards.
        # The build directory may itself be under /tmp (a CI checkout): kept visible, bound back.
        bindir = os.path.dirname(os.path.abspath(IBROUTE))  # inside single quotes below: a plain path
        private_tmp = ("unshare --mount --propagation private sh -c 'mkdir -p /run/keep && mount --bind " + bindir + " /run/keep && "
                       "mount -t tmpfs none /tmp && mkdir -p " + bindir + " && mount --bind /run/keep " + bindir +
                       " && exec \"$0\" \"$@\"' mpirun -np {ranks}")
        scenarios["accept"] = (f"cp /tmp/fab.db /var/tmp/acc.db && {shlex.quote(IBROUTE)} accept --db /var/tmp/acc.db --expect /job/expect.json "
                               f"--hosts @/job/p4.txt --message-size 64K --rate 10M --launch {shlex.quote(private_tmp)} --run-arg=--placement "
                               "--run-arg=/job/p4.txt --run-arg=--rounds=3 --run-arg=--skip-after=8 --run-arg=--find-rate-steps=4 "
                               "--run-arg=-o --run-arg=/tmp/rank0-report.json --report /job/accept.html --json")
        # A rank really slowed, with no flag the run or its diagnosis could read: MPI rank SLOWED
        # shares CPU 1 with a busy loop at the lowest priority (nice 15: about 3 % of that CPU; its posting and polling wait), the
        # other ranks run on CPU 0.
        with open(os.path.join(cls.job, "slow8.sh"), "w") as f:
            f.write("taskset -c 1 sh -c 'while :; do :; done' & hog=$!\n"
                    f"mpirun -np 8 --bind-to none sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = {SLOWED} ]; then exec nice -n 15 taskset -c 1 "
                    f"\"$0\" \"$@\"; fi; exec taskset -c 0 \"$0\" \"$@\"' {run} --schedule vm8 --placement /job/p8.txt --rounds 1 "
                    "--skip-after 8 -o /job/slow8.json\nrc=$?; kill $hog; exit $rc\n")
        scenarios["slow8"] = "sh /job/slow8.sh"
        # The same slowed rank under accept --launch --confirm: named, then confirmed by one more run
        # (three rounds: a pair's first transfer on a fresh queue pair is no measure of its rate).
        with open(os.path.join(cls.job, "slowlaunch.sh"), "w") as f:
            f.write("taskset -c 1 sh -c 'while :; do :; done' & hog=$!\n"
                    f"mpirun -np 8 --bind-to none sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = {SLOWED} ]; then exec nice -n 15 taskset -c 1 "
                    "\"$0\" \"$@\"; fi; exec taskset -c 0 \"$0\" \"$@\"' \"$@\"\nrc=$?; kill $hog; exit $rc\n")
        with open(os.path.join(cls.job, "expect8.json"), "w") as f:
            json.dump({"hosts": 96}, f)
        scenarios["confirm"] = (f"cp /tmp/fab.db /var/tmp/conf.db && {shlex.quote(IBROUTE)} accept --db /var/tmp/conf.db --expect /job/expect8.json "
                                "--hosts @/job/p8.txt --message-size 64K --rate 5M --launch 'sh /job/slowlaunch.sh' --confirm "
                                "--run-arg=--placement --run-arg=/job/p8.txt --run-arg=--rounds=3 --run-arg=--skip-after=8 "
                                "--report /job/confirm.html --json")
        with open(os.path.join(cls.job, "slurm.conf"), "w") as f:
            f.write(SLURM_CONF)
        with open(os.path.join(cls.job, "cgroup.conf"), "w") as f:
            f.write(CGROUP_CONF)
        # IBROUTE_VM_ONLY=follow,die (development): only those scenarios and parts are run; the
        # other tests then fail for want of their results.
        only = set(filter(None, os.environ.get("IBROUTE_VM_ONLY", "").split(",")))
        part = lambda name: not only or name in only  # noqa: E731
        scenarios = {k: v for k, v in scenarios.items() if part(k)}
        script = MPI_ENV + "cp /job/fab.db /tmp/fab.db\n"
        for name, cmd in scenarios.items():
            # The confirmation runs twice with a starved rank: its own, longer limit.
            script += (f"t0=$(date +%s); timeout {600 if name == 'confirm' else 300} {cmd} > /job/{name}.out 2> /job/{name}.err; echo $? > /job/{name}.rc; "
                       f"echo $(( $(date +%s) - t0 )) > /job/{name}.secs\n")
        # SIGINT to rank 0 (the process whose MPI rank is 0) a few seconds into a 60 s run.
        script += "" if not part("sigint") else (f"(timeout 300 mpirun -np 4 {run} --schedule small4 --placement /job/p4.txt --duration 60 --skip-after 8 "
                   "--progress 1 -o /job/sigint.json > /job/sigint.out 2> /job/sigint.err; echo $? > /job/sigint.rc) &\n"
                   + WHEN_RUNNING.format(err="/job/sigint.err") + "for p in $(pgrep -f 'ibroute.* run '); do "
                   "if tr '\\0' '\\n' < /proc/$p/environ | grep -qx OMPI_COMM_WORLD_RANK=0; then kill -INT $p; fi; done; wait\n")
        # run --follow: epoch 2 published (current renamed over, as watch does) while the run goes on;
        # then a rank killed mid-run under --follow: dropped, the others run to the end.
        # The ranks other than 0 of the first following run see every epoch's whole schedule.json
        # as an empty file (a bind mount in their own mount namespace): they read only the host
        # table and their own slices, or they could not start.
        with open(os.path.join(cls.job, "slices_only.sh"), "w") as f:
            f.write("""if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec "$@"; fi
exec unshare -m sh -c 'for f in /tmp/ep/epoch-*/schedule.json; do mount --bind /dev/null "$f"; done
wc -c < /tmp/ep/epoch-000002/schedule.json > /job/masked.$OMPI_COMM_WORLD_RANK; exec "$@"' sh "$@"
""")
        # Ranks that start on different epochs (DIR/current moved on while they started): the ranks
        # other than 0 are given a copy of DIR whose current is epoch 2.
        with open(os.path.join(cls.job, "other_epoch.sh"), "w") as f:
            f.write("""if [ "$OMPI_COMM_WORLD_RANK" != 0 ]; then
  for a; do shift; [ "$a" = /tmp/epm ] && a=/tmp/epm2; set -- "$@" "$a"; done
fi
exec "$@"
""")
        script += "" if not part("follow") else ("cp -a /job/ep /tmp/epm && cp -a /job/ep /tmp/epm2 && ln -sfn epoch-000002 /tmp/epm2/current && "
                   f"(timeout 120 mpirun -np 4 sh /job/other_epoch.sh {run} --follow /tmp/epm "
                   "--placement /job/p4.txt --rounds 3 -o /job/followmix.json > /job/followmix.out 2> /job/followmix.err; "
                   "echo $? > /job/followmix.rc)\n")
        script += "" if not part("follow") else ("cp -a /job/ep /job/epd /tmp/ && "
                   f"(timeout 300 mpirun -np 4 sh /job/slices_only.sh {run} --follow /tmp/ep --placement /job/p4.txt --duration 14 --skip-after 8 "
                   "--progress 1 -o /job/follow.json > /job/follow.out 2> /job/follow.err; echo $? > /job/follow.rc) &\n"
                   + WHEN_RUNNING.format(err="/job/follow.err") + "ln -s epoch-000002 /tmp/ep/.next && mv -T /tmp/ep/.next /tmp/ep/current; wait\n"
                   f"timeout 300 mpirun --mca orte_abort_on_non_zero_status 0 -np 4 {run} --follow /tmp/epd --placement /job/p4.txt "
                   f"--rounds 400 --skip-after 8 --finish-timeout 5 --dead-after 2 --test-die-rank {DEAD} --test-die-at 300 "
                   "-o /job/followdie.json > /job/followdie.out 2> /job/followdie.err; echo $? > /job/followdie.rc\n")
        script += "if [ -e /tmp/rank0-report.json ]; then echo shared; else echo private; fi > /job/accept.tmp\n"
        # The ports' counters around a run, read by rank 0: ibsim + OpenSM inside the VM answer its
        # MADs (umad2sim preloaded) while the data goes over rxe. ibsim carries no data, so the
        # counters see the MADs only: the join of snapshots and the run's links is what is tested.
        shutil.copy(os.path.join(EXAMPLES, "hft96-shuffled.topo"), os.path.join(cls.job, "hft96.topo"))
        sim = f"IBSIM_SOCKNAME=vmsim LD_PRELOAD={PRELOAD}"
        script += "" if not part("counters") else ("mkdir -p /tmp/sim/osm && mkfifo /tmp/sim/console\n"
                   "(cd /tmp/sim && exec 3<>console && IBSIM_SOCKNAME=vmsim exec ibsim -s /job/hft96.topo <&3 > /job/ibsim.log 2>&1) &\n"
                   "for i in $(seq 100); do grep -q '@vmsim:ctl' /proc/net/unix && break; sleep 0.3; done\n"
                   f"(cd /tmp/sim && {sim} OSM_CACHE_DIR=/tmp/sim/osm OSM_TMP_DIR=/tmp/sim/osm timeout 200 opensm -o -e -f /job/osm.log "
                   "-R minhop -l 2 > /dev/null 2>&1)\n"
                   f"cp /tmp/fab.db /tmp/ctr.db && (cd /tmp/sim && {sim} timeout 200 {shlex.quote(IBROUTE)} scan --db /tmp/ctr.db > /job/ctrscan.out 2>&1)\n"
                   f"(cd /tmp/sim && timeout 300 mpirun -np 2 -x IBSIM_SOCKNAME=vmsim -x LD_PRELOAD={PRELOAD} {shlex.quote(IBROUTE)} run --db /tmp/ctr.db "
                   "--schedule vm2 --placement /job/p2.txt --rounds 3 --skip-after 8 --counters on -o /job/counters.json "
                   "> /job/counters.out 2> /job/counters.err; echo $? > /job/counters.rc)\n"
                   "cp /tmp/ctr.db /job/ctr.db; pkill -x ibsim\n")
        script += SLURM.format(run=run) if part("slurm") else ""
        script += "cp /tmp/fab.db /job/after.db\n"
        code, out = softroce_vm.run(script, timeout=1500, workdir=cls.job)
        if code != 0:
            raise AssertionError(f"VM job failed ({code}): {out[-3000:]}")
        cls.db = db

    @classmethod
    def tearDownClass(cls):
        if not os.environ.get("IBROUTE_KEEP"):
            shutil.rmtree(cls.job, ignore_errors=True)

    def result(self, name):
        with open(os.path.join(self.job, f"{name}.rc")) as f:
            rc = int(f.read())
        with open(os.path.join(self.job, f"{name}.err"), errors="replace") as f:
            err = f.read()
        report = None
        if os.path.exists(os.path.join(self.job, f"{name}.json")):
            with open(os.path.join(self.job, f"{name}.json")) as f:
                report = json.load(f)
        return rc, err, report

    def paths(self, r):
        cols = r["paths"]["columns"]
        return [dict(zip(cols, x)) for x in r["paths"]["rows"]]

    def check_clean(self, name, n, rounds):
        rc, err, r = self.result(name)
        self.assertEqual(rc, 0, err[-2000:])
        t = r["totals"]
        self.assertEqual(t["planned"], n * (n - 1) * rounds)
        self.assertEqual(t["ok"], t["planned"])
        self.assertEqual(t["corrupt"], 0)
        self.assertEqual(r["paths"]["listed"], "all")
        rows = self.paths(r)
        self.assertTrue(all(x["ok"] == x["planned"] == x["arrived"] for x in rows), "every transfer arrived and was counted by its receiver")
        pairs = Counter()
        for x in rows:
            pairs[(x["src"], x["dst"])] += x["ok"]
        self.assertEqual(set(pairs.values()), {rounds})
        self.assertEqual(len(pairs), n * (n - 1))
        self.assertEqual(r["link_layer"], "Ethernet")
        self.assertEqual(r["anomalies"]["dropped"], 0)
        return r

    def test_two_four_eight_ranks_deliver_every_byte(self):
        n2 = self.check_clean("n2", 2, 3)
        self.assertEqual((n2["service_level"], n2["service_level_applies"]), (5, False))
        # The ports' counters are read only on InfiniBand: on RoCE the report says why not.
        self.assertFalse(n2["links_measured"]["measured"])
        self.assertIn("RoCE", n2["links_measured"]["why"])
        self.assertEqual(self.check_clean("n4", 4, 3)["service_level"], 0)
        self.check_clean("n8", 8, 2)

    def test_format_version_1_file_runs(self):
        self.check_clean("v1", 2, 2)

    def test_phases_of_different_lengths_post_at_their_own_offsets(self):
        """A version-3 file: 4 phases (the first shift split in two) lasting 1, 3, 1 and 2 slots.
        Every byte checked by its receiver; each send planned at (round x 7 + its phase's start) slots."""
        r = self.check_clean("v3", 4, 2)
        slot = r["slot_ns"]
        start = [sum(V3_SLOTS[:p]) for p in range(len(V3_SLOTS))]
        sends = []
        for rank in range(4):
            with open(os.path.join(self.job, "trace3", f"trace-{rank}.csv")) as f:
                lines = [l for l in f.read().splitlines() if not l.startswith("#")]
            cols = lines[0].split(",")
            sends += [x for x in (dict(zip(cols, l.split(","))) for l in lines[1:]) if x["kind"] == "send"]
        self.assertEqual(len(sends), 4 * 3 * 2)
        for x in sends:  # on the reference clock (rank 0's), to within the clock model's rounding
            want = (int(x["round"]) * sum(V3_SLOTS) + start[int(x["phase"])]) * slot
            self.assertLessEqual(abs(int(x["planned_ns"]) - want), 20_000, x)
        self.assertTrue(all(x["status"] == "ok" for x in sends))
        self.assertEqual(r["phases"], 4)

    def test_two_group_schedule_delivers_every_pair(self):
        rc, err, r = self.result("groups")
        self.assertEqual(rc, 0, err[-2000:])
        t = r["totals"]
        self.assertEqual(t["planned"], 2 * 4 * 3)
        self.assertEqual(t["ok"], t["planned"])
        rows = self.paths(r)
        self.assertTrue(all(x["ok"] == x["arrived"] for x in rows))
        pairs = Counter()
        for x in rows:
            pairs[(x["src"], x["dst"])] += x["ok"]
        self.assertEqual(set(pairs), {(s, d) for s in (0, 1) for d in range(2, 6)}, "senders 0, 1; receivers 2-5 send nothing")
        self.assertEqual(set(pairs.values()), {3})

    def test_injected_clock_offsets_recovered_within_uncertainty(self):
        r = self.check_clean("n8", 8, 2)
        clocks = {c["host"]: c for c in r["clock"]["ranks"]}
        self.assertEqual(len(clocks), 7)
        for mpi_rank in range(1, 8):
            c = clocks[self.hosts[mpi_rank]]
            truth = (SKEWS_US[mpi_rank] - SKEWS_US[0]) * 1000
            self.assertLessEqual(abs(c["offset_ns"] - truth), c["uncertainty_ns"],
                                 f"rank {mpi_rank}: {c} against {truth}")
            self.assertLess(c["uncertainty_ns"], 1_000_000, "an offset known to better than a millisecond")
            self.assertIn("after", c, "measured again after the run")

    def test_per_link_load_on_the_fabric_routes(self):
        """The run's per-link transfers equal those recomputed from the database's route table."""
        r = self.check_clean("n4", 4, 3)
        ports = {(n, p): (base, peer) for n, p, base, peer in
                 db_rows(self.db, "SELECT node_idx, num, base_lid, peer_node FROM port")}
        desc = dict(db_rows(self.db, "SELECT idx, desc FROM node"))
        idx = {d: i for i, d in desc.items()}
        routes = {(i, d): h for i, d, h in db_rows(self.db, "SELECT ingress, dlid, hops FROM route")}
        hosts = self.hosts[:4]
        expect = Counter()
        for x in self.paths(r):
            node = idx[hosts[x["src"]]]
            port = next(p for (n, p) in ports if n == node)
            expect[f"{hosts[x['src']]}[{port}]"] += x["ok"]
            for hop in routes[(ports[(node, port)][1], x["dlid"])].split():
                n, p = map(int, hop.split(":"))
                if p not in (0, 255):
                    expect[f"{desc[n]}[{p}]"] += x["ok"]
        got = {l["link"].split(" -> ")[0]: l["transfers"] for l in r["links"]}
        self.assertEqual(got, dict(expect))
        self.assertTrue(r["busiest_links"])
        with open(os.path.join(self.job, "n4.svg")) as f:
            svg = f.read()
        self.assertIn("<svg", svg)
        self.assertIn("run of vm4", svg)  # the picture of this run's link load

    def test_stalled_receiver_makes_its_senders_skip(self):
        rc, err, r = self.result("stall")
        self.assertEqual(rc, 1, "a run with skips is not clean")
        stalled = self.hosts[STALLED]
        t = r["totals"]
        self.assertGreater(t["skipped"], 0)
        self.assertEqual(t["skipped"] + t["timeout"] + t["ok"], t["planned"])
        rows = self.paths(r)
        bad, ok = Counter(), Counter()
        for x in rows:
            bad[self.hosts[x["dst"]]] += x["planned"] - x["ok"]
            ok[self.hosts[x["dst"]]] += x["ok"]
        # Certain: the stalled receiver posted one receive per source, so at most one transfer
        # per source (3) can arrive; the other 12 of its 15 were skipped or timed out.
        self.assertLessEqual(ok[stalled], 3, f"{dict(ok)}")
        self.assertGreaterEqual(bad[stalled], 12, f"{dict(bad)}")
        # The healthy receivers in 26 ms slots: a skip needs two slots of delay, so they fare
        # clearly better (margin: whatever lateness this run measured shows up in their counts).
        others = [n for h, n in bad.items() if h != stalled]
        self.assertLess(max(others, default=0), bad[stalled], f"transfers to the stalled host suffer most: {dict(bad)}")
        self.assertIn(stalled, r["suspect_links"][0]["link"].split(" -> ")[1], "the link into it tops the suspects")
        # The run's repair list names the link into it, with the skipped transfers as evidence.
        named = [x for x in r["diagnosis"]["suspects"] if stalled in x["where"]]
        self.assertTrue(named and any("skipped" in e for e in named[0]["evidence"]), r["diagnosis"])
        node = next(n for n in r["nodes"] if n["host"] == stalled)
        self.assertGreater(node["ok"], 0, "its own sends go on")

    def test_a_rank_really_slowed_is_named_as_the_slow_host(self):
        rc, err, r = self.result("slow8")
        self.assertIn(rc, (0, 1), err[-2000:])
        named = [x for x in r["diagnosis"]["suspects"] if x["kind"] == "host" and x["where"] == self.hosts[SLOWED]]
        self.assertTrue(named, r["diagnosis"])
        self.assertTrue(any("sends at" in e or "transfers from it" in e for e in named[0]["evidence"]), named)

    def test_accept_confirms_the_slowed_rank_by_one_more_run(self):
        rc, err, _ = self.result("confirm")
        with open(os.path.join(self.job, "confirm.out")) as f:
            r = json.load(f)
        d = r["diagnosis"]
        self.assertTrue(d["confirmation"]["run"], f"{d}\n{err[-2000:]}")
        verdicts = {v["link"]: v["verdict"] for v in d["confirmation"]["verdicts"]}
        mine = [v for link, v in verdicts.items() if link.startswith(self.hosts[SLOWED] + "[")]
        self.assertEqual(mine, ["confirmed"], d["confirmation"])
        # Confirmed, it heads the list.
        top = d["suspects"][0]
        self.assertEqual((top["kind"], top["where"]), ("host", self.hosts[SLOWED]), d)
        self.assertGreaterEqual(top["confidence"], 0.95)

    def test_unreliable_writes_deliver_what_they_report_and_count_the_rest_lost(self):
        r = self.check_clean("uc", 4, 3)  # receivers verified every byte; ok == arrived on every path
        self.assertEqual(r["transport"], "uc")
        rc, err, r = self.result("ucstall")
        self.assertEqual(rc, 1, "lost transfers: not clean")
        self.assertEqual(r["transport"], "uc")
        t = r["totals"]
        self.assertEqual((t["skipped"], t["timeout"], t["corrupt"]), (0, 0, 0), "UC writes never hang: nothing to skip")
        self.assertEqual(t["ok"] + t["lost"], t["planned"])
        stalled = self.hosts[STALLED]
        lost = Counter()
        for x in self.paths(r):
            self.assertLessEqual(x["ok"], x["arrived"], f"ok only what its receiver took: {x}")
            lost[self.hosts[x["dst"]]] += x["lost"]
        # The stalled receiver counts nothing: its 15 transfers (3 sources x 5 rounds) are lost.
        self.assertEqual(lost[stalled], 15, f"{dict(lost)}")
        self.assertLess(max(n for h, n in lost.items() if h != stalled), lost[stalled], f"{dict(lost)}")
        with open(os.path.join(self.job, "ucstall.out")) as f:
            self.assertIn("UC: unacknowledged writes", f.read())

    def test_rank0_reads_the_port_counters_around_the_run(self):
        rc, err, r = self.result("counters")
        self.assertEqual(rc, 0, err[-2000:])
        lm = r["links_measured"]
        self.assertTrue(lm["measured"], lm)
        self.assertEqual(lm["between"], "around the run (rank 0)")
        # Planned per link: what the run itself sent there by the scan's routes (its "links").
        sent = {l["link"]: l["bytes"] for l in r["links"] if l["bytes"]}
        planned = {x["link"]: x["planned_bytes"] for x in lm["rows"] if x["planned_bytes"]}
        self.assertEqual(planned, sent)
        self.assertEqual((lm["planned_links"], lm["unread_links"]), (len(sent), 0))
        self.assertEqual(lm["planned_bytes"], sum(sent.values()))
        # ibsim forwards management datagrams, not the data (rxe carries it): the ports counted
        # far less than planned, and the port the MADs leave from shows traffic nobody planned.
        self.assertLess(lm["ratio"], 0.5)
        self.assertTrue(any(x["planned_bytes"] == 0 and x["measured_bytes"] > 0 for x in lm["rows"]), lm["rows"][:3])
        labels = [row[0] for row in db_rows(os.path.join(self.job, "ctr.db"), "SELECT label FROM counter_snapshot ORDER BY id")]
        self.assertEqual(labels, ["run-before", "run-after"])

    def test_killed_rank_is_named_and_the_others_finish(self):
        rc, err, r = self.result("die")
        self.assertNotEqual(rc, 0)
        self.assertIsNotNone(r, f"rank 0 wrote no report (exit {rc}): {err[-3000:]}")
        dead = self.hosts[DEAD]
        self.assertEqual([m["host"] for m in r["missing_ranks"]], [dead])
        rows = self.paths(r)
        survivors = [x for x in rows if self.hosts[x["src"]] != dead and self.hosts[x["dst"]] != dead]
        # Between survivors nothing is lost, fails or times out; on a loaded machine the skip
        # rule may hold some back (lateness this run measured), never most of them.
        self.assertTrue(survivors and all(x["ok"] + x["skipped"] == x["planned"] for x in survivors), "the others' transfers arrived")
        self.assertGreater(sum(x["ok"] for x in survivors), sum(x["planned"] for x in survivors) // 2)
        to_dead = [x for x in rows if self.hosts[x["dst"]] == dead]
        self.assertTrue(any(x["ok"] < x["planned"] for x in to_dead))
        for t in r["not_ok"]:  # listed with their paths (rxe: writes to a dead peer's QPs never complete)
            self.assertIn(dead, (t["src"], t["dst"]))
            self.assertIn(f"{dead}[", t["path"])
        self.assertTrue(any(self.hosts[x["src"]] == dead and x["lost"] > 0 for x in rows), "its own sends: lost")

    def test_follow_switches_every_rank_at_the_same_round_and_loses_nothing(self):
        rc, err, r = self.result("follow")
        self.assertEqual(rc, 0, err[-3000:])
        ep = r["epochs"]
        self.assertEqual([e["epoch"] for e in ep], [1, 2], err[-2000:])
        self.assertEqual(ep[0]["from_round"], 0)
        self.assertGreater(ep[1]["from_round"], 0)
        for e in ep:
            self.assertEqual(e["ranks_at_this_round"], 4, "every rank switched at the round rank 0 named")
            self.assertEqual((e["hosts"], e["dropped"], e["failed"]), (4, [], 0))
            self.assertEqual(e["planned"], 12 * e["rounds"])
            self.assertEqual(e["ok"] + e["skipped"], e["planned"])
        t = r["totals"]
        self.assertEqual(sum(e["rounds"] for e in ep), r["rounds_run"])
        self.assertEqual(sum(e["planned"] for e in ep), t["planned"])
        self.assertEqual((t["ok"], t["corrupt"]), (t["planned"], 0), "no transfer lost, every byte verified")
        # Every transfer went over its epoch's path: the paths used are those of the two epochs,
        # and each path of epoch 2 carried its transfer in every round after the switch.
        rows = {(x["src"], x["dst"], x["dlid"]): x for x in self.paths(r) if x["planned"]}
        self.assertEqual(set(rows), self.epoch_paths[1] | self.epoch_paths[2])
        for p in self.epoch_paths[2] - self.epoch_paths[1]:
            self.assertEqual(rows[p]["ok"], ep[1]["rounds"])
            self.assertEqual(rows[p]["arrived"], ep[1]["rounds"])
        self.assertIn("epoch 2 from round", err)
        for rank in (1, 2, 3):
            with open(os.path.join(self.job, f"masked.{rank}")) as f:
                self.assertEqual(f.read().strip(), "0", f"rank {rank} saw the whole epoch as an empty file, and followed from its slices")
        from jsonschema import Draft202012Validator  # python3-jsonschema (scripts/deps.sh)
        with open(os.path.join(HERE, "..", "..", "docs", "schemas", "run-report.schema.json")) as f:
            schema = json.load(f)
        self.assertEqual([e.message[:200] for e in Draft202012Validator(schema).iter_errors(r)], [], "the report fits its schema")

    def test_follow_ranks_on_different_first_epochs_stop_before_any_transfer(self):
        with open(os.path.join(self.job, "followmix.rc")) as f:
            rc = int(f.read())
        with open(os.path.join(self.job, "followmix.err"), errors="replace") as f:
            err = f.read()
        self.assertNotEqual(rc, 0, err[-2000:])
        self.assertIn("rank 0 starts on epoch 1, rank 1 on epoch 2", err)
        self.assertIn("start the run again", err)
        self.assertNotIn(" s, round ", err, "no round was run")
        self.assertFalse(os.path.exists(os.path.join(self.job, "followmix.json")), "no report of a run that did not start")

    def test_follow_drops_a_killed_rank_and_the_others_run_to_the_end(self):
        rc, err, r = self.result("followdie")
        self.assertIsNotNone(r, f"rank 0 wrote no report (exit {rc}): {err[-3000:]}")
        self.assertNotEqual(rc, 0)
        dead = self.hosts[DEAD]
        self.assertEqual([m["host"] for m in r["missing_ranks"]], [dead])
        self.assertEqual(r["rounds_run"], 400)
        ep = r["epochs"]
        self.assertEqual(len(ep), 2, err[-2000:])
        self.assertEqual((ep[1]["epoch"], ep[1]["dropped"], ep[1]["hosts"]), (1, [dead], 3))
        self.assertGreater(ep[1]["from_round"], 100, "it died at round 100")
        self.assertEqual(ep[1]["ranks_at_this_round"], 3)
        # After the drop: the survivors' 6 transfers a round, none to or from the dead, none failed.
        self.assertEqual(ep[1]["planned"], 6 * ep[1]["rounds"])
        self.assertEqual(ep[1]["failed"], 0)
        self.assertEqual(ep[1]["ok"] + ep[1]["skipped"], ep[1]["planned"])
        self.assertIn("silent for", err)

    def test_completion_error_reports_status_transfer_and_path(self):
        rc, err, r = self.result("rkey")
        self.assertEqual(rc, 1)
        bad = self.hosts[BAD_RKEY]
        failed = [t for t in r["not_ok"] if t["status"] == "failed"]
        self.assertEqual(len(r["not_ok"]), 3 * 2, "all of its transfers, none of the others'")
        self.assertTrue(failed)
        for t in r["not_ok"]:
            self.assertEqual(t["src"], bad)
            self.assertTrue(t["path"].startswith(f"{bad}["), t)
        self.assertIn("remote access error", failed[0]["error"])  # ibv_wc_status_str
        self.assertTrue(all(t["error"] for t in failed))
        self.assertEqual(r["totals"]["ok"], r["totals"]["planned"] - 6)

    def test_bad_input_stops_every_rank_with_one_message(self):
        for name, ranks, text in (("ranks", 3, "the schedule has 4 hosts but 3 ranks were started"),
                                  ("device", 4, "no RDMA device named mlx5_7"),
                                  ("other", 4, "does not fit scan")):
            rc, err, _ = self.result(name)
            self.assertNotIn(rc, (0, 124), f"{name}: {err[-1000:]}")  # 124: timeout, i.e. a hang
            lines = [l for l in err.splitlines() if l.startswith("ibroute:") and text in l]
            self.assertEqual(len(lines), ranks, f"{name}: one error line per rank expected:\n{err[-2000:]}")

    def test_accept_runs_the_plan_through_mpirun_and_judges_it(self):
        rc, err, _ = self.result("accept")
        with open(os.path.join(self.job, "accept.out")) as f:
            r = json.load(f)
        checks = {c["check"]: c for c in r["checks"]}
        self.assertEqual(r["mode"], "run")
        self.assertEqual(rc, 0, f"{checks}\n{err[-2000:]}")
        self.assertTrue(r["accepted"])
        for name in ("skipped_transfers", "clock_sync", "ranks_alive", "rate_per_node", "sustainable_rate"):
            self.assertEqual(checks[name]["result"], "pass", checks[name])
        self.assertEqual(checks["skipped_transfers"]["measured"], 0.0)
        self.assertEqual(len(r["clock"]), 3, "the clock table of the run")
        with open(os.path.join(self.job, "accept.tmp")) as f:
            self.assertEqual(f.read().strip(), "private", "the ranks' /tmp was their own: the report came through the database")
        with open(os.path.join(self.job, "accept.html")) as f:
            html = f.read()
        self.assertIn('<table id="clock">', html)

    def test_trace_files_hold_every_transfer(self):
        r = self.check_clean("n4", 4, 3)
        sends, recvs = [], []
        for rank in range(4):
            with open(os.path.join(self.job, "trace", f"trace-{rank}.csv")) as f:
                lines = [l for l in f.read().splitlines() if not l.startswith("#")]
            self.assertEqual(lines[0].split(",")[:3], ["kind", "seq", "round"])
            cols = lines[0].split(",")
            for l in lines[1:]:
                x = dict(zip(cols, l.split(",")))
                (sends if x["kind"] == "send" else recvs).append(x)
                self.assertEqual(int(x["src" if x["kind"] == "send" else "dst"]), rank, "each rank writes its own")
        self.assertEqual(len(sends), r["totals"]["planned"])
        self.assertEqual(len(recvs), r["totals"]["planned"])
        self.assertTrue(all(x["status"] == "ok" and int(x["completed_ns"]) >= int(x["posted_ns"]) >= 0 for x in sends))
        self.assertTrue(all(x["verified"] == "1" for x in recvs), "every transfer's bytes checked by its receiver")
        self.assertEqual(Counter((x["src"], x["dst"], x["seq"]) for x in sends),
                         Counter((x["src"], x["dst"], x["seq"]) for x in recvs), "each send arrived once, with its number")

    def test_drifting_clocks_stay_aligned_when_resynchronised(self):
        rc, err, r = self.result("drift")
        self.assertEqual(rc, 0, err[-2000:])
        truth = r["test_true_lateness_ns"]
        slot = r["slot_ns"]
        residual = r["clock"]["max_residual_ns"]
        during = {c["host"]: c["during"] for c in r["clock"]["ranks"]}
        for mpi_rank, ppm in enumerate(map(float, DRIFT_PPM.split(","))):
            if mpi_rank:
                c = during[self.hosts[mpi_rank]]
                # Every second a re-measurement is tried; under load rank 0 is often too busy to
                # answer in time (counted as a failure, tried again later): what must hold is
                # that it kept trying and that enough succeeded to model the drift.
                self.assertGreaterEqual(c["resyncs"] + c["resync_failures"], DRIFT_S // 2, c)
                self.assertGreaterEqual(c["resyncs"], 5, c)
                self.assertAlmostEqual(c["drift_ppm"], ppm, delta=20, msg=c)
        # A post is early on the true clock only when its rank's clock model was off (late posts
        # are the emulated CPUs'). Over the whole run no post is early by more than a slot plus
        # the clock error this run itself proved (the worst distance of the model's prediction
        # from a re-measurement's uncertainty interval: a burst whose round trips were all starved
        # by milliseconds on 2 loaded emulated CPUs is wide and proves little); that error stays
        # bounded, and without resync (below) the same clocks drift more than 3 slots apart: the
        # test still fails when the correction does not work.
        self.assertLess(residual, 4 * slot, f"the clock model itself failed: residual {residual}, {r['clock']['ranks']}")
        self.assertGreater(truth["min"], -(slot + residual), f"{truth}, residual {residual}")
        # Without it, the same clocks drift apart by several slots: the test can fail.
        rc, err, nr = self.result("nodrift")
        self.assertEqual(rc, 0, err[-2000:])
        self.assertLess(nr["test_true_lateness_ns"]["min"], -3 * slot, nr["test_true_lateness_ns"])
        self.assertEqual(nr["clock"]["max_residual_ns"], 0, "no re-measurement")

    def test_long_run_keeps_rank0_memory_flat(self):
        rc, err, r = self.result("drift")
        self.assertEqual(rc, 0, err[-2000:])
        self.assertGreater(r["totals"]["planned"], 150_000, "a run of many transfers")
        rss = [kib for secs, kib in r["rank0_memory"]["rows"] if secs > DRIFT_S / 4]
        self.assertGreater(len(rss), 10)
        self.assertLess(max(rss) - rss[0], 2048, f"rank 0's resident KiB over the last 3/4 of the run: {rss}")
        self.assertIn("Gb/s per node", err, "progress lines")
        self.assertLess(len(json.dumps(r)), 200_000, "the report does not list transfers")

    def assert_all_accounted(self, t):
        # Every planned transfer is done, skipped or timed out (a receiver behind on a loaded
        # machine: the runner skips a hung transfer by design, seen 15 of 19 488 in a soak run),
        # none lost.
        self.assertEqual(t["ok"] + t["skipped"] + t["timeout"], t["planned"], t)
        self.assertGreater(t["ok"], 0.95 * t["planned"], t)

    def test_sigint_at_rank0_ends_the_run_at_a_round_with_a_report(self):
        rc, err, r = self.result("sigint")
        self.assertNotEqual(rc, 0, err[-2000:])
        self.assertIsNotNone(r, err[-2000:])
        self.assertEqual(r["stopped_by"], "SIGINT")
        self.assertLess(r["rounds_run"], r["rounds"])
        # Mid-run: at least as far as the progress line seen before the signal.
        seen = re.search(r" s, round (\d+) of", err)
        self.assertIsNotNone(seen, err[-2000:])
        self.assertGreaterEqual(r["rounds_run"], int(seen.group(1)))
        t = r["totals"]
        self.assertEqual(t["planned"], r["rounds_run"] * 4 * 3, "every rank stopped after the same round")
        self.assert_all_accounted(t)
        rows = db_rows(os.path.join(self.job, "after.db"), "SELECT rounds, planned FROM run ORDER BY id")
        self.assertIn((r["rounds_run"], t["planned"]), rows, "stored in the database")

    def test_srun_with_pmix_starts_the_ranks(self):
        self.check_clean("slurm", 4, 3)

    def test_sigusr1_to_srun_ends_the_run_at_a_round_with_a_report(self):
        rc, err, r = self.result("slurmusr1")
        self.assertNotEqual(rc, 0, err[-2000:])
        self.assertIsNotNone(r, err[-2000:])
        self.assertEqual(r["stopped_by"], "SIGUSR1")
        seen = re.search(r" s, round (\d+) of", err)
        self.assertIsNotNone(seen, err[-2000:])
        self.assertGreaterEqual(r["rounds_run"], int(seen.group(1)))
        self.assertLess(r["rounds_run"], r["rounds"])
        t = r["totals"]
        self.assertEqual(t["planned"], r["rounds_run"] * 4 * 3, "every rank stopped after the same round")
        self.assert_all_accounted(t)

    def test_find_rate_brackets_the_rate_the_fabric_holds(self):
        rc, err, r = self.result("findrate")
        self.assertEqual(rc, 0, err[-2000:])
        f = r["find_rate"]
        steps = f["steps"]
        self.assertGreaterEqual(len(steps), 3, steps)
        held = [s for s in steps if s["held"]]
        failed = [s for s in steps if not s["held"]]
        self.assertTrue(any(s["skipped"] == 0 for s in held), f"a rate below the limit with no skips: {steps}")
        # Over-driven, a step either skips (receivers behind) or falls short of the rate asked
        # (senders' emulated CPUs behind: they post late and skip nothing).
        self.assertTrue(failed, f"a rate above the limit: {steps}")
        for st in failed:
            self.assertTrue(st["skipped_share"] > 0.01 or st["failed"] > 0 or st["gbps_per_node"] * 1e9 / 8 < 0.95 * 0.99 * st["rate"], st)
        self.assertEqual(f["answer"], max(s["rate"] for s in held))
        self.assertLess(f["answer"], min(s["rate"] for s in failed), "the answer is below every rate that failed")
        self.assertTrue(all(s["skipped_share"] <= 0.01 for s in held))
        self.assertAlmostEqual(r["rate"], f["answer"], delta=f["answer"] * 0.01, msg="the report's figures are the answer's run")
        with open(os.path.join(self.job, "findrate.out")) as fh:
            self.assertIn("rate search", fh.read(), "the text summary lists the steps")

    def test_runs_are_stored_in_the_database(self):
        rows = db_rows(os.path.join(self.job, "after.db"), "SELECT ranks, planned, ok, skipped, missing FROM run ORDER BY id")
        self.assertIn((4, 36, 36, 0, 0), rows)
        self.assertTrue(any(m == 1 for *_, m in rows), "the run with a dead rank is stored too")


if __name__ == "__main__":
    unittest.main()
