#!/usr/bin/env bash
# kafka-e2e-latency.sh (see src/cli/kafka-e2e-latency.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-e2e-latency.js" "$@"
