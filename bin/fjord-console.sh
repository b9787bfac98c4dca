#!/usr/bin/env bash
# fjord-console.sh (see src/cli/fjord-console.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/fjord-console.js" "$@"
