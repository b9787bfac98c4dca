#!/usr/bin/env bash
# The ZooKeeper command-line client, as Kafka's zookeeper-shell.sh, on Debian's ZooKeeper
# (apt-get install zookeeper):
#   bin/zookeeper-shell.sh host:port[/chroot]            interactive (ls, get, create, ...; quit)
#   bin/zookeeper-shell.sh host:port[/chroot] ls /brokers/ids   one command, then exit
# Its log lines (warnings and worse) go to stderr, less the "Exiting JVM" line every run ends with. FJORD_ZOOKEEPER_JAR names another zookeeper.jar.
set -euo pipefail

ZK_JAR="${FJORD_ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}"
if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  echo "USAGE: $0 zookeeper_host:port[/path] [args...]"
  [ $# -lt 1 ] && exit 1
  exit 0
fi
if [ ! -f "$ZK_JAR" ]; then
  echo "zookeeper-shell.sh: Debian's ZooKeeper is not installed ($ZK_JAR is missing): apt-get install zookeeper" >&2
  exit 1
fi
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
if ! command -v "$JAVA" >/dev/null; then
  echo "zookeeper-shell.sh: no java to run ZooKeeper's client with (install a JRE, or set JAVA_HOME)" >&2
  exit 1
fi
for arg in "$@"; do
  if [ "$arg" = "-zk-tls-config-file" ]; then
    echo "zookeeper-shell.sh: -zk-tls-config-file is not supported (Fjord's brokers talk to ZooKeeper without TLS)" >&2
    exit 1
  fi
done

# slf4j-simple (Debian's libslf4j-java, which ZooKeeper depends on) writes to stderr; without a
# binding SLF4J prints its own warnings on every run.
CP="${FJORD_ZOOKEEPER_CONF:-/etc/zookeeper/conf}:$ZK_JAR:/usr/share/java/slf4j-simple.jar"
# shellcheck disable=SC2086
exec "$JAVA" ${KAFKA_HEAP_OPTS:--Xmx256M} -cp "$CP" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.util.ServiceUtils=off \
  org.apache.zookeeper.ZooKeeperMain -server "$@"
