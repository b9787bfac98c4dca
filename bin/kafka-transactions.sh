#!/usr/bin/env bash
# kafka-transactions.sh (see src/cli/kafka-transactions.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-transactions.js" "$@"
