#!/usr/bin/env bash
# kafka-configs.sh (see src/cli/kafka-configs.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-configs.js" "$@"
