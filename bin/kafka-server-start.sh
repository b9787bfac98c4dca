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

# Node flags for the latency tail (issue 26; bench/RESULTS.md, "Issue 26: latency at 25/50/75% of
# max load"), each measured beside the default in the same run, throughput and CPU per MB unchanged:
# - FJORD_HEAP_OPTS (default --initial-old-space-size=64; as KAFKA_HEAP_OPTS holds the JVM's heap
#   flags): V8 sizes its first old-generation limit from an idle broker's ~20 MB heap and starts
#   marking whenever the headroom is below the young generation's size, so under produce load it
#   mark-compacted about once a second (5-150 ms each, freeing almost nothing); with 64 MB, none
#   in most 10-40 s windows, RSS the same. (NODE_OPTIONS does not take this V8 flag.)
# - FJORD_PERFORMANCE_OPTS (default --no-parallel-scavenge; as KAFKA_JVM_PERFORMANCE_OPTS holds
#   the JVM's GC flags): a young-generation collection shared with V8's helper threads waits for
#   them when the clients keep the other cores busy: scavenge pauses up to 37-117 ms against
#   2.2-5.6 ms done on the event loop alone (16 MB young generation, ~1 ms).
read -r -a NODE_FLAGS <<<"${FJORD_HEAP_OPTS---initial-old-space-size=64} ${FJORD_PERFORMANCE_OPTS---no-parallel-scavenge}"

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
  FJORD_PID_FILE="$PID_FILE" nohup node "${NODE_FLAGS[@]}" "$MAIN" "$@" >"$LOG_DIR/fjordServer.out" 2>&1 </dev/null &
  echo "$!" >"$PID_FILE"
  exit 0
fi

exec node "${NODE_FLAGS[@]}" "$MAIN" "$@"
