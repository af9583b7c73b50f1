#!/usr/bin/env bash
# Install what the tests need, then run every test suite twice: built with warnings as errors
# (preset ci), and built with AddressSanitizer + UndefinedBehaviorSanitizer (preset debug).
# Suites: unit tests (label unit), integration tests on ibsim + OpenSM (label sim), and the
# runner on Soft-RoCE in a qemu VM (label vm; not in the sanitizer pass), the fuzz targets' replay
# of their seeds and regressions (label fuzz); then, after the ci pass, each fuzz target under
# libFuzzer for 30 s, two at a time (tests/fuzz/run_fuzz.sh, clang; 13 targets: ~3.5 minutes).
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`. IBROUTE_NO_SANITIZE=1 skips the
# sanitizer pass; it leaves out the suites labelled slow (planning, routing and scanning large
# fabrics, which the ci pass runs) unless IBROUTE_SANITIZE_ALL=1 (about 25 minutes more).
# Suites other than the VM's run two at a time (-j2): they start their own simulator, use their
# own directories, and none asserts a time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh ci
if [ $# -gt 0 ]; then
  ctest --preset ci "$@"
else
  # Every suite but the VM's runs once: a test that fails fails CI.
  ctest --preset ci -LE vm -j2
  # The VM suite alone may run twice: 2 emulated CPUs on a shared machine (its assertions take
  # their margins from what each run measured; tests/vm/soak.sh runs it ten times under load).
  # A retry is never silent: the failed tests and their first failing line are printed first.
  if ! ctest --preset ci -L vm; then
    tmp=build-ci/Testing/Temporary
    echo "test.sh: RETRY of the VM suite: $(cut -d: -f2 "$tmp/LastTestsFailed.log" | tr '\n' ' ')"
    echo "test.sh: first failure: $(grep -m1 -E 'AssertionError|FAIL:|ERROR:|Error' "$tmp/LastTest.log" || echo '(no line matched)')"
    ctest --preset ci --rerun-failed
  fi
fi
# Every parser of outside input under libFuzzer for 30 s each, after replaying the seeds and the
# regressions (tests/fuzz, docs/robustness.md); only on a full run. IBROUTE_NO_FUZZ=1 skips it.
if [ $# -eq 0 ] && [ "${IBROUTE_NO_FUZZ:-0}" != 1 ]; then
  IBROUTE_FUZZ_PARALLEL=2 tests/fuzz/run_fuzz.sh 30
fi
if [ "${IBROUTE_NO_SANITIZE:-0}" != 1 ]; then
  scripts/build.sh debug
  if [ $# -gt 0 ]; then
    ctest --preset debug "$@"
  elif [ "${IBROUTE_SANITIZE_ALL:-0}" = 1 ]; then
    ctest --preset debug -j2
  else
    ctest --preset debug -LE slow -j2
  fi
fi
