#!/usr/bin/env bash
# kloop optimize with the builtin proposer on bundled examples, on the GPU machine:
#   source .gpu/env.sh && bench/gpu/optimize.sh KLOOP_BIN OUT_DIR [CANDIDATES] [TIME_BUDGET_S] [example...]
# Leaves OUT_DIR/<example>/{report.md,accepted.patch}, OUT_DIR/<example>.db and OUT_DIR/<example>.log.
set -uo pipefail
kloop=$1; out=$2; cands=${3:-6}; budget=${4:-120}; shift 4 2>/dev/null || shift $#
examples=${*:-saxpy matmul reduction}
mkdir -p "$out"
export KLOOP_CACHE_DIR=${KLOOP_CACHE_DIR:-$out/cache}
for ex in $examples; do
  echo "== optimize $ex (max $cands candidates, $budget s)"
  start=$(date +%s)
  "$kloop" optimize --config examples/$ex/.kloop.yaml --journal "$out/$ex.db" -o "$out/$ex" \
    --max-candidates "$cands" --time-budget "$budget" --timing-rounds 2 -- -std=c++17 > "$out/$ex.log" 2>&1
  rc=$?
  echo "optimize $ex rc=$rc wall=$(( $(date +%s) - start ))s"
  tail -6 "$out/$ex.log"
  "$kloop" history --journal "$out/$ex.db" > "$out/$ex.history.txt" 2>&1
  tail -12 "$out/$ex.history.txt"
done
