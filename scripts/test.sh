#!/usr/bin/env bash
# Install what the tests need, build with warnings as errors, run every test suite:
# unit tests (label unit) and the integration tests that start ibsim + OpenSM (label sim).
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh ci
ctest --preset ci "$@"
