#!/usr/bin/env bash
# Brings the peers `npm run bench` measures Fjord beside, and what builds its load generators:
# Debian's nats-server (NATS JetStream), libnats-dev (bench/nats-perf.c), redis-server (Redis
# Streams, redis-benchmark, redis-cli), iperf3 (loopback limit), librdkafka-dev
# (bench/rdkafka-perf.c), gcc, python3 (evicting log files from the page cache). Installs only
# what is missing; needs root (or sudo) the first time on a fresh machine.
set -euo pipefail
need=()
command -v nats-server >/dev/null || need+=(nats-server)
[ -f /usr/include/nats/nats.h ] || need+=(libnats-dev)
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || need+=(redis-server redis-tools)
command -v iperf3 >/dev/null || need+=(iperf3)
[ -f /usr/include/librdkafka/rdkafka.h ] || need+=(librdkafka-dev)
command -v gcc >/dev/null || need+=(gcc libc6-dev)
[ -x /usr/bin/python3 ] || need+=(python3)
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need[@]}" >/dev/null
  # Where systemd runs, the packages start servers on their default ports; the bench starts its
  # own on free ports, so none is left running.
  if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now redis-server nats-server >/dev/null 2>&1 || true
  fi
fi
