#!/usr/bin/env bash
# Replays the proposals of bench/llm-replay/proposals.py through
# `kloop optimize --proposer llm` against test/Propose/fake_llm_server.py, one
# journal per example, and checks every outcome (docs/llm-replay.md).
#
#   bench/llm-replay/run.sh KLOOP_BIN OUTDIR [example...]      (default: saxpy reduction matmul)
#
# Env: LLM_REPLAY_ONLY="name1 name2"  replay only these proposals (in proposals.py order);
#      LLM_REPLAY_ROUNDS              --timing-rounds (default 1);
#      LLM_REPLAY_EXTRA               extra kloop optimize options (e.g. "--no-ptxas");
#      LLM_REPLAY_ARGS                compiler args after -- (default "-std=c++17");
#      KLOOP_NVIDIA_SMI               as for kloop: the nvidia-smi to probe (false: no GPU);
#      KLOOP_PROMPTS_DIR              the prompts (default: this checkout's prompts/).
# Exit status: 0 when every outcome matched its expectation, 1 otherwise, 2 on usage errors.
set -u
if [ $# -lt 2 ]; then
  sed -n 2,14p "$0" >&2
  exit 2
fi
KLOOP=$(command -v "$1") || { echo "llm-replay: no kloop at '$1'" >&2; exit 2; }
KLOOP=$(realpath "$KLOOP")
OUT=$2
shift 2
EXAMPLES=${*:-saxpy reduction matmul}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROPS="$HERE/proposals.py"
# shellcheck source=../../test/Propose/fake_llm_server.sh
source "$ROOT/test/Propose/fake_llm_server.sh"
ROUNDS=${LLM_REPLAY_ROUNDS:-1}
# The replay is of this checkout's prompts. A kloop that is neither installed nor in its build tree
# (.gpu/kb/bin/kloop on the GPU machine) has no share/kloop/prompts beside it (docs/install.md).
export KLOOP_PROMPTS_DIR=${KLOOP_PROMPTS_DIR:-$ROOT/prompts}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

if "${KLOOP_NVIDIA_SMI:-nvidia-smi}" -L >/dev/null 2>&1; then MODE=gpu; else MODE=nogpu; fi
echo "llm-replay: mode $MODE; kloop $KLOOP; output $OUT"

SERVER_PID=
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; }
trap cleanup EXIT

STATUS=0
SUMMARY=
for EX in $EXAMPLES; do
  D="$OUT/$EX"
  rm -rf "$D" && mkdir -p "$D"
  # shellcheck disable=SC2086
  if ! python3 "$PROPS" script "$EX" "$D/script.json" ${LLM_REPLAY_ONLY:-}; then
    STATUS=2; continue
  fi
  N=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["queue"]))' "$D/script.json")

  if ! start_fake_llm_server "$D/script.json" "$D"; then
    echo "llm-replay: $EX: the fake server did not start (see $D/server.err)" >&2
    STATUS=1; cleanup; SERVER_PID=; continue
  fi

  echo
  echo "=== $EX: $N replayed proposal(s), fake server on 127.0.0.1:$PORT"
  START=$(date +%s)
  # shellcheck disable=SC2086
  env KLOOP_LLM_BASE_URL="http://127.0.0.1:$PORT/v1" KLOOP_LLM_MODEL="replay-$EX" \
      KLOOP_LLM_API=openai KLOOP_LLM_API_KEY= \
      "$KLOOP" optimize --config "$ROOT/examples/$EX/.kloop.yaml" --journal "$D/run.db" -o "$D/out" \
      --proposer llm --max-candidates "$N" --plateau 0 --timing-rounds "$ROUNDS" \
      ${LLM_REPLAY_EXTRA:-} -- ${LLM_REPLAY_ARGS:--std=c++17} 2>&1 | tee "$D/optimize.log"
  RC=${PIPESTATUS[0]}
  echo "--- $EX: kloop optimize exit $RC in $(( $(date +%s) - START )) s"
  # What kloop sent the model (prompt context), for review and tests.
  python3 -c 'import sys,urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
    "http://127.0.0.1:$PORT/stats" > "$D/server_stats.json" 2>/dev/null || true
  cleanup; SERVER_PID=
  [ "$RC" -ne 0 ] && STATUS=1

  if [ -f "$D/out/report.md" ]; then
    echo "--- $EX: report.md"; cat "$D/out/report.md"
  fi
  if [ -f "$D/out/accepted.patch" ]; then
    echo "--- $EX: accepted.patch"; cat "$D/out/accepted.patch"
  else
    echo "--- $EX: no accepted.patch"
  fi
  "$KLOOP" history --journal "$D/run.db" --json >"$D/history.json" || STATUS=1
  # shellcheck disable=SC2086
  python3 "$PROPS" check "$EX" "$D/history.json" "$MODE" ${LLM_REPLAY_ONLY:-} >"$D/summary.txt" || STATUS=1
  SUMMARY+=$'\n'"$(cat "$D/summary.txt")"$'\n'
done

echo
echo "=== summary ($MODE)"
printf '%s\n' "$SUMMARY"
exit $STATUS
