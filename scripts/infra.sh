#!/usr/bin/env bash
# Local infrastructure: Kafka (scripts/kafka.sh; KAFKA_CLUSTER_SIZE=3 for a three-node cluster), Postgres (scripts/postgres.sh) and Redis
# (scripts/redis.sh: the optional shared rate-limit store, RATE_LIMIT_REDIS_URL, and its tests).
#
#   bash scripts/infra.sh up|down|status
#
# up:     starts all three (idempotent), creates the project's topics and applies the migrations.
# down:   stops all three. With INFRA_OWNED_FILE set, stops only the components listed in that file
#         (start.sh and test.sh use it to stop only what they started).
# status: exit 0 when all answer, 3 otherwise.
# External KAFKA_BROKERS / DATABASE_URL are honoured: those are used, never started or stopped.
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

# The TS setup scripts read lib/config/shared.ts, whose defaults assume the default ports; pass the
# actual addresses when KAFKA_PORT or PGPORT move them.
setup_env() {
  env KAFKAJS_NO_PARTITIONER_WARNING=1 \
    KAFKA_BROKERS="${KAFKA_BROKERS:-$(bash "$ROOT/scripts/kafka.sh" brokers)}" \
    DATABASE_URL="${DATABASE_URL:-postgres://casino:casino@127.0.0.1:${PGPORT:-55432}/casino}" "$@"
}

up() {
  ensure_tsx infra
  bash "$ROOT/scripts/postgres.sh" start
  bash "$ROOT/scripts/kafka.sh" start
  bash "$ROOT/scripts/redis.sh" start
  setup_env "$TSX" "$ROOT/scripts/create-topics.ts" || die infra "topic creation failed"
  setup_env "$TSX" "$ROOT/scripts/migrate.ts" || die infra "migrations failed"
  say infra "up: kafka ${KAFKA_BROKERS:-$(bash "$ROOT/scripts/kafka.sh" brokers)}, postgres ${DATABASE_URL:+(DATABASE_URL)}${DATABASE_URL:-127.0.0.1:${PGPORT:-55432}}, redis 127.0.0.1:${REDIS_PORT:-56379}"
}

down() {
  local stop_kafka=1 stop_pg=1 stop_redis=1
  if [[ -n "${INFRA_OWNED_FILE:-}" ]]; then
    grep -qx kafka "$INFRA_OWNED_FILE" 2>/dev/null || stop_kafka=0
    grep -qx postgres "$INFRA_OWNED_FILE" 2>/dev/null || stop_pg=0
    grep -qx redis "$INFRA_OWNED_FILE" 2>/dev/null || stop_redis=0
    ((stop_kafka || stop_pg || stop_redis)) || say infra "this run started nothing; leaving kafka, postgres and redis as they are"
  fi
  local rc=0
  if ((stop_kafka)); then bash "$ROOT/scripts/kafka.sh" stop || rc=1; fi
  if ((stop_pg)); then bash "$ROOT/scripts/postgres.sh" stop || rc=1; fi
  if ((stop_redis)); then bash "$ROOT/scripts/redis.sh" stop || rc=1; fi
  return "$rc"
}

status() {
  local rc=0
  bash "$ROOT/scripts/kafka.sh" status || rc=3
  bash "$ROOT/scripts/postgres.sh" status || rc=3
  bash "$ROOT/scripts/redis.sh" status || rc=3
  return "$rc"
}

case "${1:-}" in
up) up ;;
down) down ;;
status)
  rc=0
  status || rc=$?
  exit "$rc"
  ;;
*)
  echo "usage: $0 up|down|status" >&2
  exit 2
  ;;
esac
