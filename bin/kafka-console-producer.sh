#!/usr/bin/env bash
# kafka-console-producer.sh (see src/cli/kafka-console-producer.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-console-producer.js" "$@"
