#!/usr/bin/env bash
# Runs every benchmark against the local infrastructure (started if needed) and prints the figures.
# Usage: npm run bench [-- projector|rest|latency]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
bash scripts/infra.sh up
which=${1:-all}
if [[ $which == all || $which == projector ]]; then npx tsx bench/projector-replay.ts; fi
if [[ $which == all || $which == rest ]]; then npx tsx bench/rest.ts; fi
if [[ $which == all || $which == latency ]]; then npx tsx bench/main-latency.ts; fi
