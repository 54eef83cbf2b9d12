#!/usr/bin/env bash
# Agreement of replay and the workload (issue 14, item 5): bench/agreement/README.md.
exec python3 "$(dirname "$0")/run.py" "$@"
