#!/usr/bin/env bash
# kafka-console-consumer.sh (see src/cli/kafka-console-consumer.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-console-consumer.js" "$@"
