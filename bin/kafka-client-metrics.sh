#!/usr/bin/env bash
# kafka-client-metrics.sh (see src/cli/kafka-client-metrics.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-client-metrics.js" "$@"
