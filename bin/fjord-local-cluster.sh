#!/usr/bin/env bash
# A local Fjord cluster to try cluster mode: one ZooKeeper (Debian's zookeeper package) and three
# brokers (broker.id 0, 1, 2) on 127.0.0.1, everything in one folder.
#   bin/fjord-local-cluster.sh start  [--dir DIR] [--zookeeper-port PORT] [--ports P0,P1,P2]
#   bin/fjord-local-cluster.sh status [--dir DIR]
#   bin/fjord-local-cluster.sh stop   [--dir DIR]
# Defaults: DIR ./data/local-cluster, ZooKeeper on 2181, brokers on 9092,9093,9094 (one broker per
# port given). DIR holds zookeeper/ (zoo.cfg, data/, zookeeper.log, zookeeper.pid) and broker-<id>/
# (kafka-logs/ = its log.dirs, fjordServer.out = its log, fjordServer.pid); the brokers run
# config/server.properties with their id, port, log.dirs and zookeeper.connect as overrides.
# start returns once every broker is registered in ZooKeeper; stop stops the brokers one at a
# time (each a controlled shutdown), then ZooKeeper: only the processes named in DIR's pid files.
# FJORD_CLUSTER_START_TIMEOUT (seconds, default 120) bounds start's wait for the registrations.
# Requires a build (npm run build) and Debian's zookeeper package (and java).
set -uo pipefail

BIN="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
ZK_JAR=/usr/share/java/zookeeper.jar
ZKCLI=/usr/share/zookeeper/bin/zkCli.sh
USAGE="USAGE: $0 start|stop|status [--dir DIR] [--zookeeper-port PORT] [--ports P0,P1,P2]"

die() { echo "$*" >&2; exit 1; }

cmd="${1:-}"
[ -n "$cmd" ] || die "$USAGE"
shift
DIR=./data/local-cluster
ZK_PORT=2181
PORTS=9092,9093,9094
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) DIR="${2:?--dir needs a folder}"; shift 2 ;;
    --zookeeper-port) ZK_PORT="${2:?--zookeeper-port needs a port}"; shift 2 ;;
    --ports) PORTS="${2:?--ports needs a comma-separated list}"; shift 2 ;;
    *) die "Unexpected argument $1. $USAGE" ;;
  esac
done
mkdir -p "$DIR" 2>/dev/null || die "Cannot create $DIR"
DIR="$(cd "$DIR" && pwd)"
CONF="$DIR/cluster.conf"   # the ports start used, so status and stop need only --dir

# status and stop use what start recorded.
if [ "$cmd" != start ] && [ -f "$CONF" ]; then
  ZK_PORT=$(sed -n 's/^zookeeper.port=//p' "$CONF")
  PORTS=$(sed -n 's/^broker.ports=//p' "$CONF")
fi
IFS=, read -r -a PORT_LIST <<<"$PORTS"
for p in "$ZK_PORT" "${PORT_LIST[@]}"; do [[ "$p" =~ ^[0-9]+$ ]] || die "Not a port: $p. $USAGE"; done

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

start_broker() {
  local id="$1" port="$2" b="$DIR/broker-$1"
  mkdir -p "$b/kafka-logs"
  LOG_DIR="$b" "$BIN/kafka-server-start.sh" -daemon "$BIN/../config/server.properties" \
    --override "broker.id=$id" --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "log.dirs=$b/kafka-logs" --override "zookeeper.connect=127.0.0.1:$ZK_PORT"
}

# Waits until /brokers/ids lists every broker; fails early when a broker process died.
wait_registered() {
  local want deadline id
  want="[$(seq -s ', ' 0 $(( ${#PORT_LIST[@]} - 1 )))]"
  deadline=$(( $(date +%s) + ${FJORD_CLUSTER_START_TIMEOUT:-120} ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    for id in "${!PORT_LIST[@]}"; do
      if ! broker_pid "$id" >/dev/null; then
        echo "Broker $id stopped while starting; the end of $DIR/broker-$id/fjordServer.out:" >&2
        tail -n 20 "$DIR/broker-$id/fjordServer.out" >&2
        return 1
      fi
    done
    "$ZKCLI" -server "127.0.0.1:$ZK_PORT" ls /brokers/ids 2>/dev/null | grep -qxF "$want" && return 0
    sleep 0.5
  done
  echo "The brokers did not all register in ZooKeeper within ${FJORD_CLUSTER_START_TIMEOUT:-120}s (FJORD_CLUSTER_START_TIMEOUT)" >&2
  return 1
}

do_status() {
  local rc=0 id pid
  if pid=$(zk_pid); then echo "ZooKeeper 127.0.0.1:$ZK_PORT: running (pid $pid), log $DIR/zookeeper/zookeeper.log"
  else echo "ZooKeeper 127.0.0.1:$ZK_PORT: not running"; rc=1; fi
  for id in "${!PORT_LIST[@]}"; do
    if pid=$(broker_pid "$id"); then echo "broker $id 127.0.0.1:${PORT_LIST[$id]}: running (pid $pid), log $DIR/broker-$id/fjordServer.out"
    else echo "broker $id 127.0.0.1:${PORT_LIST[$id]}: not running"; rc=1; fi
  done
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
  if zk_pid >/dev/null; then die "A local cluster already runs in $DIR (see: $0 status --dir $DIR)"; fi
  for id in "${!PORT_LIST[@]}"; do broker_pid "$id" >/dev/null && die "Broker $id of $DIR is still running (stop it: $0 stop --dir $DIR)"; done
  for p in "$ZK_PORT" "${PORT_LIST[@]}"; do port_open "$p" && die "Port $p on 127.0.0.1 is in use (choose others with --zookeeper-port / --ports)"; done
  printf 'zookeeper.port=%s\nbroker.ports=%s\n' "$ZK_PORT" "$PORTS" >"$CONF"
  start_zookeeper || exit 1
  for id in "${!PORT_LIST[@]}"; do start_broker "$id" "${PORT_LIST[$id]}" || die "Broker $id did not start"; done
  if ! wait_registered; then
    echo "Stop what did start with: $0 stop --dir $DIR" >&2
    exit 1
  fi
  do_status
  echo "bootstrap servers: $(printf '127.0.0.1:%s,' "${PORT_LIST[@]}" | sed 's/,$//'); zookeeper.connect: 127.0.0.1:$ZK_PORT"
}

case "$cmd" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  *) die "$USAGE" ;;
esac
