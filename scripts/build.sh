#!/usr/bin/env bash
# Configure and build with a CMake preset (default: "default"). Used by demo.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
