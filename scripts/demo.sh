#!/usr/bin/env bash
# The README's main job: inventory of the bundled examples, then `kloop optimize` on saxpy
# with the builtin proposer, and the resulting patch; then (unless KLOOP_DEMO_REPLAY=0) one written
# proposal, shared-memory tiling of examples/matmul, replayed through the llm proposer against the
# local test server of bench/llm-replay, so that a machine with a GPU shows an accepted patch with its
# evidence. Usage: scripts/demo.sh BUILD_DIR
set -euo pipefail
BUILD_DIR=${1:?usage: scripts/demo.sh BUILD_DIR}
SRC=$(cd "$(dirname "$0")/.." && pwd)
KLOOP=$(cd "$BUILD_DIR" && pwd)/bin/kloop
OUT=${KLOOP_DEMO_OUT:-$(mktemp -d /tmp/kloop-demo.XXXXXX)}
mkdir -p "$OUT"
echo "== output directory: $OUT (inventory.json, run.db, result/) =="
echo "== kloop extract -p examples (inventory of every bundled example) =="
(cd "$SRC" && "$KLOOP" extract -p examples -o "$OUT/inventory.json") || echo "(some translation units failed; see above)"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(len(d['kernels']), 'kernels,', len(d['constants']), 'tunable constants, written to', sys.argv[1])
for k in d['kernels']:
    print('  %-40s loops %d, launch bounds %s' % (k['id'], len(k.get('loops', [])),
          (k.get('launch_bounds') or {}).get('max_threads', {}).get('expr', '-') if k.get('launch_bounds') else '-'))
" "$OUT/inventory.json" || true
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "== no GPU here: kloop optimize runs extract, propose, apply, build and the ptxas report;"
  echo "   verification and measurement are skipped and nothing is accepted =="
fi
echo "== kloop optimize on examples/saxpy =="
"$KLOOP" optimize --config "$SRC/examples/saxpy/.kloop.yaml" --journal "$OUT/run.db" -o "$OUT/result" \
  --max-candidates "${KLOOP_DEMO_CANDIDATES:-8}" -- -std=c++17
echo "== report: $OUT/result/report.md =="
cat "$OUT/result/report.md"
if [ -f "$OUT/result/accepted.patch" ]; then
  echo "== accepted.patch =="
  cat "$OUT/result/accepted.patch"
else
  echo "== no accepted.patch: nothing was accepted =="
fi
if [ "${KLOOP_DEMO_REPLAY:-1}" != 0 ]; then
  echo "== a written proposal replayed through the llm proposer (bench/llm-replay, local test server, no"
  echo "   model is called): shared-memory tiling of examples/matmul, measured and decided like any other =="
  LLM_REPLAY_ONLY=matmul-smem-tiling "$SRC/bench/llm-replay/run.sh" "$KLOOP" "$OUT/llm-replay" matmul \
    || echo "== the replay did not end as bench/llm-replay expects; see $OUT/llm-replay/matmul =="
fi
