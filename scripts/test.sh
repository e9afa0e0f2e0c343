#!/usr/bin/env bash
# `npm test`: static checks, unit tests, then the integration and end-to-end tiers against a real
# local Kafka and Postgres (started here when not running; external ones via KAFKA_BROKERS and
# DATABASE_URL). Stops at the first failing step with its exit status; at the end, stops only the
# infrastructure this run started. Never prompts (CI runs it without a terminal).
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
cd "$ROOT"

# Node 24 first on PATH for everything below (fetched into .cache/node/ when missing).
# shellcheck source=scripts/node-env.sh
source scripts/node-env.sh
# Plain text when the output is not a terminal (a CI log, a file): vitest colours its report whenever
# CI is in the environment, and escape codes in a log get in the way of whoever reads or parses it.
if [[ ! -t 1 ]]; then export NO_COLOR=1; fi
export KAFKAJS_NO_PARTITIONER_WARNING=1
BIN="$ROOT/node_modules/.bin"

INFRA_OWNED_FILE="$(mktemp "${TMPDIR:-/tmp}/casino-test.XXXXXX")"
export INFRA_OWNED_FILE
# Each vitest tier also writes a JSON report here; the run's last line adds them up
# (scripts/test-summary.ts: "tests: N passed, N failed, N skipped", the plain form CI reads).
REPORT_DIR="$(mktemp -d "${TMPDIR:-/tmp}/casino-test-reports.XXXXXX")"
REPORTS=("$REPORT_DIR/unit.json" "$REPORT_DIR/int.json" "$REPORT_DIR/e2e.json")
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  bash scripts/infra.sh down >/dev/null 2>&1 || say test "stopping the infrastructure failed"
  rm -f "$INFRA_OWNED_FILE"
  printf '\n'
  node scripts/test-summary.ts "${REPORTS[@]}" 2>&1 || true
  rm -rf "$REPORT_DIR"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step() {
  printf '\n=== %s\n' "$*"
  "$@"
}

step bash scripts/ensure-deps.sh --browser --proxy --compose
# grpcurl and schemathesis into .cache/ (the gRPC reflection and the API contract tests use them).
step bash scripts/ensure-test-tools.sh
step "$BIN/biome" check --no-errors-on-unmatched .
step "$BIN/tsc" --noEmit -p tsconfig.json
# The browser console (DOM and Preact's JSX) has its own compiler settings.
step "$BIN/tsc" --noEmit -p console/tsconfig.json
# The WebTransport edge runs on Deno, outside tsconfig.json: Deno type-checks it.
step "$BIN/deno" check --unstable-net services/edge-webtransport/main.ts
# tier NAME [VAR=value...]: vitest for one tier with the variables given, printing its usual report
# and writing its JSON report for the closing line.
tier() {
  local name="$1"
  shift
  env "$@" "$BIN/vitest" run --project "$name" \
    --reporter=default --reporter=json --outputFile.json="$REPORT_DIR/$name.json"
}
step tier unit

step bash scripts/infra.sh up
# For the tests only: exported, they would make `infra.sh down` treat the local servers as external.
tier_env=(
  KAFKA_BROKERS="${KAFKA_BROKERS:-$(bash scripts/kafka.sh brokers)}"
  DATABASE_URL="${DATABASE_URL:-postgres://casino:casino@127.0.0.1:${PGPORT:-55432}/casino}"
)
step tier int "${tier_env[@]}"
# The browser tests load the console from the gateway: its bundle in .build/console/.
step node scripts/build-console.ts
step tier e2e "${tier_env[@]}"
printf '\n=== every step succeeded\n'
