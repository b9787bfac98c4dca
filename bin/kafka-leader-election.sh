#!/usr/bin/env bash
# kafka-leader-election.sh (see src/cli/kafka-leader-election.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-leader-election.js" "$@"
