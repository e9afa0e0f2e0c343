#!/usr/bin/env bash
# `npm start`: dependencies, local Kafka and Postgres, then every service in the foreground.
#
# Ctrl-C (SIGINT) or SIGTERM stops the services (SIGTERM to each, they shut down gracefully), then
# stops the Kafka and Postgres that this run started; ones that were already running, and external
# ones (KAFKA_BROKERS, DATABASE_URL), are left alone. Exit status: 0 after a requested stop when every
# service stopped cleanly (each exits 0 after its graceful stop); non-zero when a service failed or
# did not stop cleanly. For development the stop is bounded tighter than a deployment's (everything
# within 15 s): SHUTDOWN_TIMEOUT_MS 10 s and EDGE_DRAIN_MS 2 s unless set.
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
cd "$ROOT"

# Node 24 first on PATH for everything below (fetched into .cache/node/ when missing).
# shellcheck source=scripts/node-env.sh
source scripts/node-env.sh
bash scripts/ensure-deps.sh
# The browser console the gateway serves at /console/ (.build/console/, rebuilt on every start).
node scripts/build-console.ts

INFRA_OWNED_FILE="$(mktemp "${TMPDIR:-/tmp}/casino-start.XXXXXX")"
export INFRA_OWNED_FILE
services_pid=""
pretty_pid=""

# shellcheck disable=SC2317 # called from the traps
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n "$services_pid" ]] && kill -0 "$services_pid" 2>/dev/null; then
    say start "stopping services"
    kill -TERM "$services_pid" 2>/dev/null || true
    # concurrently exits 0 only when every service exited 0 (each runs under `exec`, so its status
    # is the service's own, not that of a shell killed by the signal).
    local services_rc=0
    wait "$services_pid" 2>/dev/null || services_rc=$?
    if ((services_rc != 0)); then
      say start "a service did not stop cleanly (status $services_rc)"
      rc=1
    fi
  fi
  # The formatter prints what the services wrote last, then ends with its input (bounded: a
  # process still holding the pipe must not hold the stop).
  if [[ -n "$pretty_pid" ]]; then
    exec {out_fd}>&-
    for _ in $(seq 1 30); do
      kill -0 "$pretty_pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  bash scripts/infra.sh down || rc=1
  rm -f "$INFRA_OWNED_FILE"
  exit "$rc"
}
trap cleanup EXIT
# A requested stop is not a failure: cleanup decides the status from how the services stopped.
trap 'exit 0' INT TERM

bash scripts/infra.sh up

# The services read the addresses through their config (lib/config/shared.ts, which defaults to the standard ports).
# Passed to the services only: exported here, they would make `infra.sh down` in cleanup take
# the local servers for external ones and leave them running.
service_env=(
  # The local broker, or every node of the local cluster (KAFKA_CLUSTER_SIZE, scripts/kafka.sh).
  KAFKA_BROKERS="${KAFKA_BROKERS:-$(bash scripts/kafka.sh brokers)}"
  DATABASE_URL="${DATABASE_URL:-postgres://casino:casino@127.0.0.1:${PGPORT:-55432}/casino}"
  KAFKAJS_NO_PARTITIONER_WARNING=1
  # Simulated players betting through the operator sandbox; BOTS_PLAYERS=0 turns them off.
  BOTS_PLAYERS="${BOTS_PLAYERS:-6}"
  # A quick stop for development (a deployment keeps the defaults: 30 s, 5 s).
  SHUTDOWN_TIMEOUT_MS="${SHUTDOWN_TIMEOUT_MS:-10000}"
  EDGE_DRAIN_MS="${EDGE_DRAIN_MS:-2000}"
  # Every fresh browser or private window opening the demo pages mints a browser key, and on this
  # machine they all share one IP: the deployment's 3 new keys per IP an hour would refuse the
  # fourth (docs/decisions/runtime/0011-development-start.md).
  RATE_LIMIT_BROWSER_KEYS_PER_IP="${RATE_LIMIT_BROWSER_KEYS_PER_IP:-1000}"
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
# (the CLI escalates to SIGKILL when its child does not acknowledge within 30 ms). Every Node service
# preloads lib/early-signals.ts, so a Ctrl-C while its modules are still loading is held and the
# service stops cleanly once started, instead of dying of the signal (status 1 here).
# The edge runs with the Node flags of services/edge/runtime.ts (V8's young generation capped).
# The WebTransport edge needs a certificate: a short-lived self-signed one for development
# (regenerated when missing or near expiry) unless WT_CERT_FILE/WT_KEY_FILE name a real one.
if [[ -z "${WT_CERT_FILE:-}" ]]; then bash scripts/dev-cert.sh >/dev/null; fi
# The operator sandbox is the default operator of the main job: register it (idempotent) so the bots
# and anyone trying request-access by hand have a bearer in .data/sandbox/operator.json.
env "${service_env[@]}" node --import tsx scripts/register-sandbox.ts

# On a terminal the services' JSON lines are shown as text (scripts/pretty-logs.ts: pino-pretty,
# one line per record, after concurrently's coloured prefix); to a file, a pipe or a CI log they stay
# JSON lines. The formatter ignores the Ctrl-C (the services' stop messages come after it) and ends
# when its input does.
out_fd=1
concurrently_env=()
if [[ -t 1 ]]; then
  exec {out_fd}> >(exec node scripts/pretty-logs.ts)
  pretty_pid=$!
  # concurrently writes into the formatter's pipe: keep its coloured prefixes unless NO_COLOR.
  if [[ -z "${NO_COLOR:-}" ]]; then concurrently_env=(FORCE_COLOR=1); fi
fi

setsid env "${service_env[@]}" "${concurrently_env[@]}" node_modules/.bin/concurrently \
  --names round-engine,projector,api,edge,edge-wt,gateway,sandbox,settlement,wallet-saga,bots \
  --prefix-colors blue,magenta,green,cyan,yellow,white,gray,red,green,gray \
  --kill-signal SIGTERM \
  "exec node --import ./lib/early-signals.ts --import tsx services/round-engine/main.ts" \
  "exec node --import ./lib/early-signals.ts --import tsx services/projector/main.ts" \
  "exec node --import ./lib/early-signals.ts --import tsx services/api/main.ts" \
  "exec node --max-semi-space-size=4 --import ./lib/early-signals.ts --import tsx services/edge/main.ts" \
  "exec node_modules/.bin/deno run --unstable-net --allow-net --allow-read --allow-write=.data --allow-env --allow-sys --preload ./lib/early-signals.ts services/edge-webtransport/main.ts" \
  "exec node --import ./lib/early-signals.ts --import tsx services/gateway/main.ts" \
  "exec node --import ./lib/early-signals.ts --import tsx services/operator-sandbox/main.ts" \
  "exec node --import ./lib/early-signals.ts --import tsx services/settlement/main.ts" \
  "exec node --import ./lib/early-signals.ts --import tsx services/wallet-saga/main.ts" \
  "exec node --import ./lib/early-signals.ts --import tsx services/bots/main.ts" >&"$out_fd" &
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
