#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, build dir build-fuzz), replays every seed and
# every regression input once, then fuzzes each target for SECONDS (default 60) on a copy of its
# seed corpus — the repository's corpus is never written. One target at a time, in one process
# (no -jobs: the machine is shared), at nice 10.
# Exit code non-zero when any input crashes; the crashing input is left in
# build-fuzz/fuzz-work/TARGET/ (crash-*, leak-*, timeout-*, oom-*): copy it to
# tests/fuzz/regressions/TARGET/ and fix the parser. Figures: docs/robustness.md.
#   tests/fuzz/run_fuzz.sh [SECONDS] [TARGET...]      e.g. tests/fuzz/run_fuzz.sh 300 schedule
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(ibnetdiscover lft_dump schedule expectation run_report database rank_message epoch quantity cabling carry)
BUILD=${IBROUTE_FUZZ_BUILD:-build-fuzz}
FUZZ_DIR=tests/fuzz

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBROUTE_FUZZ=ON >/dev/null
cmake --build "$BUILD" --target "${TARGETS[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=()
for t in "${TARGETS[@]}"; do
  bin="$BUILD/tests/fuzz/fuzz_$t"
  work="$BUILD/fuzz-work/$t"
  rm -rf "$work" && mkdir -p "$work/corpus"
  cp -r "$FUZZ_DIR/corpus/$t/." "$work/corpus/"
  mkdir -p "$FUZZ_DIR/regressions/$t"
  echo "== $t: replaying the seeds and the regressions"
  if ! (cd "$work" && "$OLDPWD/$bin" -runs=0 "$OLDPWD/$FUZZ_DIR/corpus/$t" "$OLDPWD/$FUZZ_DIR/regressions/$t") >"$work/replay.log" 2>&1; then
    tail -40 "$work/replay.log"
    failed+=("$t (replay)")
    continue
  fi
  echo "== $t: fuzzing for ${SECONDS_PER_TARGET}s"
  # -rss_limit_mb: an input may not make a parser take more than 2 GB (what the input claims must be bounded).
  if (cd "$work" && nice -n 10 "$OLDPWD/$bin" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -timeout=25 -print_final_stats=1 corpus) >"$work/fuzz.log" 2>&1; then
    grep -E "DONE|^Done [0-9]+ runs" "$work/fuzz.log" | tail -2 || true
  else
    tail -60 "$work/fuzz.log"
    ls "$work" | grep -E "^(crash|leak|timeout|oom)-" || true
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $BUILD/fuzz-work/TARGET/)"
  exit 1
fi
echo "fuzz: ${#TARGETS[@]} target(s), no crash"
