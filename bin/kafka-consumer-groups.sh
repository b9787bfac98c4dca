#!/usr/bin/env bash
# kafka-consumer-groups.sh (see src/cli/kafka-consumer-groups.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-consumer-groups.js" "$@"
