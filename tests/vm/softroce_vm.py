#!/usr/bin/env python3
"""Runs a shell job inside a qemu VM that has a Soft-RoCE device (rxe0), for tests of real verbs.

The guest is Debian's own kernel with a small busybox initramfs. The host's root is shared read-only
over virtio-9p under an overlay with a tmpfs upper layer, so the guest runs the host's binaries and
libraries (libibverbs, librxe, Open MPI, the ibroute build) unchanged; a read-write 9p share carries
the job script in and its output and exit code out. Facts: ../shared/notes/softroce-vm.md.

  softroce_vm.py JOB.sh [--timeout S] [--workdir DIR]   (prints the job's output, exits with its code)
"""
import argparse
import glob
import gzip
import io
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time

# crc32_generic: rxe needs a crc32 shash; the table code, not crc32-pclmul (slow under emulation).
MODULES = ["crc32_generic", "virtio_pci", "9pnet_virtio", "9p", "overlay", "rdma_rxe", "ib_uverbs", "dummy"]

# The guest's /init: mount the shares, bring up rxe0 on a dummy netdev, run the job in a chroot
# of the host's root, store its exit code, power off.
INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /host /upper /root /job
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do insmod /mods/$m || echo "init: insmod $m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro hostroot /host
mount -t 9p -o trans=virtio,version=9p2000.L,rw job /job
mount -t tmpfs tmpfs /upper; mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/host,upperdir=/upper/u,workdir=/upper/w /root
mkdir -p /root/job; mount --bind /job /root/job
mount -t proc proc /root/proc; mount -t sysfs sys /root/sys; mount -t devtmpfs dev /root/dev
mkdir -p /root/dev/shm /root/dev/pts; mount -t tmpfs shm /root/dev/shm; mount -t devpts pts /root/dev/pts
mount -t tmpfs run /root/run  # /tmp stays on the overlay: a checkout under /tmp remains visible
hostname vm
ip link set lo up
ip link add dummy0 type dummy; ip addr add 10.11.0.1/24 dev dummy0; ip link set dummy0 up
chroot /root /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  sh -c 'rdma link add rxe0 type rxe netdev dummy0 && cd /job && sh ./job.sh' > /job/output 2>&1
echo $? > /job/exit_code
sync
poweroff -f
"""


def kernel_and_modules():
    """Debian's newest installed kernel image and its module directory."""
    kernels = sorted(glob.glob("/boot/vmlinuz-*"))
    for k in reversed(kernels):
        ver = k[len("/boot/vmlinuz-"):]
        if os.path.isdir(f"/lib/modules/{ver}/kernel/drivers/infiniband/sw/rxe"):
            return k, ver
    sys.exit("softroce_vm: no /boot/vmlinuz-* with rdma_rxe modules (install linux-image-amd64)")


def module_files(ver):
    """The .ko files of MODULES with their dependencies, in load order."""
    out = "".join(subprocess.run(["modprobe", "-S", ver, "--show-depends", m], check=True,
                                 capture_output=True, text=True).stdout for m in MODULES)
    files = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "insmod" and parts[1] not in files:
            files.append(parts[1])
    return files


def cpio_newc(entries):
    """A newc cpio archive from (name, mode, data) entries (directories have data None)."""
    buf = io.BytesIO()
    ino = 1
    for name, mode, data in entries + [("TRAILER!!!", 0, b"")]:
        data = data or b""
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08x}" for v in (ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nb), 0))
        buf.write(hdr.encode() + nb)
        buf.write(b"\0" * ((4 - (110 + len(nb)) % 4) % 4))
        buf.write(data)
        buf.write(b"\0" * ((4 - len(data) % 4) % 4))
        ino += 1
    return buf.getvalue()


def build_initramfs(path, ver):
    busybox = shutil.which("busybox") or "/bin/busybox"
    with open(busybox, "rb") as f:
        bb = f.read()
    entries = [("bin", 0o40755, None), ("mods", 0o40755, None), ("bin/busybox", 0o100755, bb),
               ("init", 0o100755, INIT.encode())]
    order = []
    for ko in module_files(ver):
        with open(ko, "rb") as f:
            data = f.read()
        name = os.path.basename(ko)
        if name.endswith(".xz"):
            data, name = lzma.decompress(data), name[:-3]
        elif name.endswith(".zst"):
            data = subprocess.run(["zstd", "-dc", ko], check=True, capture_output=True).stdout
            name = name[:-4]
        entries.append((f"mods/{name}", 0o100644, data))
        order.append(name)
    entries.append(("modules.order", 0o100644, "\n".join(order).encode() + b"\n"))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(gzip.compress(cpio_newc(entries), 1))
    os.replace(tmp, path)


BOOT_S = 300  # from start to the job's first output file; a normal boot takes seconds


def _boot(cmd, job, timeout, boot_s):
    """Runs the VM; ("done" | "timeout" | "no-boot", console). "no-boot": no job output after boot_s."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    while True:
        try:
            return "done", p.communicate(timeout=5)[0]
        except subprocess.TimeoutExpired:
            spent = time.monotonic() - start
            state = "timeout" if spent > timeout else (
                "no-boot" if spent > boot_s and not os.path.exists(os.path.join(job, "output")) else None)
            if state:
                p.kill()
                return state, p.communicate()[0] or ""


def run(job_script, timeout=600, workdir=None, smp=2, mem_mib=2048):
    """Runs job_script (text) in the VM; returns (exit code, output). Exit code 124: timed out."""
    kernel, ver = kernel_and_modules()
    cache = os.environ.get("IBROUTE_VM_CACHE", os.path.join(tempfile.gettempdir(), "ibroute-vm"))
    os.makedirs(cache, exist_ok=True)
    initrd = os.path.join(cache, f"initramfs-{ver}.gz")
    if not os.path.exists(initrd) or os.path.getmtime(initrd) < os.path.getmtime(__file__):
        build_initramfs(initrd, ver)
    job = workdir or tempfile.mkdtemp(prefix="job-", dir=cache)
    os.makedirs(job, exist_ok=True)
    with open(os.path.join(job, "job.sh"), "w") as f:
        f.write(job_script)
    for name in ("output", "exit_code"):
        if os.path.exists(os.path.join(job, name)):
            os.remove(os.path.join(job, name))
    cmd = ["qemu-system-x86_64", "-accel", "tcg,thread=multi", "-cpu", "max", "-smp", str(smp),
           "-m", str(mem_mib), "-nographic", "-no-reboot", "-kernel", kernel, "-initrd", initrd,
           # cryptomgr.notests: the kernel's crypto self-tests, slow under emulation, once locked
           # a CPU for 25 min at boot (soft lockup in cryptomgr_test) before the job ever ran.
           "-append", "console=ttyS0 quiet panic=-1 clocksource=tsc tsc=reliable cryptomgr.notests=1",
           "-virtfs", "local,path=/,mount_tag=hostroot,readonly=on,security_model=none,multidevs=remap",
           "-virtfs", f"local,path={job},mount_tag=job,security_model=none"]
    start = time.monotonic()
    # Should an emulated guest still hang while booting (no job file written), that is the
    # emulator, not the code under test: a guest that has not started the job after BOOT_S is
    # booted once more.
    for attempt in (1, 2):
        left = timeout - (time.monotonic() - start)
        state, console = _boot(cmd, job, left, BOOT_S if attempt == 1 else left)
        if state != "no-boot":
            break
        sys.stderr.write(f"softroce_vm: the guest did not start the job within {BOOT_S} s; booting it again\n")
    if state != "done":
        return 124, f"softroce_vm: timed out after {timeout} s ({state})\n{console[-4000:]}"
    try:
        with open(os.path.join(job, "exit_code")) as f:
            code = int(f.read().strip())
        with open(os.path.join(job, "output"), errors="replace") as f:
            output = f.read()
    except (OSError, ValueError):
        return 125, f"softroce_vm: the guest left no exit code ({time.monotonic() - start:.1f} s)\n{console[-4000:]}"
    return code, output


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("job")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--workdir")
    a = ap.parse_args()
    with open(a.job) as f:
        code, out = run(f.read(), a.timeout, a.workdir)
    sys.stdout.write(out)
    sys.exit(code)


if __name__ == "__main__":
    main()
