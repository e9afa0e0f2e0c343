#!/usr/bin/env bash
# Local Apache Kafka 3.9.1 in KRaft mode, from Maven Central jars (scripts/kafka/pom.xml): one node
# by default, or a cluster of KAFKA_CLUSTER_SIZE nodes (each broker and controller, "combined mode").
#
#   bash scripts/kafka.sh start|stop|status|logs [-f]|brokers
#   bash scripts/kafka.sh start-node|stop-node|kill-node N      (one node of a cluster, 1..size)
#
# One node: listens on 127.0.0.1:${KAFKA_PORT:-19092} (controller ${KAFKA_CONTROLLER_PORT:-19093}),
# data in .data/kafka, log in .data/logs/kafka.log. A cluster (KAFKA_CLUSTER_SIZE=3): node N listens
# on KAFKA_PORT + 10·(N−1) (controller KAFKA_CONTROLLER_PORT + 10·(N−1)), data in .data/kafka-N, log
# in .data/logs/kafka-N.log; the controllers form one Raft quorum, so the cluster keeps working with
# any one node of three down. `brokers` prints the local bootstrap list (host:port,…) for
# KAFKA_BROKERS. KAFKA_FAILOVER=kafka-defaults writes Kafka's own failure-detection timeouts instead
# of this project's shorter ones (docs/deployment.md "Broker loss"), to measure the difference.
# When KAFKA_BROKERS is set to something else, an external broker is used: start/stop do nothing and
# status checks that broker. status exits 0 when running, 3 when not.
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

KAFKA_PORT="${KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19093}"
KAFKA_CLUSTER_SIZE="${KAFKA_CLUSTER_SIZE:-1}"
KAFKA_FAILOVER="${KAFKA_FAILOVER:-tuned}"
KAFKA_READY_TIMEOUT_MS="${KAFKA_READY_TIMEOUT_MS:-60000}"
KAFKA_STOP_TIMEOUT_S="${KAFKA_STOP_TIMEOUT_S:-30}"
[[ "$KAFKA_CLUSTER_SIZE" =~ ^[1-9]$ ]] || die kafka "KAFKA_CLUSTER_SIZE must be 1..9 (got '$KAFKA_CLUSTER_SIZE')"
[[ "$KAFKA_FAILOVER" == tuned || "$KAFKA_FAILOVER" == kafka-defaults ]] ||
  die kafka "KAFKA_FAILOVER must be tuned or kafka-defaults (got '$KAFKA_FAILOVER')"
# A node of a cluster gets a smaller heap: three of them share a laptop (README "Local Kafka cluster").
if ((KAFKA_CLUSTER_SIZE == 1)); then
  KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx512m -Xms256m}"
else
  KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx256m -Xms128m}"
fi
# Replication of the internal topics and the in-sync minimum: 3 and 2 on three nodes or more (one
# node may be lost without refusing a write), the node count and 1 below that.
REPLICAS=$((KAFKA_CLUSTER_SIZE < 3 ? KAFKA_CLUSTER_SIZE : 3))
MIN_ISR=$((REPLICAS >= 3 ? 2 : 1))
export KAFKAJS_NO_PARTITIONER_WARNING=1

POM="$ROOT/scripts/kafka/pom.xml"
CACHE="$ROOT/.cache/kafka"
LIBS="$CACHE/libs"
STAMP="$CACHE/libs.stamp"
MAIN_CLASS="kafka.Kafka"
# The cluster-wide files: the start lock and (for a cluster) the shared cluster id.
if ((KAFKA_CLUSTER_SIZE == 1)); then
  CDIR="$DATA_DIR/kafka"
else
  CDIR="$DATA_DIR/kafka-cluster"
fi

mkdir -p "$CDIR" "$LOG_DIR" "$CACHE"

node_port() { echo $((KAFKA_PORT + 10 * ($1 - 1))); }
node_controller_port() { echo $((KAFKA_CONTROLLER_PORT + 10 * ($1 - 1))); }

# node_vars N: sets KDIR, PIDFILE, PROPS, LOG4J, LOGFILE, NPORT, NCPORT of node N.
node_vars() {
  if ((KAFKA_CLUSTER_SIZE == 1)); then
    KDIR="$DATA_DIR/kafka"
    LOGFILE="$LOG_DIR/kafka.log"
  else
    KDIR="$DATA_DIR/kafka-$1"
    LOGFILE="$LOG_DIR/kafka-$1.log"
  fi
  PIDFILE="$KDIR/kafka.pid"
  PROPS="$KDIR/server.properties"
  LOG4J="$KDIR/log4j.properties"
  NPORT="$(node_port "$1")"
  NCPORT="$(node_controller_port "$1")"
  mkdir -p "$KDIR"
}

# The local bootstrap list: every node's broker address.
local_brokers() {
  local i list=""
  for i in $(seq 1 "$KAFKA_CLUSTER_SIZE"); do list+="${list:+,}127.0.0.1:$(node_port "$i")"; done
  echo "$list"
}

# KAFKA_BROKERS naming exactly this local broker or cluster (scripts/test.sh exports it for a
# non-default KAFKA_PORT) is not an external one: this script still owns its start and stop.
external_broker() {
  [[ -n "${KAFKA_BROKERS:-}" && "$KAFKA_BROKERS" != "127.0.0.1:$KAFKA_PORT" && "$KAFKA_BROKERS" != "$(local_brokers)" ]]
}

# The jars are resolved again only when the pom changed (stamp = its sha256) or the folder is gone.
resolve_jars() {
  local want have=""
  want="$(sha256sum "$POM" | cut -d' ' -f1)"
  [[ -f "$STAMP" ]] && have="$(cat "$STAMP")"
  if [[ -d "$LIBS" && "$have" == "$want" ]] && compgen -G "$LIBS/kafka_2.13-*.jar" >/dev/null; then
    return 0
  fi
  command -v mvn >/dev/null || die kafka "mvn not found: install Maven (apt-get install -y maven) or run scripts/ensure-deps.sh"
  say kafka "resolving Kafka jars from Maven Central into $LIBS (pom changed or jars missing)"
  # Fresh folder: copy-dependencies never deletes, so stale versions would stay on the classpath.
  rm -rf "$LIBS.tmp"
  mvn -q -B -Dmaven.repo.local="$ROOT/.cache/m2" -f "$POM" dependency:copy-dependencies \
    -DoutputDirectory="$LIBS.tmp" -DincludeScope=runtime >"$CACHE/mvn.log" 2>&1 ||
    { tail -n 30 "$CACHE/mvn.log" >&2; die kafka "maven failed, see $CACHE/mvn.log"; }
  rm -rf "$LIBS"
  mv "$LIBS.tmp" "$LIBS"
  echo "$want" >"$STAMP"
  say kafka "$(find "$LIBS" -name '*.jar' | wc -l) jars resolved"
}

# How fast a dead node is noticed (docs/deployment.md "Broker loss"). Kafka's defaults: a broker is
# fenced 9 s after its last heartbeat (2 s apart), a follower leaves the ISR after 30 s behind, a
# controller follower calls an election 2 s after it last heard the leader. On loopback and a LAN
# those are far longer than a heartbeat's round trip; every partition led by a dead node is without
# a leader until it is fenced, so the session timeout is how long a game stands still.
failover_props() {
  [[ "$KAFKA_FAILOVER" == tuned ]] || return 0
  cat <<EOF
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
replica.lag.time.max.ms=5000
controller.quorum.fetch.timeout.ms=1000
controller.quorum.election.timeout.ms=500
controller.quorum.election.backoff.max.ms=500
EOF
}

# write_config N: server.properties and log4j.properties of node N.
write_config() {
  local voters="" i
  for i in $(seq 1 "$KAFKA_CLUSTER_SIZE"); do voters+="${voters:+,}$i@127.0.0.1:$(node_controller_port "$i")"; done
  {
    cat <<EOF
# Generated by scripts/kafka.sh on every start; edit the script, not this file.
process.roles=broker,controller
node.id=$1
controller.quorum.voters=${voters}
listeners=PLAINTEXT://127.0.0.1:${NPORT},CONTROLLER://127.0.0.1:${NCPORT}
advertised.listeners=PLAINTEXT://127.0.0.1:${NPORT}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=${KDIR}/data
auto.create.topics.enable=false
delete.topic.enable=true
num.partitions=3
default.replication.factor=${REPLICAS}
min.insync.replicas=${MIN_ISR}
offsets.topic.replication.factor=${REPLICAS}
transaction.state.log.replication.factor=${REPLICAS}
transaction.state.log.min.isr=${MIN_ISR}
group.initial.rebalance.delay.ms=0
EOF
    if ((KAFKA_CLUSTER_SIZE > 1)); then failover_props; fi
  } >"$PROPS"
  # Everything goes to stdout, which start_node() appends to the node's log together with JVM errors.
  cat >"$LOG4J" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.controller=INFO
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.org.apache.kafka.storage.internals.log=WARN
log4j.logger.kafka.log=WARN
log4j.logger.org.apache.kafka.raft=WARN
log4j.logger.org.apache.kafka.controller=WARN
EOF
}

# The JVM command line as an array (the classpath wildcard must reach java unexpanded); LOG4J is
# the node's, so java_cmd runs after node_vars.
java_cmd() {
  local heap
  read -r -a heap <<<"$KAFKA_HEAP_OPTS"
  JAVA=(java "${heap[@]}" -XX:+UseG1GC -Djava.awt.headless=true "-Dlog4j.configuration=file:$LOG4J" -cp "$LIBS/*")
}

# One cluster id for every node of a cluster, made once.
cluster_id() {
  local file="$CDIR/cluster-id"
  if [[ ! -s "$file" ]]; then
    "${JAVA[@]}" kafka.tools.StorageTool random-uuid 2>>"$LOGFILE" | tail -n 1 >"$file"
  fi
  cat "$file"
}

format_storage() {
  [[ -f "$KDIR/data/meta.properties" ]] && return 0
  local id
  id="$(cluster_id)"
  say kafka "formatting storage $KDIR/data (cluster id $id)"
  "${JAVA[@]}" kafka.tools.StorageTool format -t "$id" -c "$PROPS" >>"$LOGFILE" 2>&1 ||
    die kafka "storage format failed, see $LOGFILE"
}

# wait_ready BROKERS PIDS...: every node's port open (a node that exits fails the start), then the
# cluster answers metadata through BROKERS with every node registered.
wait_ready() {
  local brokers="$1" deadline=$((SECONDS + KAFKA_READY_TIMEOUT_MS / 1000)) i pid
  shift
  for i in "$@"; do
    node_vars "$i"
    pid="$(cat "$PIDFILE")"
    until port_open "$NPORT"; do
      kill -0 "$pid" 2>/dev/null || { tail -n 40 "$LOGFILE" >&2; die kafka "node $i exited during start-up, see $LOGFILE"; }
      ((SECONDS < deadline)) || die kafka "port $NPORT not open after ${KAFKA_READY_TIMEOUT_MS} ms, see $LOGFILE"
      sleep 0.5
    done
  done
  local left_ms=$(((deadline - SECONDS) * 1000))
  ((left_ms > 5000)) || left_ms=5000
  KAFKA_BROKERS="$brokers" "$TSX" "$ROOT/scripts/wait-kafka.ts" --timeout-ms "$left_ms" \
    --brokers "$KAFKA_CLUSTER_SIZE" >&2 ||
    die kafka "the cluster does not answer metadata requests with every node, see $LOG_DIR/kafka*.log"
}

# launch_node N: starts node N's JVM unless it runs; prints nothing. Fails when its ports are taken.
launch_node() {
  node_vars "$1"
  if pid_alive "$PIDFILE" "$MAIN_CLASS"; then return 0; fi
  rm -f "$PIDFILE"
  if port_open "$NPORT" || port_open "$NCPORT"; then
    die kafka "port $NPORT or $NCPORT is taken by another process; set KAFKA_PORT/KAFKA_CONTROLLER_PORT or KAFKA_BROKERS"
  fi
  java_cmd
  write_config "$1"
  format_storage
  echo "---- $(date -Is) starting kafka" >>"$LOGFILE"
  # setsid: own session, so a Ctrl-C in the terminal that started it does not reach the broker;
  # the inner shell records its pid and then becomes java (exec), so the pid file names the JVM.
  # 9>&-: the broker must not inherit the start lock.
  # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$PIDFILE" "${JAVA[@]}" "$MAIN_CLASS" "$PROPS" \
    </dev/null >>"$LOGFILE" 2>&1 9>&- &
  for _ in $(seq 1 50); do [[ -s "$PIDFILE" ]] && break; sleep 0.1; done
  say kafka "started node $1, pid $(cat "$PIDFILE"), on 127.0.0.1:$NPORT"
}

all_running() {
  local i
  for i in $(seq 1 "$KAFKA_CLUSTER_SIZE"); do
    node_vars "$i"
    pid_alive "$PIDFILE" "$MAIN_CLASS" || return 1
  done
}

do_start() {
  if all_running; then
    say kafka "already running on $(local_brokers)"
    return 0
  fi
  command -v java >/dev/null || die kafka "java not found: install a JRE 17 (apt-get install -y openjdk-17-jre-headless)"
  ensure_tsx kafka
  resolve_jars
  # Every node at once: a quorum of three elects a controller only once two of them run.
  local i
  for i in $(seq 1 "$KAFKA_CLUSTER_SIZE"); do launch_node "$i"; done
  wait_ready "$(local_brokers)" $(seq 1 "$KAFKA_CLUSTER_SIZE")
  record_owned kafka
  say kafka "ready on $(local_brokers) (log $LOG_DIR/kafka*.log)"
}

# Every node at once: stopped one after another, the last would wait for a controller quorum that
# is already gone and only end at the SIGKILL of KAFKA_STOP_TIMEOUT_S.
do_stop() {
  local i pids=()
  for i in $(seq 1 "$KAFKA_CLUSTER_SIZE"); do
    node_vars "$i"
    stop_pidfile kafka "$PIDFILE" "$MAIN_CLASS" "$KAFKA_STOP_TIMEOUT_S" &
    pids+=($!)
  done
  local rc=0
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  return "$rc"
}

# The node number argument of the *-node commands. @exits 2 when missing or out of range.
node_arg() {
  [[ "${1:-}" =~ ^[1-9]$ ]] && (($1 <= KAFKA_CLUSTER_SIZE)) ||
    { echo "usage: $0 start-node|stop-node|kill-node N (1..$KAFKA_CLUSTER_SIZE)" >&2; exit 2; }
}

do_start_node() {
  command -v java >/dev/null || die kafka "java not found: install a JRE 17 (apt-get install -y openjdk-17-jre-headless)"
  ensure_tsx kafka
  resolve_jars
  launch_node "$1"
  wait_ready "$(local_brokers)" "$1"
  say kafka "node $1 ready on 127.0.0.1:$(node_port "$1")"
}

do_stop_node() {
  node_vars "$1"
  stop_pidfile kafka "$PIDFILE" "$MAIN_CLASS" "$KAFKA_STOP_TIMEOUT_S"
}

# A crash, not a shutdown: SIGKILL to the node's JVM (the drills' broker loss).
do_kill_node() {
  node_vars "$1"
  if ! pid_alive "$PIDFILE" "$MAIN_CLASS"; then
    say kafka "node $1 not running"
    return 0
  fi
  kill -KILL "$(cat "$PIDFILE")"
  say kafka "node $1 (pid $(cat "$PIDFILE")) killed"
}

do_status() {
  if external_broker; then
    ensure_tsx kafka
    if "$TSX" "$ROOT/scripts/wait-kafka.ts" --timeout-ms 5000 >&2; then return 0; fi
    say kafka "external broker $KAFKA_BROKERS not reachable"
    return 3
  fi
  local i rc=0
  for i in $(seq 1 "$KAFKA_CLUSTER_SIZE"); do
    node_vars "$i"
    if pid_alive "$PIDFILE" "$MAIN_CLASS"; then
      if port_open "$NPORT"; then
        say kafka "running (pid $(cat "$PIDFILE")) on 127.0.0.1:$NPORT"
      else
        say kafka "process $(cat "$PIDFILE") alive but port $NPORT closed (starting or stopping)"
      fi
    else
      if ((KAFKA_CLUSTER_SIZE == 1)); then say kafka "not running"; else say kafka "node $i not running"; fi
      rc=3
    fi
  done
  return "$rc"
}

cmd="${1:-}"
case "$cmd" in
start | stop)
  if external_broker; then
    say kafka "KAFKA_BROKERS=$KAFKA_BROKERS is set: using that external broker, nothing to $cmd"
    exit 0
  fi
  with_lock kafka "$CDIR/.lock" 180 "do_$cmd"
  ;;
start-node | stop-node | kill-node)
  node_arg "${2:-}"
  with_lock kafka "$CDIR/.lock" 180 "do_${cmd//-/_}" "$2"
  ;;
brokers)
  local_brokers
  ;;
status)
  rc=0
  do_status || rc=$?
  exit "$rc"
  ;;
logs)
  node_vars "${KAFKA_NODE:-1}"
  [[ -f "$LOGFILE" ]] || die kafka "no log yet at $LOGFILE"
  if [[ "${2:-}" == "-f" ]]; then exec tail -n 100 -f "$LOGFILE"; else exec tail -n 100 "$LOGFILE"; fi
  ;;
*)
  echo "usage: $0 start|stop|status|logs [-f]|brokers, or start-node|stop-node|kill-node N" >&2
  exit 2
  ;;
esac
