#!/usr/bin/env bash
# kafka-run-class.sh <class> [args]: runs a Kafka tool by its class name (kafka.tools.GetOffsetShell,
# kafka.admin.ConsumerGroupCommand, ...; the table is src/cli/common/tool-classes.ts, see
# docs/tools.md). The tool replaces this script, as its own kafka-*.sh would run it; kafka.Kafka is
# the broker, as kafka-server-start.sh. Other classes: src/cli/kafka-run-class.ts.
DIR="$(dirname "$(readlink -f "$0")")"
if [ "${1:-}" = "kafka.Kafka" ]; then
  shift
  exec "$DIR/kafka-server-start.sh" "$@"
fi
if [[ "${1:-}" == *.* ]]; then
  TOOL=$(node --input-type=module -e 'const { TOOL_CLASSES } = await import(process.argv[1]); console.log(TOOL_CLASSES[process.argv[2]] ?? "")' \
    "$DIR/../dist/cli/common/tool-classes.js" "$1" 2>/dev/null)
  if [ -n "$TOOL" ] && [ -f "$DIR/../dist/cli/$TOOL.js" ]; then
    shift
    exec node "$DIR/../dist/cli/$TOOL.js" "$@"
  fi
fi
exec node "$DIR/../dist/cli/kafka-run-class.js" "$@"
