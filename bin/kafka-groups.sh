#!/usr/bin/env bash
# kafka-groups.sh (see src/cli/kafka-groups.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-groups.js" "$@"
