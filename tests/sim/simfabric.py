"""Start and stop a simulated InfiniBand fabric: ibsim + OpenSM, each in its own temp dir.

Used by the integration tests, the demo and the benchmarks. Facts this relies on
(../shared/notes/ibsim-opensm.md): clients need the umad2sim preload; ibsim's console must be a
FIFO held open read-write; its control socket appears in /proc/net/unix as @NAME:ctl once it
listens; OpenSM needs a fresh cache dir or it carries LIDs over from earlier runs; a preloaded
client with no simulator retries forever, so every client runs under a timeout.
"""
import os
import shutil
import subprocess
import tempfile
import time
import uuid

PRELOAD = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
# ibsim's limits raised for fabrics of thousands of hosts: nodes, switches, ports, LIDs.
IBSIM_LIMITS = ["-N", "8192", "-S", "1024", "-P", "65536", "-L", "49151"]


class SimError(RuntimeError):
    pass


class SimFabric:
    def __init__(self, topology, lmc=4, engine="minhop", keep=False, osm_args=(), ibsim_args=()):
        self.topology = os.path.abspath(topology)
        self.lmc = lmc
        self.engine = engine
        self.osm_args = list(osm_args)  # e.g. ["-D", "0x43", "--dump_files_dir", DIR]
        self.ibsim_args = list(ibsim_args)  # e.g. ["-N", "8192"] for large fabrics
        self.keep = keep
        self.name = "ibr" + uuid.uuid4().hex[:10]
        self.dir = None
        self.proc = None
        self.console_fd = None

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self, route=True):
        self.dir = tempfile.mkdtemp(prefix="ibsim-")
        fifo = os.path.join(self.dir, "console")
        os.mkfifo(fifo)
        self.console_fd = os.open(fifo, os.O_RDWR)
        self.log = open(os.path.join(self.dir, "ibsim.log"), "w")
        env = dict(os.environ, IBSIM_SOCKNAME=self.name)
        self.proc = subprocess.Popen(["ibsim", *self.ibsim_args, "-s", self.topology], stdin=self.console_fd, stdout=self.log,
                                     stderr=subprocess.STDOUT, cwd=self.dir, env=env)
        deadline = time.monotonic() + 30
        while f"@{self.name}:ctl" not in read_text("/proc/net/unix"):
            if self.proc.poll() is not None:
                raise SimError(f"ibsim exited: {self.ibsim_log()[-500:]}")
            if time.monotonic() > deadline:
                raise SimError("ibsim did not start listening within 30 s")
            time.sleep(0.05)
        if route:
            self.route()

    def route(self):
        """One OpenSM sweep with a fresh cache: assigns LIDs (LMC) and programs the LFTs."""
        cache = tempfile.mkdtemp(prefix="osm-", dir=self.dir)
        log = os.path.join(self.dir, "opensm.log")
        env = dict(self.env(), OSM_CACHE_DIR=cache, OSM_TMP_DIR=cache)
        r = subprocess.run(["opensm", "-o", "-e", "-f", log, "-R", self.engine, "-l", str(self.lmc), *self.osm_args],
                           env=env, cwd=self.dir, capture_output=True, text=True, timeout=120)
        text = read_text(log) if os.path.exists(log) else ""
        if "SUBNET UP" not in text:
            raise SimError(f"OpenSM did not bring the subnet up (rc {r.returncode}): {text[-800:]}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.write(self.console_fd, b"Quit\n")  # no prompt follows: wait for the process
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "log", None):
            self.log.close()
        if self.console_fd is not None:
            os.close(self.console_fd)
            self.console_fd = None
        if self.dir and not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- use ---------------------------------------------------------------------------------
    def env(self):
        return dict(os.environ, IBSIM_SOCKNAME=self.name, LD_PRELOAD=PRELOAD)

    def console(self, line, timeout=10):
        """A command on ibsim's console, e.g. 'Unlink "ibswitch03"[10]'. ibsim prints its prompt
        ("sim> ") once a command is applied: waits for the next one instead of a fixed time, and
        returns what ibsim printed in between."""
        path = os.path.join(self.dir, "ibsim.log")
        self.log.flush()
        before = read_text(path)
        os.write(self.console_fd, (line + "\n").encode())
        deadline = time.monotonic() + timeout
        while True:
            text = read_text(path)
            if text.count("sim> ") > before.count("sim> "):
                return text[len(before):]
            if self.proc.poll() is not None:
                raise SimError(f"ibsim exited after console command {line!r}")
            if time.monotonic() > deadline:
                raise SimError(f"ibsim did not apply console command {line!r} within {timeout} s")
            time.sleep(0.01)

    def run(self, args, timeout=120, check=True):
        """Run a client of the simulator (preloaded, bounded, in the sim's directory)."""
        r = subprocess.run(args, env=self.env(), cwd=self.dir, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise SimError(f"{' '.join(map(str, args))} failed ({r.returncode}): {r.stderr[-800:]}")
        return r

    def ibsim_log(self):
        return read_text(os.path.join(self.dir, "ibsim.log"))


def read_text(path):
    with open(path, errors="replace") as f:
        return f.read()


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def generate(out_path, *args):
    """examples/gen_fabric.py with the given arguments, written to out_path."""
    here = os.path.dirname(os.path.abspath(__file__))
    gen = os.path.join(here, "..", "..", "examples", "gen_fabric.py")
    subprocess.run(["python3", gen, *map(str, args), "-o", out_path], check=True)
    return out_path
