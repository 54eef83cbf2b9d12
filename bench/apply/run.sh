#!/usr/bin/env bash
# The apply benchmark of bench/apply/README.md: a one-edit proposal on the bundled saxpy and on a
# generated 700-line cooperative-groups file, each applied with and without the run's preambles.
# Usage: bench/apply/run.sh [BUILD_DIR] [REPS] [BEFORE_KLOOP]   (defaults: build, 5, none)
# BEFORE_KLOOP: a kloop built from an earlier commit, whose whole `kloop apply` is timed alongside.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
reps=${2:-5}
before=()
if [ -n "${3:-}" ]; then before=(--before "$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/gen_coop.py" "$work/coop.cu"
cp "$root/examples/saxpy/saxpy.cu" "$root/examples/saxpy/saxpy.h" "$work/"
printf '{"rationale":"bench","edits":[{"kind":"set_constant","id":"macro:BLOCK_SIZE","value":128}]}' > "$work/saxpy.json"
printf '{"rationale":"bench","edits":[{"kind":"set_constant","id":"macro:BLOCK","value":128}]}' > "$work/coop.json"
cd "$work"
for case in saxpy coop; do
  echo "== $case.cu ($(wc -l < "$case.cu") lines)"
  "$build/bin/kloop-apply-bench" --reps "$reps" "${before[@]}" "$case.json" "$case.cu" -- -std=c++17
done
