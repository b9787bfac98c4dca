#!/usr/bin/env bash
# Brings the real peers the tests talk to: Debian's kcat, Python Kafka clients, ZooKeeper, Redis,
# iperf3, Burrow, Prometheus, Chromium, and the bench's peers (install-bench-deps.sh). Installs only what is missing; needs root (or sudo) the first time on a fresh machine.
set -euo pipefail
need=()
command -v kcat >/dev/null || need+=(kcat)
/usr/bin/python3 -c 'import confluent_kafka' 2>/dev/null || need+=(python3-confluent-kafka)
/usr/bin/python3 -c 'import kafka' 2>/dev/null || need+=(python3-kafka)
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
command -v redis-server >/dev/null || need+=(redis-server)
command -v iperf3 >/dev/null || need+=(iperf3)
command -v lz4 >/dev/null || need+=(lz4)
command -v zstd >/dev/null || need+=(zstd)
command -v Burrow >/dev/null || need+=(burrow)
command -v prometheus >/dev/null && command -v promtool >/dev/null || need+=(prometheus)
command -v chromium >/dev/null || need+=(chromium)   # the console's browser tests (playwright-core drives it)
# Every npm package, dev dependencies too: the README's first command (npm ci --omit=dev) leaves
# those out, and the tests, the linter and tsx are among them.
node -e 'const p = require("./package.json"); const fs = require("fs");
  const all = Object.keys({ ...p.dependencies, ...p.devDependencies });
  process.exit(all.every((d) => fs.existsSync(`node_modules/${d}/package.json`)) ? 0 : 1)' || npm ci
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need[@]}" >/dev/null
  # Where systemd runs, the package starts a server on :9090 (and its node exporter on :9100);
  # the tests start their own prometheus on free ports, so none is left running.
  if [[ " ${need[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now prometheus prometheus-node-exporter >/dev/null 2>&1 || true
  fi
fi
# npm test's smoke run of `npm run bench` compiles bench/rdkafka-perf.c; the bench's own peers
# (NATS, libnats, gcc, librdkafka-dev) come with it so that run installs nothing mid-test.
bash "$(dirname "$0")/install-bench-deps.sh"
