#!/usr/bin/env bash
# The README's main job, the story a user follows on a codebase: the inventory of the bundled examples;
# where one program's GPU time goes (`kloop profile --metrics`, with hardware counters); `kloop optimize`
# on that example with the builtin proposer (no model); the run's HTML report (`kloop report --html`);
# the patch with its evidence. Then (unless KLOOP_DEMO_REPLAY=0) one written proposal, shared-memory
# tiling of examples/matmul, replayed through the llm proposer against the local test server of
# bench/llm-replay. KLOOP_DEMO_EXAMPLE picks the example (default histogram, whose builtin search wins on
# the H200: docs/results.md, eighth GPU session). Without a GPU every GPU stage says it was skipped.
# Usage: scripts/demo.sh BUILD_DIR
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
EX=${KLOOP_DEMO_EXAMPLE:-histogram}
GPU=1
if ! nvidia-smi -L >/dev/null 2>&1; then
  GPU=0
  echo "== no GPU here: kloop profile is skipped; kloop optimize runs extract, propose, apply, build and the"
  echo "   ptxas report; verification and measurement are skipped and nothing is accepted =="
fi
if [ "$GPU" = 1 ]; then
  echo "== kloop profile --metrics: where examples/$EX's GPU time goes, with hardware counters =="
  mkdir -p "$OUT/profile-build"
  build=$(sed -n '/^build:/,/^[a-z]/s/^  command: "\(.*\)"$/\1/p' "$SRC/examples/$EX/.kloop.yaml" | head -1)
  build=${build//\{build_dir\}/$OUT/profile-build}; build=${build//\{source_dir\}/$SRC/examples/$EX}
  run=$(sed -n '/^run:/,/^[a-z]/s/^  command: "\(.*\)"$/\1/p' "$SRC/examples/$EX/.kloop.yaml" | head -1)
  run=${run//\{build_dir\}/$OUT/profile-build}
  # The first shape's arguments, seed 0, the example's iterations.
  args=$(python3 -c "
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r'args: \\{([^}]*)\\}', t)
for k, v in re.findall(r'(\\w+): \"([^\"]*)\"', m.group(1)):
    print(k, v)
" "$SRC/examples/$EX/.kloop.yaml")
  while read -r k v; do run=${run//\{$k\}/$v}; done <<< "$args"
  run=${run//\{seed\}/0}; run=${run//\{iters\}/20}
  if (cd "$SRC/examples/$EX" && sh -c "$build") > "$OUT/profile-build/build.log" 2>&1; then
    (cd "$SRC" && "$KLOOP" profile --metrics -p examples -o "$OUT/profile.json" -- sh -c "$run") \
      || echo "(kloop profile failed; see above)"
  else
    echo "(the example did not build; see $OUT/profile-build/build.log)"
  fi
fi
echo "== kloop optimize on examples/$EX with the builtin proposer (no model) =="
"$KLOOP" optimize --config "$SRC/examples/$EX/.kloop.yaml" --journal "$OUT/run.db" -o "$OUT/result" \
  --max-candidates "${KLOOP_DEMO_CANDIDATES:-3}" --progress always -- -std=c++17
echo "== report: $OUT/result/report.md =="
cat "$OUT/result/report.md"
if "$KLOOP" report --journal "$OUT/run.db" -o "$OUT/result" --html; then
  echo "== open $OUT/result/report.html in a browser: timing distributions, roofline, counters, candidates, diff =="
else
  echo "== no HTML report (see the error above: the charting library is bundled at build time from npm) =="
fi
if [ -f "$OUT/result/accepted.patch" ]; then
  echo "== accepted.patch (review it, then git apply it) =="
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
