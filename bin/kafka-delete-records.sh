#!/usr/bin/env bash
# kafka-delete-records.sh (see src/cli/kafka-delete-records.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-delete-records.js" "$@"
