#!/usr/bin/env bash
# Stops ZooKeeper servers started with bin/zookeeper-server-start.sh (SIGTERM, or $SIGNAL).
#   zookeeper-server-stop.sh            every ZooKeeper server (QuorumPeerMain) on the machine,
#                                       whoever started it, as Kafka's script does; it does not
#                                       wait for them to exit
#   zookeeper-server-stop.sh <arg>...   only the server started from the properties file <arg>
#                                       (the same file, however its path was spelled), or the one
#                                       started with -daemon in the LOG_DIR <arg> (its
#                                       zookeeper.pid); waits up to FJORD_STOP_TIMEOUT seconds
#                                       (default 60) for it to exit
# Exit 0 when every server asked for stopped, 1 otherwise (none running, an argument no running
# server was started from, or a server that did not stop in time).
set -uo pipefail

SIGNAL="${SIGNAL:-TERM}"
TIMEOUT="${FJORD_STOP_TIMEOUT:-60}"
MAIN=org.apache.zookeeper.server.quorum.QuorumPeerMain

all_servers() { pgrep -f "java .*$MAIN" || true; }
cmdline_of() { ps -o args= -p "$1" 2>/dev/null || true; }

if [ $# -eq 0 ]; then
  PIDS=$(all_servers)
  if [ -z "$PIDS" ]; then
    echo "No zookeeper server to stop"
    exit 1
  fi
  # shellcheck disable=SC2086
  kill -s "$SIGNAL" $PIDS
  exit 0
fi

# The properties file a server was started with: its last argument, read from its own directory.
config_of() {
  local last
  last=$(tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | tail -n 1)
  [ -n "$last" ] || return 0
  (cd "/proc/$1/cwd" 2>/dev/null && readlink -f -- "$last") || true
}

PIDS=()
for arg in "$@"; do
  pid=""
  if [ -d "$arg" ]; then
    file="$arg/zookeeper.pid"
    if [ ! -f "$file" ]; then
      echo "No zookeeper server was started with -daemon in $arg: it has no zookeeper.pid" >&2
      exit 1
    fi
    pid=$(head -n 1 "$file" | tr -dc '0-9')
    if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null || [[ "$(cmdline_of "$pid")" != *"$MAIN"* ]]; then
      echo "No zookeeper server is running with $arg: $file names pid ${pid:-none}, which is not a running ZooKeeper server" >&2
      exit 1
    fi
  elif [ -f "$arg" ]; then
    want=$(readlink -f -- "$arg")
    for p in $(all_servers); do
      if [ "$(config_of "$p")" = "$want" ]; then pid=$p; fi
    done
    if [ -z "$pid" ]; then
      echo "No zookeeper server is running from $arg" >&2
      exit 1
    fi
  else
    echo "$arg is neither a zookeeper.properties file nor a LOG_DIR" >&2
    exit 1
  fi
  PIDS+=("$pid")
done

mapfile -t PIDS < <(printf '%s\n' "${PIDS[@]}" | sort -un)
kill -s "$SIGNAL" "${PIDS[@]}" 2>/dev/null || true
deadline=$(( $(date +%s) + TIMEOUT ))
rc=0
for pid in "${PIDS[@]}"; do
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "ZooKeeper server (pid $pid) did not stop within ${TIMEOUT}s (FJORD_STOP_TIMEOUT)" >&2
      rc=1
      continue 2
    fi
    sleep 0.1
  done
done
exit $rc
