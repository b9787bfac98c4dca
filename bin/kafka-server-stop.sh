#!/usr/bin/env bash
# Stops Fjord brokers on this machine (SIGTERM, then a bounded wait for each to exit).
#   kafka-server-stop.sh             every Fjord broker on the machine, as Kafka's script does;
#                                    prints each broker it stops
#   kafka-server-stop.sh <dir>...    only the broker holding <dir>: one of its log.dirs (a running
#                                    broker keeps its pid in <dir>/.lock, removed on a clean exit),
#                                    or the LOG_DIR it was started with -daemon in (pid file
#                                    <dir>/fjordServer.pid)
# FJORD_STOP_TIMEOUT (seconds, default 60) bounds the wait for each broker; the script says how
# long it waited. Exit 0 when every broker asked for stopped, 1 otherwise (none running, a
# directory no running broker holds, or a broker that did not stop in time).
set -uo pipefail

TIMEOUT="${FJORD_STOP_TIMEOUT:-60}"

# The command line of a process, empty when it is gone.
cmdline_of() { ps -o args= -p "$1" 2>/dev/null || true; }
is_fjord_broker() { [[ "$(cmdline_of "$1")" =~ node.*server/main\.(js|ts) ]]; }

# Sends SIGTERM to each pid and waits for all of them, reporting each; returns 1 if any stayed.
stop_pids() {
  local pid start now ms rc=0
  for pid in "$@"; do
    echo "Stopping Fjord broker (pid $pid): $(cmdline_of "$pid")"
    kill -s TERM "$pid" 2>/dev/null || true
  done
  echo "Waiting up to ${TIMEOUT}s (FJORD_STOP_TIMEOUT) for $# broker(s) to stop"
  start=$(date +%s%3N)
  for pid in "$@"; do
    while kill -0 "$pid" 2>/dev/null; do
      now=$(date +%s%3N)
      if [ $(( now - start )) -ge $(( TIMEOUT * 1000 )) ]; then
        echo "Fjord broker (pid $pid) did not stop within ${TIMEOUT}s (FJORD_STOP_TIMEOUT)" >&2
        rc=1
        continue 2
      fi
      sleep 0.1
    done
    ms=$(( $(date +%s%3N) - start ))
    printf 'Fjord broker (pid %s) stopped after %d.%01ds\n' "$pid" $(( ms / 1000 )) $(( ms % 1000 / 100 ))
  done
  return $rc
}

if [ $# -eq 0 ]; then
  PIDS=$(pgrep -f 'node .*dist/server/main\.js' || true)
  if [ -z "$PIDS" ]; then
    echo "No kafka server to stop"
    exit 1
  fi
  # shellcheck disable=SC2086
  stop_pids $PIDS
  exit $?
fi

PIDS=()
for dir in "$@"; do
  if [ ! -d "$dir" ]; then
    echo "$dir is not a directory (give one of the broker's log.dirs, or its -daemon LOG_DIR)" >&2
    exit 1
  fi
  if [ -f "$dir/.lock" ]; then file="$dir/.lock"
  elif [ -f "$dir/fjordServer.pid" ]; then file="$dir/fjordServer.pid"
  else
    echo "No Fjord broker is running with $dir: it has no .lock (log dir) or fjordServer.pid (-daemon LOG_DIR)" >&2
    exit 1
  fi
  pid=$(head -n 1 "$file" | tr -dc '0-9')
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    echo "No Fjord broker is running with $dir: $file names pid ${pid:-none}, which is not running" >&2
    exit 1
  fi
  if ! is_fjord_broker "$pid"; then
    echo "No Fjord broker is running with $dir: pid $pid in $file is not a Fjord broker ($(cmdline_of "$pid"))" >&2
    exit 1
  fi
  PIDS+=("$pid")
done
# The same broker named twice (two of its log dirs) is stopped once.
mapfile -t PIDS < <(printf '%s\n' "${PIDS[@]}" | sort -un)
stop_pids "${PIDS[@]}"
