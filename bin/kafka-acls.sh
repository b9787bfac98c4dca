#!/usr/bin/env bash
# kafka-acls.sh (see src/cli/kafka-acls.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-acls.js" "$@"
