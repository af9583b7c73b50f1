#!/usr/bin/env bash
# The VM suite N times in a row (default 10) with the unit tests looping beside it as load: the
# proof that its assertions hold on a busy machine. Uses a copy of the built binaries,
# so a rebuild meanwhile does not change what is tested. Prints one line per run; exit 1 at the
# first failure (its log is kept).
#   tests/vm/soak.sh [RUNS] [BUILD_DIR]        e.g. tests/vm/soak.sh 10 build-ci
set -uo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-10}"
build="${2:-build-ci}"
work="$(mktemp -d /tmp/ibroute-soak-XXXXXX)"
cp "$build/src/ibroute" "$build/src/ibroute-run" "$build/tests/unit_tests" "$work/"
( while [ ! -e "$work/stop" ]; do "$work/unit_tests" --gtest_brief=1 >/dev/null 2>&1; done ) &
load=$!
trap 'touch "$work/stop"; kill $load 2>/dev/null' EXIT
# Each run's VM job directory is kept (IBROUTE_KEEP) and removed once the run has passed: a
# failure leaves every scenario's output and stderr behind.
vmcache="${IBROUTE_VM_CACHE:-${TMPDIR:-/tmp}/ibroute-vm}"
for i in $(seq 1 "$runs"); do
  t0=$(date +%s)
  touch "$work/start$i"
  (cd tests/vm && IBROUTE_KEEP=1 IBROUTE="$work/ibroute" IBROUTE_SOURCE="$PWD/../.." timeout 2400 python3 -m unittest -v test_runner_vm) \
    > "$work/run$i.log" 2>&1
  rc=$?
  jobs_of_run=$(find "$vmcache" -maxdepth 1 -name 'runner-*' -newer "$work/start$i" 2>/dev/null)
  [ $rc -eq 0 ] && [ -n "$jobs_of_run" ] && rm -rf $jobs_of_run
  echo "run $i/$runs: $([ $rc -eq 0 ] && echo pass || echo FAIL) in $(( $(date +%s) - t0 )) s, load $(cut -d' ' -f1 /proc/loadavg)"
  if [ $rc -ne 0 ]; then
    grep -E "^(FAIL|ERROR):|Error:" "$work/run$i.log" | head -5
    echo "log: $work/run$i.log; VM job: $jobs_of_run"
    exit 1
  fi
done
echo "$runs of $runs passed"
