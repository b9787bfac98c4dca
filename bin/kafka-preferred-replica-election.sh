#!/usr/bin/env bash
# kafka-preferred-replica-election.sh (see src/cli/kafka-preferred-replica-election.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-preferred-replica-election.js" "$@"
