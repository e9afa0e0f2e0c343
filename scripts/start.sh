#!/usr/bin/env bash
# `npm start`: dependencies, local Kafka and Postgres, then every service in the foreground.
#
# Ctrl-C (SIGINT) or SIGTERM stops the services (SIGTERM to each, they shut down gracefully), then
# stops the Kafka and Postgres that this run started; ones that were already running, and external
# ones (KAFKA_BROKERS, DATABASE_URL), are left alone. Exit status: non-zero when a service failed.
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
cd "$ROOT"

# Node 24 first on PATH for everything below (fetched into .cache/node/ when missing).
# shellcheck source=scripts/node-env.sh
source scripts/node-env.sh
bash scripts/ensure-deps.sh

INFRA_OWNED_FILE="$(mktemp "${TMPDIR:-/tmp}/casino-start.XXXXXX")"
export INFRA_OWNED_FILE
services_pid=""

# shellcheck disable=SC2317 # called from the traps
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n "$services_pid" ]] && kill -0 "$services_pid" 2>/dev/null; then
    say start "stopping services"
    kill -TERM "$services_pid" 2>/dev/null || true
    wait "$services_pid" 2>/dev/null || true
  fi
  bash scripts/infra.sh down || rc=1
  rm -f "$INFRA_OWNED_FILE"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bash scripts/infra.sh up

# The services read the addresses through their config (lib/config/shared.ts, which defaults to the standard ports).
# Passed to the services only: exported here, they would make `infra.sh down` in cleanup take
# the local servers for external ones and leave them running.
service_env=(
  KAFKA_BROKERS="${KAFKA_BROKERS:-127.0.0.1:${KAFKA_PORT:-19092}}"
  DATABASE_URL="${DATABASE_URL:-postgres://casino:casino@127.0.0.1:${PGPORT:-55432}/casino}"
  KAFKAJS_NO_PARTITIONER_WARNING=1
  # Simulated players betting through the operator sandbox (issue 5); BOTS_PLAYERS=0 turns them off.
  BOTS_PLAYERS="${BOTS_PLAYERS:-6}"
)

api_url="http://${GATEWAY_HOST:-127.0.0.1}:${GATEWAY_PORT:-8080}/"
banner() {
  printf '\n==================================================\n'
  printf '  Dashboard: %s\n' "$api_url"
  printf '  Stop with Ctrl-C\n'
  printf '==================================================\n\n'
}
banner

# Own session (setsid): a terminal Ctrl-C reaches only this script, which then stops the services
# once with SIGTERM instead of every process getting SIGINT and SIGTERM at once. `node --import tsx`
# rather than the tsx CLI: one process per service, so the signal is not relayed through a wrapper
# (the CLI escalates to SIGKILL when its child does not acknowledge within 30 ms).
# The WebTransport edge needs a certificate: a short-lived self-signed one for development
# (regenerated when missing or near expiry) unless WT_CERT_FILE/WT_KEY_FILE name a real one.
if [[ -z "${WT_CERT_FILE:-}" ]]; then bash scripts/dev-cert.sh >/dev/null; fi
# The operator sandbox is the default operator of the main job: register it (idempotent) so the bots
# and anyone trying request-access by hand have a bearer in .data/sandbox/operator.json.
env "${service_env[@]}" node --import tsx scripts/register-sandbox.ts

setsid env "${service_env[@]}" node_modules/.bin/concurrently \
  --names round-engine,projector,api,edge,edge-wt,gateway,sandbox,settlement,wallet-saga,bots \
  --prefix-colors blue,magenta,green,cyan,yellow,white,gray,red,green,gray \
  --kill-signal SIGTERM \
  "node --import tsx services/round-engine/main.ts" \
  "node --import tsx services/projector/main.ts" \
  "node --import tsx services/api/main.ts" \
  "node --import tsx services/edge/main.ts" \
  "node_modules/.bin/deno run --unstable-net --allow-net --allow-read --allow-write=.data --allow-env --allow-sys services/edge-webtransport/main.ts" \
  "node --import tsx services/gateway/main.ts" \
  "node --import tsx services/operator-sandbox/main.ts" \
  "node --import tsx services/settlement/main.ts" \
  "node --import tsx services/wallet-saga/main.ts" \
  "node --import tsx services/bots/main.ts" &
services_pid=$!

# Repeat the address once the API answers, since service logs scroll the first banner away.
(
  for _ in $(seq 1 240); do
    if port_open "${GATEWAY_PORT:-8080}" "${GATEWAY_HOST:-127.0.0.1}"; then
      banner
      exit 0
    fi
    kill -0 "$services_pid" 2>/dev/null || exit 0
    sleep 0.5
  done
) &

rc=0
wait "$services_pid" || rc=$?
services_pid=""
say start "services exited (status $rc)"
exit "$rc"
