#!/usr/bin/env bash
# Search throughput, workload path against replay path (issue 14, item 6): bench/throughput/README.md.
exec python3 "$(dirname "$0")/run.py" "$@"
