#!/usr/bin/env bash
# kafka-replica-verification.sh (see src/cli/kafka-replica-verification.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-replica-verification.js" "$@"
