#!/usr/bin/env bash
# Starts a Fjord broker, taking the same arguments as Kafka's script:
#   bin/kafka-server-start.sh [-daemon] config/server.properties [--override property=value]*
# -daemon runs the broker in the background with its output in $LOG_DIR/fjordServer.out
# (LOG_DIR defaults to ./logs next to this script's parent, like Kafka's).
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
  nohup node "$MAIN" "$@" >"$LOG_DIR/fjordServer.out" 2>&1 </dev/null &
  exit 0
fi

exec node "$MAIN" "$@"
