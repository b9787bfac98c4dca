#!/usr/bin/env bash
# kafka-get-offsets.sh (see src/cli/kafka-get-offsets.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-get-offsets.js" "$@"
