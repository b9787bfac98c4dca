#!/usr/bin/env bash
# kafka-broker-api-versions.sh (see src/cli/kafka-broker-api-versions.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-broker-api-versions.js" "$@"
