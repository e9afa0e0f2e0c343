#!/usr/bin/env bash
# Installs what a fresh clone needs and checks the toolchain; quiet and quick when all is there.
#   - Node.js 24 LTS (engines.node): the pinned build from the npm package node-linux-<arch> into
#     .cache/node/ when the node on PATH is not a 24.x (scripts/node-env.sh, which the callers source too).
#   - node_modules: installed from package-lock.json when missing or when the lock changed since the
#     last install. `npm install` rather than `npm ci`: npm 11 writes locks here without the other
#     platforms' optional binaries (biome, deno), and `npm ci` then refuses the lock as out of sync;
#     `npm install` installs the locked versions all the same. Its postinstall (scripts/uws-glibc.ts)
#     makes the uWebSockets.js binaries load on a glibc older than 2.38; run again here when the tree
#     is current but was installed another way (e.g. --ignore-scripts).
#   - java 17+ and mvn for the local Kafka broker (skipped when KAFKA_BROKERS names an external one):
#     installed with apt-get when running as root, else the command to run is printed.
#   - with --browser: Debian's chromium (/usr/bin/chromium) for the browser tests (tests/browser), which
#     drive it with playwright-core; npm start does not need it, so only scripts/test.sh asks for it.
#   - with --proxy: Debian's nginx (/usr/sbin/nginx), which tests/proxy.e2e.test.ts runs with the compose
#     deployment's reverse proxy configuration (ops/nginx/casino.conf.template); only scripts/test.sh asks.
#   - with --compose: a Compose implementation (Debian's docker-compose, unless `docker compose` or
#     docker-compose is there), which tests/compose.e2e.test.ts validates docker-compose.yml with
#     (`config` needs no container engine; without one the test parses the YAML itself); only
#     scripts/test.sh asks.
#   - redis-server (with redis-cli) for the local Redis of scripts/redis.sh, the shared rate-limit store
#     and its integration test: installed with apt-get when running as root, else the command is printed.
# The local Postgres server is installed on demand by scripts/postgres.sh (and Redis by scripts/redis.sh
# too, for a checkout that skips this script).
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
cd "$ROOT"
export DEBIAN_FRONTEND=noninteractive
want_browser=0
want_proxy=0
want_compose=0
for arg in "$@"; do
  case "$arg" in
    --browser) want_browser=1 ;;
    --proxy) want_proxy=1 ;;
    --compose) want_compose=1 ;;
    *) die deps "unknown option $arg (known: --browser, --proxy, --compose)" ;;
  esac
done

command -v npm >/dev/null || die deps "npm not found: install Node.js with npm (any version; Node 24 is then fetched)"
# shellcheck source=scripts/node-env.sh
source "$ROOT/scripts/node-env.sh"

# True when node_modules matches package-lock.json. The mtime test is the fast path; a newer lock
# whose resolved versions equal the installed ones (e.g. only reformatted) does not wipe node_modules,
# which matters because parallel runs use the same tree.
deps_current() {
  [[ -f node_modules/.package-lock.json ]] || return 1
  [[ package-lock.json -nt node_modules/.package-lock.json ]] || return 0
  node -e '
    const fs = require("node:fs");
    const want = JSON.parse(fs.readFileSync("package-lock.json", "utf8")).packages ?? {};
    const have = JSON.parse(fs.readFileSync("node_modules/.package-lock.json", "utf8")).packages ?? {};
    for (const [path, meta] of Object.entries(want)) {
      if (path === "") continue;
      const got = have[path];
      if (!got && meta.optional) continue; // another platform'"'"'s binary, not installed here
      if (!got || got.version !== meta.version) process.exit(1);
    }
  ' || return 1
  touch node_modules/.package-lock.json
}

if ! deps_current; then
  say deps "installing npm packages (npm install from package-lock.json)"
  npm install --no-fund --no-audit --loglevel=error </dev/null
elif ! node --import tsx scripts/uws-glibc.ts --check >/dev/null; then
  node --import tsx scripts/uws-glibc.ts
fi

apt_updated=0
apt_install() {
  if [[ "$(id -u)" -ne 0 ]]; then
    die deps "$1 not found. Install it with: sudo apt-get update && sudo apt-get install -y $2"
  fi
  say deps "installing $2"
  if ((apt_updated == 0)); then
    apt-get update -q >/dev/null
    apt_updated=1
  fi
  apt-get install -y -q "$2" >/dev/null
}

if [[ -z "${KAFKA_BROKERS:-}" ]]; then
  command -v java >/dev/null || apt_install java openjdk-17-jre-headless
  java_major="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  if [[ "${java_major%%.*}" -lt 17 ]]; then
    die deps "Kafka 3.9 here needs Java 17 or newer, found $java_major (apt-get install -y openjdk-17-jre-headless)"
  fi
  command -v mvn >/dev/null || apt_install mvn maven
fi

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then apt_install redis-server redis-server; fi

# The compose check (tests/compose.e2e.test.ts) validates docker-compose.yml with a Compose
# implementation when one exists; Debian's docker-compose needs no container engine for `config`.
if ((want_compose == 1)) && ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
  if [[ "$(id -u)" -eq 0 ]]; then
    apt_install docker-compose docker-compose || say deps "docker-compose could not be installed; the compose check will parse the YAML itself"
  else
    say deps "no Compose found (apt-get install -y docker-compose); the compose check will parse the YAML itself"
  fi
fi

# playwright-core brings no browser of its own; the tests launch this one (executablePath).
if ((want_browser == 1)) && [[ ! -x /usr/bin/chromium ]]; then
  apt_install chromium chromium
fi

if ((want_proxy == 1)) && [[ ! -x /usr/sbin/nginx ]]; then
  apt_install nginx nginx
fi
