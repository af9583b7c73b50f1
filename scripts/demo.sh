#!/usr/bin/env bash
# The main job on an embedded default: start a simulated 864-host half fat-tree (ibsim + OpenSM,
# LMC 4, host names shuffled over the leaf ports as on a real cluster), scan it live with
# ibroute, show the summary and a few routes, draw it, and stop what was started.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh default
exec python3 examples/demo.py "$@"
