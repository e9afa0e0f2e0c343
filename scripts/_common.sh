# shellcheck shell=bash
# Shared helpers of the scripts/*.sh infrastructure scripts; sourced, never run.
# Sets ROOT (repository root), DATA_DIR (.data, or CASINO_DATA_DIR: a second, private set of servers
# for fault drills, with its own KAFKA_PORT, KAFKA_CONTROLLER_PORT, PGPORT, REDIS_PORT) and LOG_DIR
# (DATA_DIR/logs).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA_DIR="${CASINO_DATA_DIR:-$ROOT/.data}"
# shellcheck disable=SC2034 # used by the scripts that source this file
LOG_DIR="$DATA_DIR/logs"
TSX="$ROOT/node_modules/.bin/tsx"

# say COMPONENT MESSAGE...: one status line on stderr, so stdout stays free for callers.
say() {
  local who="$1"
  shift
  printf '[%s] %s\n' "$who" "$*" >&2
}

# die COMPONENT MESSAGE...: print and exit 1.
die() {
  say "$@"
  exit 1
}

# port_open PORT [HOST]: true when something accepts TCP connections there.
port_open() {
  (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null
}

# pid_alive PIDFILE PATTERN: true when PIDFILE names a live process whose command line contains PATTERN
# (the pattern guards against a recycled pid after a reboot or crash).
pid_alive() {
  local pidfile="$1" pattern="$2" pid
  [[ -f "$pidfile" ]] || return 1
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern"
}

# record_owned NAME: when INFRA_OWNED_FILE is set, note that this invocation started NAME, so the
# caller (start.sh, test.sh) stops only what it started.
record_owned() {
  if [[ -n "${INFRA_OWNED_FILE:-}" ]]; then
    echo "$1" >>"$INFRA_OWNED_FILE"
  fi
}

# with_lock COMPONENT LOCKFILE TIMEOUT_S CMD...: runs CMD holding an exclusive lock on LOCKFILE (fd 9,
# held until the script exits), so parallel `infra.sh up` calls (several test runs) start one server.
# A server started under it must close fd 9 (9>&-), or it would hold the lock for ever.
with_lock() {
  local who="$1" lock="$2" timeout_s="$3"
  shift 3
  exec 9>"$lock"
  flock -w "$timeout_s" 9 || die "$who" "could not get $lock within $timeout_s s"
  "$@"
}

# stop_pidfile COMPONENT PIDFILE PATTERN TIMEOUT_S: SIGTERM to the process PIDFILE names (checked as in
# pid_alive), SIGKILL if it still runs after TIMEOUT_S seconds; then removes PIDFILE. Idempotent.
stop_pidfile() {
  local who="$1" pidfile="$2" pattern="$3" timeout_s="$4" pid
  if ! pid_alive "$pidfile" "$pattern"; then
    rm -f "$pidfile"
    say "$who" "not running"
    return 0
  fi
  pid="$(cat "$pidfile")"
  say "$who" "stopping pid $pid"
  kill -TERM "$pid"
  local deadline=$((SECONDS + timeout_s))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      say "$who" "still running after ${timeout_s} s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      break
    fi
    sleep 0.1
  done
  rm -f "$pidfile"
  say "$who" "stopped"
}

# ensure_tsx: the TypeScript runner the readiness and setup scripts need.
ensure_tsx() {
  [[ -x "$TSX" ]] || die "$1" "node_modules/.bin/tsx missing: run 'npm ci' (or bash scripts/ensure-deps.sh) first"
}
