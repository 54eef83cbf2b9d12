#!/usr/bin/env bash
# kloop optimize with the builtin proposer on bundled examples, on the GPU machine, then the per-example
# results table (bench/gpu/results.py):
#   source .gpu/env.sh && bench/gpu/optimize.sh KLOOP_BIN OUT_DIR [CANDIDATES] [TIME_BUDGET_S] [example...]
# Leaves OUT_DIR/<example>/{report.md,accepted.patch}, OUT_DIR/<example>.db (journal), OUT_DIR/<example>.log,
# OUT_DIR/cmd-<example>.txt (the exact command) and OUT_DIR/results.md (the table of every example given).
# The ceilings are measured once, by the first optimize, into OUT_DIR/cache (KLOOP_CACHE_DIR).
set -uo pipefail
kloop=$1; out=$2; cands=${3:-6}; budget=${4:-120}; shift 4 2>/dev/null || shift $#
examples=${*:-saxpy matmul reduction}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export KLOOP_CACHE_DIR=${KLOOP_CACHE_DIR:-$out/cache}
for ex in $examples; do
  echo "== optimize $ex (max $cands candidates, $budget s)"
  start=$(date +%s)
  cmd=("$kloop" optimize --config "examples/$ex/.kloop.yaml" --journal "$out/$ex.db" -o "$out/$ex"
       --max-candidates "$cands" --time-budget "$budget" --timing-rounds 2 --progress always -- -std=c++17)
  echo "${cmd[*]}" > "$out/cmd-$ex.txt"
  "${cmd[@]}" > "$out/$ex.log" 2>&1
  rc=$?
  echo "optimize $ex rc=$rc wall=$(( $(date +%s) - start ))s"
  tail -4 "$out/$ex.log"
done
python3 "$here/results.py" "$out" $examples | tee "$out/results.md"
