#!/usr/bin/env bash
# kafka-run-class.sh <class> [args]: runs a Kafka tool by its class name (kafka.tools.GetOffsetShell,
# kafka.admin.ConsumerGroupCommand, ...; see src/cli/kafka-run-class.ts and docs/tools.md).
# kafka.Kafka is the broker: the same as kafka-server-start.sh.
DIR="$(dirname "$(readlink -f "$0")")"
if [ "${1:-}" = "kafka.Kafka" ]; then
  shift
  exec "$DIR/kafka-server-start.sh" "$@"
fi
exec node "$DIR/../dist/cli/kafka-run-class.js" "$@"
