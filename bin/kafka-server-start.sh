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
  FJORD_PID_FILE="$PID_FILE" nohup node "$MAIN" "$@" >"$LOG_DIR/fjordServer.out" 2>&1 </dev/null &
  echo "$!" >"$PID_FILE"
  exit 0
fi

exec node "$MAIN" "$@"
