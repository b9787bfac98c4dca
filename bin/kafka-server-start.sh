#!/usr/bin/env bash
# Starts a Fjord broker, taking the same arguments as Kafka's script:
#   bin/kafka-server-start.sh [-daemon] config/server.properties [--override property=value]*
# -daemon runs the broker in the background with its output in $LOG_DIR/fjordServer.out and its
# pid in $LOG_DIR/fjordServer.pid (removed when the broker exits); LOG_DIR defaults to ./logs next
# to this script's parent, like Kafka's. Several brokers on one machine each need their own
# LOG_DIR. Stop one with bin/kafka-server-stop.sh <one of its log.dirs, or its LOG_DIR>.
# Requires a build: npm run build (creates dist/).
set -euo pipefail

DIR="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
MAIN="$DIR/../dist/server/main.js"

if [ $# -lt 1 ]; then
  echo "USAGE: $0 [-daemon] server.properties [--override property=value]*" >&2
  exit 1
fi
if [ ! -f "$MAIN" ]; then
  echo "Fjord is not built: $MAIN is missing (run npm run build)" >&2
  exit 1
fi

# V8's first old-generation limit, in MB. By default it is sized from the live heap (about 20 MB
# for an idle broker, so a ~45 MB limit), which a broker under produce load reaches again within
# a second: the young generation promotes in-flight requests, and V8 starts marking as soon as the
# headroom is below the young generation's size. That gave 4-15 mark-compacts (5-150 ms each)
# per 10 s at 40,000-60,000 records/s: the p99.9 latency tail. With 64 MB: none in 10 s, RSS the
# same (bench/RESULTS.md, "Issue 26: latency at 25/50/75% of max load"). FJORD_HEAP_OPTS replaces it (node
# flags, as KAFKA_HEAP_OPTS holds Kafka's JVM ones; NODE_OPTIONS does not take this V8 flag).
read -r -a NODE_HEAP <<<"${FJORD_HEAP_OPTS---initial-old-space-size=64}"

if [ "$1" = "-daemon" ]; then
  shift
  LOG_DIR="${LOG_DIR:-$DIR/../logs}"
  mkdir -p "$LOG_DIR"
  PID_FILE="$LOG_DIR/fjordServer.pid"
  if [ -f "$PID_FILE" ]; then
    old=$(head -n 1 "$PID_FILE" | tr -dc '0-9')
    if [ -n "$old" ] && kill -0 "$old" 2>/dev/null && [[ "$(ps -o args= -p "$old" 2>/dev/null)" =~ server/main\. ]]; then
      echo "A Fjord broker (pid $old) already runs with LOG_DIR=$LOG_DIR; give each broker on this machine its own LOG_DIR" >&2
      exit 1
    fi
  fi
  # The broker removes its pid file when it exits (FJORD_PID_FILE).
  FJORD_PID_FILE="$PID_FILE" nohup node "${NODE_HEAP[@]}" "$MAIN" "$@" >"$LOG_DIR/fjordServer.out" 2>&1 </dev/null &
  echo "$!" >"$PID_FILE"
  exit 0
fi

exec node "${NODE_HEAP[@]}" "$MAIN" "$@"
