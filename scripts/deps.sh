#!/usr/bin/env bash
# Install every Debian package ibroute needs to build, run its demo and run its tests.
# Idempotent: skips apt when everything is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config python3
  libibverbs-dev libibumad-dev libibmad-dev libibnetdisc-dev infiniband-diags
  ibsim-utils opensm
  libsqlite3-dev sqlite3 libcli11-dev nlohmann-json3-dev
  # ibroute exporter's HTTP server
  libcpp-httplib-dev
  graphviz libgraphviz-dev
  libgtest-dev
  # ibroute run: verbs and MPI; its tests and benchmark boot a Soft-RoCE VM (tests/vm)
  ibverbs-providers libopenmpi-dev openmpi-bin
  # the VM test starts a one-node Slurm inside the VM and launches the ranks with srun --mpi=pmix
  slurmd slurmctld slurm-client
  # topo --format slurm-block is read back by a Slurm with the block plugin (25.05+): Debian
  # unstable's, in a chroot the test makes (tests/sim/test_slurm_sim.py)
  debootstrap
  qemu-system-x86 linux-image-amd64 busybox-static kmod rdma-core ibverbs-utils perftest iproute2
  # ibroute accept: its HTML report is checked in a real browser
  chromium
  # the fuzz targets (tests/fuzz): libFuzzer, ASan and UBSan come with clang's runtime
  clang libclang-rt-14-dev
  # every C++ file as .clang-format lays it out (tests/lint/format_check.py)
  clang-format
  # the package test reads the installed man pages with man
  man-db
  # the JSON Schemas of the exchange formats (docs/schemas) are checked against real outputs (tests/sim/test_schemas.py)
  python3-jsonschema
  # ibroute counters --format prometheus / influx: checked by promtool and written to a real InfluxDB (tests/sim/test_monitoring_sim.py)
  prometheus influxdb
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
