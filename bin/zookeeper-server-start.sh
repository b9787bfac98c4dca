#!/usr/bin/env bash
# Starts a ZooKeeper server for Fjord's cluster mode, as Kafka's zookeeper-server-start.sh, on
# Debian's ZooKeeper (apt-get install zookeeper):
#   bin/zookeeper-server-start.sh [-daemon] config/zookeeper.properties
# In the foreground its log goes to stdout. -daemon runs it in the background with its output in
# $LOG_DIR/zookeeper.out and its pid in $LOG_DIR/zookeeper.pid; LOG_DIR defaults to ./logs next to
# this script's parent, like Kafka's. KAFKA_HEAP_OPTS (default -Xmx512M -Xms512M, Kafka's) sizes
# the JVM. Stop it with bin/zookeeper-server-stop.sh <its properties file, or its LOG_DIR>.
# FJORD_ZOOKEEPER_JAR names another zookeeper.jar.
set -euo pipefail

DIR="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
ZK_JAR="${FJORD_ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}"
MAIN=org.apache.zookeeper.server.quorum.QuorumPeerMain

if [ $# -lt 1 ] || { [ "$1" = "-daemon" ] && [ $# -lt 2 ]; }; then
  echo "USAGE: $0 [-daemon] zookeeper.properties"
  exit 1
fi
if [ ! -f "$ZK_JAR" ]; then
  echo "zookeeper-server-start.sh: Debian's ZooKeeper is not installed ($ZK_JAR is missing): apt-get install zookeeper" >&2
  exit 1
fi
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
if ! command -v "$JAVA" >/dev/null; then
  echo "zookeeper-server-start.sh: no java to run ZooKeeper with (install a JRE, or set JAVA_HOME)" >&2
  exit 1
fi
DAEMON=false
if [ "$1" = "-daemon" ]; then
  DAEMON=true
  shift
fi
CONFIG="$1"
if [ ! -f "$CONFIG" ]; then
  echo "zookeeper-server-start.sh: $CONFIG is not a file (give a zookeeper.properties, as config/zookeeper.properties)" >&2
  exit 1
fi

# slf4j-simple (Debian's libslf4j-java, which ZooKeeper depends on) writes the server's log at INFO.
CP="${FJORD_ZOOKEEPER_CONF:-/etc/zookeeper/conf}:$ZK_JAR:/usr/share/java/slf4j-simple.jar"
# The admin server (HTTP on 8080) is off unless the file turns it on: the file's admin.enableServer
# wins over this default.
read -r -a HEAP <<<"${KAFKA_HEAP_OPTS:--Xmx512M -Xms512M}"
CMD=("$JAVA" "${HEAP[@]}" -cp "$CP" -Dorg.slf4j.simpleLogger.logFile=System.out -Dorg.slf4j.simpleLogger.showDateTime=true
  -Dzookeeper.admin.enableServer=false "$MAIN" "$CONFIG")

if ! $DAEMON; then
  exec "${CMD[@]}"
fi
LOG_DIR="${LOG_DIR:-$DIR/../logs}"
mkdir -p "$LOG_DIR"
PID_FILE="$LOG_DIR/zookeeper.pid"
if [ -f "$PID_FILE" ]; then
  old=$(head -n 1 "$PID_FILE" | tr -dc '0-9')
  if [ -n "$old" ] && kill -0 "$old" 2>/dev/null && [[ "$(ps -o args= -p "$old" 2>/dev/null)" == *"$MAIN"* ]]; then
    echo "zookeeper-server-start.sh: a ZooKeeper server (pid $old) already runs with LOG_DIR=$LOG_DIR; give each its own LOG_DIR" >&2
    exit 1
  fi
fi
nohup "${CMD[@]}" >"$LOG_DIR/zookeeper.out" 2>&1 </dev/null &
echo "$!" >"$PID_FILE"
