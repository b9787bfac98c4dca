#!/usr/bin/env bash
# Stops every Fjord broker running on this machine (SIGTERM, then waits for them to exit),
# like Kafka's kafka-server-stop.sh. Prints "No kafka server to stop" and exits 1 when none runs.
# FJORD_STOP_TIMEOUT (seconds, default 60) bounds the wait.
set -uo pipefail

PIDS=$(pgrep -f 'node .*dist/server/main\.js' || true)
if [ -z "$PIDS" ]; then
  echo "No kafka server to stop"
  exit 1
fi

kill -s TERM $PIDS 2>/dev/null || true

deadline=$(( $(date +%s) + ${FJORD_STOP_TIMEOUT:-60} ))
for pid in $PIDS; do
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "Fjord broker $pid did not stop within ${FJORD_STOP_TIMEOUT:-60}s" >&2
      exit 1
    fi
    sleep 0.2
  done
done
