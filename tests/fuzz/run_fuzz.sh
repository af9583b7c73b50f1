#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, build dir build-fuzz), replays every seed and
# every regression input once, then fuzzes each target for SECONDS (default 60) on a copy of its
# seed corpus — the repository's corpus is never written. Each target in one process (no -jobs),
# at nice 10; IBROUTE_FUZZ_PARALLEL=N fuzzes N targets at once (default 1: the machine may be
# shared; scripts/test.sh uses 2, one per core, which halves its wall time for the same effort).
# Exit code non-zero when any input crashes; the crashing input is left in
# build-fuzz/fuzz-work/TARGET/ (crash-*, leak-*, timeout-*, oom-*): copy it to
# tests/fuzz/regressions/TARGET/ and fix the parser. Figures: docs/robustness.md.
#   tests/fuzz/run_fuzz.sh [SECONDS] [TARGET...]      e.g. tests/fuzz/run_fuzz.sh 300 schedule
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(ibnetdiscover ibdiagnet_lst ibdiagnet_csv lft_dump schedule expectation run_report database rank_message epoch quantity cabling carry)
BUILD=${IBROUTE_FUZZ_BUILD:-build-fuzz}
FUZZ_DIR=tests/fuzz

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBROUTE_FUZZ=ON >/dev/null
cmake --build "$BUILD" --target "${TARGETS[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
PARALLEL=${IBROUTE_FUZZ_PARALLEL:-1}
# One target: replay, then fuzz. Its report is gathered in $work/report and printed whole when it
# ends (under a lock: targets fuzzed side by side do not interleave); a crash leaves $work/failed,
# which names it.
fuzz_one() {
  local t=$1 bin="$BUILD/tests/fuzz/fuzz_$1" work="$BUILD/fuzz-work/$1"
  {
    echo "== $t: replaying the seeds and the regressions"
    if ! (cd "$work" && "$OLDPWD/$bin" -runs=0 "$OLDPWD/$FUZZ_DIR/corpus/$t" "$OLDPWD/$FUZZ_DIR/regressions/$t") >"$work/replay.log" 2>&1; then
      tail -40 "$work/replay.log"
      echo "$t (replay)" >"$work/failed"
      return
    fi
    echo "== $t: fuzzing for ${SECONDS_PER_TARGET}s"
    # -rss_limit_mb: an input may not make a parser take more than 2 GB (what the input claims must be bounded).
    if (cd "$work" && nice -n 10 "$OLDPWD/$bin" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
          -malloc_limit_mb=1024 -timeout=25 -print_final_stats=1 corpus) >"$work/fuzz.log" 2>&1; then
      grep -E "DONE|^Done [0-9]+ runs" "$work/fuzz.log" | tail -2 || true
    else
      tail -60 "$work/fuzz.log"
      ls "$work" | grep -E "^(crash|leak|timeout|oom)-" || true
      echo "$t" >"$work/failed"
    fi
  } >"$work/report" 2>&1
  flock "$BUILD/fuzz-work/.print" cat "$work/report"
}
for t in "${TARGETS[@]}"; do
  work="$BUILD/fuzz-work/$t"
  rm -rf "$work" && mkdir -p "$work/corpus"
  cp -r "$FUZZ_DIR/corpus/$t/." "$work/corpus/"
  mkdir -p "$FUZZ_DIR/regressions/$t"
done
pids=()
for t in "${TARGETS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n || true; done
  fuzz_one "$t" &
  pids+=($!)
done
wait "${pids[@]}" || true
failed=()
for t in "${TARGETS[@]}"; do
  work="$BUILD/fuzz-work/$t"
  if [ ! -f "$work/report" ]; then
    failed+=("$t (no report)")
    continue
  fi
  if [ -f "$work/failed" ]; then failed+=("$(cat "$work/failed")"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $BUILD/fuzz-work/TARGET/)"
  exit 1
fi
echo "fuzz: ${#TARGETS[@]} target(s), no crash"
