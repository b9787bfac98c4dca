#!/usr/bin/env bash
# A local Fjord cluster to try cluster mode and failover: one ZooKeeper (Debian's zookeeper
# package) and three brokers (broker.id 0, 1, 2) on 127.0.0.1, everything in one folder.
# Commands and options: usage() below (fjord-local-cluster.sh --help).
# DIR holds cluster.conf (the ports start used, so the other commands need only --dir),
# zookeeper/ (zoo.cfg, data/, zookeeper.log, zookeeper.pid) and broker-<id>/ (kafka-logs/ = its
# log.dirs, fjordServer.out = its log, fjordServer.pid, overrides = the --override values it runs
# with, one a line). The brokers run config/server.properties with their id, port, log.dirs,
# zookeeper.connect, metrics.listener (each broker its own port: 9404, 9405, 9406 by default,
# --metrics-ports; /metrics, /health/live, /health/ready) and start's --override values as
# overrides; nothing else is hidden, so
# __consumer_offsets and __transaction_state get the shipped config's 3 replicas and
# min.insync.replicas 2, and any one broker may fail without a group or transaction losing its
# coordinator for longer than the failover.
# start returns once every broker is registered in ZooKeeper; stop stops the brokers one at a
# time (each a controlled shutdown), then ZooKeeper: only the processes named in DIR's pid files.
# FJORD_CLUSTER_START_TIMEOUT (seconds, default 120) bounds start's and start-broker's wait for
# the registrations. Requires a build (npm run build) and Debian's zookeeper package (and java).
set -uo pipefail

BIN="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
ZK_JAR=/usr/share/java/zookeeper.jar
ZKCLI=/usr/share/zookeeper/bin/zkCli.sh
TOOL=fjord-local-cluster.sh
USAGE="USAGE: $TOOL start|status|stop|stop-broker N|kill-broker N|start-broker N|help [--dir DIR] [--zookeeper-port PORT] [--ports P0,P1,P2] [--metrics-ports M0,M1,M2|none] [--override KEY=VALUE]..."

usage() {
  cat <<USAGE_TEXT
$USAGE
A local Fjord cluster: one ZooKeeper and three brokers (ids 0, 1, 2) on 127.0.0.1.
  start            start ZooKeeper and the brokers; returns once every broker is registered
  status           ZooKeeper and each broker: running (pid, log) or not running;
                   exit 1 when any is not running
  stop             stop the brokers one at a time (controlled shutdown), then ZooKeeper
  stop-broker N    controlled shutdown of broker N (its leaderships move first); waits for it
  kill-broker N    kill -9 of broker N, as a crash; waits until it is gone
  start-broker N   start broker N again with the settings start gave it; waits until it is
                   registered in ZooKeeper
  help             this text (also -h, --help)
Options:
  --dir DIR               the cluster's folder (default ./data/local-cluster)
  --zookeeper-port PORT   start: ZooKeeper's port (default 2181)
  --ports P0,P1,P2        start: the brokers' ports, one broker per port (default 9092,9093,9094)
  --metrics-ports M0,M1,M2|none
                          start: each broker's metrics.listener port (http://127.0.0.1:M:
                          /metrics, /health/live, /health/ready; default 9404,9405,9406);
                          none: no metrics listener
  --override KEY=VALUE    start: a server.properties setting for every broker (repeatable),
                          kept in DIR so that start-broker uses it too
The other commands read what start recorded in DIR. __consumer_offsets and __transaction_state
get 3 replicas and min.insync.replicas 2 (config/server.properties): any one broker may fail.
USAGE_TEXT
}

die() { echo "$*" >&2; exit 1; }
# A usage mistake: one line saying what is wrong; exit 2.
usage_error() { echo "$TOOL: $* (see $TOOL --help)" >&2; exit 2; }

cmd="${1:-}"
[ -n "$cmd" ] || usage_error "a command is required"
shift
BROKER=
case "$cmd" in
  help|-h|--help) usage; exit 0 ;;
  start|stop|status) ;;
  stop-broker|kill-broker|start-broker)
    BROKER="${1:-}"
    [[ "$BROKER" =~ ^[0-9]+$ ]] || usage_error "$cmd needs a broker id (0, 1, 2)"
    shift ;;
  *) usage_error "unknown command $cmd" ;;
esac
DIR=./data/local-cluster
ZK_PORT=2181
PORTS=9092,9093,9094
METRICS_PORTS=9404,9405,9406
OVERRIDES=()
# Option $1 needs a value: present, not empty, not another option.
need_value() {
  [ $# -ge 2 ] && [ -n "$2" ] && [[ "$2" != --* ]] || usage_error "option $1 needs a value"
}
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --dir) need_value "$@"; DIR="$2"; shift 2 ;;
    --zookeeper-port) need_value "$@"; ZK_PORT="$2"; shift 2 ;;
    --ports) need_value "$@"; PORTS="$2"; shift 2 ;;
    --metrics-ports) need_value "$@"; METRICS_PORTS="$2"; shift 2 ;;
    --override)
      need_value "$@"
      [[ "$2" =~ ^[A-Za-z0-9._-]+=.*$ ]] || usage_error "--override needs KEY=VALUE, not $2"
      OVERRIDES+=("$2"); shift 2 ;;
    *) usage_error "unexpected argument $1" ;;
  esac
done
[ "$cmd" = start ] || [ "${#OVERRIDES[@]}" -eq 0 ] || usage_error "--override is for start (start-broker reuses start's)"

if [ "$cmd" = start ]; then
  mkdir -p "$DIR" 2>/dev/null || die "Cannot create $DIR"
  DIR="$(cd "$DIR" && pwd)"
else
  # Reads only: a folder without cluster.conf is not a local cluster, and nothing is created.
  [ -f "$DIR/cluster.conf" ] || die "$DIR is not a local cluster (it has no cluster.conf; create one with: $TOOL start --dir $DIR)"
  DIR="$(cd "$DIR" && pwd)"
  ZK_PORT=$(sed -n 's/^zookeeper.port=//p' "$DIR/cluster.conf")
  PORTS=$(sed -n 's/^broker.ports=//p' "$DIR/cluster.conf")
  # A cluster started before metrics ports were recorded has none.
  METRICS_PORTS=$(sed -n 's/^metrics.ports=//p' "$DIR/cluster.conf")
fi
[ "$METRICS_PORTS" = none ] && METRICS_PORTS=
CONF="$DIR/cluster.conf"
IFS=, read -r -a PORT_LIST <<<"$PORTS"
IFS=, read -r -a METRICS_PORT_LIST <<<"$METRICS_PORTS"
for p in "$ZK_PORT" "${PORT_LIST[@]}" "${METRICS_PORT_LIST[@]}"; do [[ "$p" =~ ^[0-9]+$ ]] || usage_error "not a port: $p"; done
if [ "${#METRICS_PORT_LIST[@]}" -gt 0 ] && [ "${#METRICS_PORT_LIST[@]}" -ne "${#PORT_LIST[@]}" ]; then
  usage_error "--metrics-ports needs one port per broker (${#PORT_LIST[@]}), or none"
fi
if [ -n "$BROKER" ] && [ "$BROKER" -ge "${#PORT_LIST[@]}" ]; then
  usage_error "$DIR has no broker $BROKER (its brokers are 0 to $(( ${#PORT_LIST[@]} - 1 )))"
fi

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
cmdline_of() { ps -o args= -p "$1" 2>/dev/null || true; }
# The pid in a pid file, if that process is still running and is what the file says it is
# (a stale file may name a pid reused by something else).
live_pid() {
  local file="$1" pattern="$2" pid
  [ -f "$file" ] || return 1
  pid=$(head -n 1 "$file" | tr -dc '0-9')
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [[ "$(cmdline_of "$pid")" =~ $pattern ]] && echo "$pid"
}
zk_pid() { live_pid "$DIR/zookeeper/zookeeper.pid" "ZooKeeperServerMain $DIR/zookeeper/zoo.cfg"; }
broker_pid() { live_pid "$DIR/broker-$1/fjordServer.pid" 'server/main\.js'; }

# ZooKeeper answers "imok" to "ruok" once it serves (in a subshell: a failed exec redirection
# must not touch this shell's file descriptors).
zk_ok() {
  ( exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT" && printf ruok >&3 && read -r -t 2 answer <&3; [ "${answer:-}" = imok ] ) 2>/dev/null
}

start_zookeeper() {
  local zk="$DIR/zookeeper" classpath="$ZK_JAR" i
  mkdir -p "$zk/data"
  cat >"$zk/zoo.cfg" <<EOF
tickTime=2000
dataDir=$zk/data
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr
EOF
  [ -d /etc/zookeeper/conf ] && classpath="/etc/zookeeper/conf:$ZK_JAR"
  nohup java -Xmx256m -Dzookeeper.log.dir="$zk" -Dzookeeper.root.logger=INFO,CONSOLE -cp "$classpath" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$zk/zoo.cfg" >>"$zk/zookeeper.log" 2>&1 </dev/null &
  echo "$!" >"$zk/zookeeper.pid"
  for i in $(seq 1 300); do   # up to 30 s
    zk_ok && return 0
    zk_pid >/dev/null || break
    sleep 0.1
  done
  echo "ZooKeeper did not start on 127.0.0.1:$ZK_PORT; the end of $zk/zookeeper.log:" >&2
  tail -n 20 "$zk/zookeeper.log" >&2
  return 1
}

# Writes broker $1's settings (start's only): what start-broker runs it with again.
write_overrides() {
  local id="$1" b="$DIR/broker-$1" o
  mkdir -p "$b/kafka-logs"
  {
    echo "broker.id=$id"
    echo "listeners=PLAINTEXT://127.0.0.1:${PORT_LIST[$id]}"
    echo "log.dirs=$b/kafka-logs"
    echo "zookeeper.connect=127.0.0.1:$ZK_PORT"
    [ "${#METRICS_PORT_LIST[@]}" -gt 0 ] && echo "metrics.listener=http://127.0.0.1:${METRICS_PORT_LIST[$id]}"
    for o in "${OVERRIDES[@]}"; do echo "$o"; done
  } >"$b/overrides"
}

# Starts broker $1 in the background with the settings in its overrides file.
start_broker() {
  local b="$DIR/broker-$1" line args=()
  [ -f "$b/overrides" ] || { echo "$b/overrides is missing: start the cluster with $TOOL start" >&2; return 1; }
  while IFS= read -r line; do [ -n "$line" ] && args+=(--override "$line"); done <"$b/overrides"
  LOG_DIR="$b" "$BIN/kafka-server-start.sh" -daemon "$BIN/../config/server.properties" "${args[@]}"
}

# Broker ids registered in ZooKeeper, one a line (zkCli prints them as "[0, 1, 2]").
registered_ids() {
  "$ZKCLI" -server "127.0.0.1:$ZK_PORT" ls /brokers/ids 2>/dev/null | grep -E '^\[[0-9, ]*\]$' | tail -n 1 | tr -d '[] ' | tr ',' '\n'
}

# Waits until /brokers/ids lists every broker in $@; fails early when one of them died.
wait_registered() {
  local deadline id missing
  deadline=$(( $(date +%s) + ${FJORD_CLUSTER_START_TIMEOUT:-120} ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    for id in "$@"; do
      if ! broker_pid "$id" >/dev/null; then
        echo "Broker $id stopped while starting; the end of $DIR/broker-$id/fjordServer.out:" >&2
        tail -n 20 "$DIR/broker-$id/fjordServer.out" >&2
        return 1
      fi
    done
    missing=$(comm -23 <(printf '%s\n' "$@" | sort) <(registered_ids | sort))
    [ -z "$missing" ] && return 0
    sleep 0.5
  done
  echo "Broker(s) $* did not all register in ZooKeeper within ${FJORD_CLUSTER_START_TIMEOUT:-120}s (FJORD_CLUSTER_START_TIMEOUT)" >&2
  return 1
}

broker_line() {
  local id="$1" pid
  local metrics=""
  [ "${#METRICS_PORT_LIST[@]}" -gt 0 ] && metrics=", metrics http://127.0.0.1:${METRICS_PORT_LIST[$id]}/metrics"
  if pid=$(broker_pid "$id"); then echo "broker $id 127.0.0.1:${PORT_LIST[$id]}: running (pid $pid)$metrics, log $DIR/broker-$id/fjordServer.out"
  else echo "broker $id 127.0.0.1:${PORT_LIST[$id]}: not running"; return 1; fi
}

do_status() {
  local rc=0 id pid
  if pid=$(zk_pid); then echo "ZooKeeper 127.0.0.1:$ZK_PORT: running (pid $pid), log $DIR/zookeeper/zookeeper.log"
  else echo "ZooKeeper 127.0.0.1:$ZK_PORT: not running"; rc=1; fi
  for id in "${!PORT_LIST[@]}"; do broker_line "$id" || rc=1; done
  return $rc
}

do_stop() {
  local rc=0 id pid i
  # Highest id first, one at a time: each broker hands its leaderships over before the next goes.
  for (( id=${#PORT_LIST[@]}-1; id>=0; id-- )); do
    if broker_pid "$id" >/dev/null; then "$BIN/kafka-server-stop.sh" "$DIR/broker-$id" || rc=1
    else echo "broker $id: not running"; fi
  done
  if pid=$(zk_pid); then
    echo "Stopping ZooKeeper (pid $pid)"
    kill -s TERM "$pid"
    for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then echo "ZooKeeper (pid $pid) did not stop within 30s" >&2; rc=1
    else rm -f "$DIR/zookeeper/zookeeper.pid"; echo "ZooKeeper stopped"; fi
  else
    echo "ZooKeeper: not running"
  fi
  return $rc
}

do_start() {
  local id p
  [ -f "$ZK_JAR" ] && command -v java >/dev/null || die "ZooKeeper is not installed: install Debian's zookeeper package (it needs $ZK_JAR and java)"
  [ -f "$BIN/../dist/server/main.js" ] || die "Fjord is not built: run npm run build"
  if zk_pid >/dev/null; then die "A local cluster already runs in $DIR (see: $TOOL status --dir $DIR)"; fi
  for id in "${!PORT_LIST[@]}"; do broker_pid "$id" >/dev/null && die "Broker $id of $DIR is still running (stop it: $TOOL stop --dir $DIR)"; done
  for p in "$ZK_PORT" "${PORT_LIST[@]}" "${METRICS_PORT_LIST[@]}"; do port_open "$p" && die "Port $p on 127.0.0.1 is in use (choose others with --zookeeper-port / --ports / --metrics-ports)"; done
  printf 'zookeeper.port=%s\nbroker.ports=%s\nmetrics.ports=%s\n' "$ZK_PORT" "$PORTS" "${METRICS_PORTS:-none}" >"$CONF"
  start_zookeeper || exit 1
  for id in "${!PORT_LIST[@]}"; do
    write_overrides "$id"
    start_broker "$id" || die "Broker $id did not start"
  done
  if ! wait_registered "${!PORT_LIST[@]}"; then
    echo "Stop what did start with: $TOOL stop --dir $DIR" >&2
    exit 1
  fi
  do_status
  echo "bootstrap servers: $(printf '127.0.0.1:%s,' "${PORT_LIST[@]}" | sed 's/,$//'); zookeeper.connect: 127.0.0.1:$ZK_PORT"
}

do_stop_broker() {
  broker_pid "$BROKER" >/dev/null || die "broker $BROKER of $DIR is not running"
  # kafka-server-stop.sh DIR: SIGTERM to this broker only (a controlled shutdown), and it waits.
  "$BIN/kafka-server-stop.sh" "$DIR/broker-$BROKER"
}

do_kill_broker() {
  local pid i
  pid=$(broker_pid "$BROKER") || die "broker $BROKER of $DIR is not running"
  echo "Killing broker $BROKER (kill -9, pid $pid)"
  kill -s KILL "$pid"
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && die "broker $BROKER (pid $pid) is still there 10s after kill -9"
  # A killed broker cannot remove its pid file; its ZooKeeper registration goes when its session
  # expires (zookeeper.session.timeout.ms), and then the controller moves its leaderships.
  rm -f "$DIR/broker-$BROKER/fjordServer.pid"
  echo "broker $BROKER killed"
}

do_start_broker() {
  zk_pid >/dev/null || die "ZooKeeper of $DIR is not running (start the cluster with: $TOOL start --dir $DIR)"
  broker_pid "$BROKER" >/dev/null && die "broker $BROKER of $DIR is already running"
  port_open "${PORT_LIST[$BROKER]}" && die "Port ${PORT_LIST[$BROKER]} on 127.0.0.1 is in use"
  [ "${#METRICS_PORT_LIST[@]}" -gt 0 ] && port_open "${METRICS_PORT_LIST[$BROKER]}" && die "Port ${METRICS_PORT_LIST[$BROKER]} on 127.0.0.1 is in use"
  # After a kill -9 its registration stays until its ZooKeeper session expires; a broker started
  # before that is refused (as Kafka's: the id is registered by another session), so wait.
  local deadline
  deadline=$(( $(date +%s) + ${FJORD_CLUSTER_START_TIMEOUT:-120} ))
  if registered_ids | grep -qxF "$BROKER"; then
    echo "Waiting for the old ZooKeeper registration of broker $BROKER to expire (zookeeper.session.timeout.ms)"
    while registered_ids | grep -qxF "$BROKER"; do
      [ "$(date +%s)" -lt "$deadline" ] || die "broker $BROKER is still registered in ZooKeeper after ${FJORD_CLUSTER_START_TIMEOUT:-120}s (FJORD_CLUSTER_START_TIMEOUT)"
      sleep 0.5
    done
  fi
  start_broker "$BROKER" || die "Broker $BROKER did not start"
  wait_registered "$BROKER" || exit 1
  broker_line "$BROKER"
}

case "$cmd" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  stop-broker) do_stop_broker ;;
  kill-broker) do_kill_broker ;;
  start-broker) do_start_broker ;;
esac
