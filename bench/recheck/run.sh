#!/usr/bin/env bash
# Reproduce rate of accepted wins (bench/recheck/README.md): for each example, kloop optimize produces its
# accepted change the way the README demo does (bench/llm-replay, the example's structural rewrite replayed
# through the llm proposer; no model is called), then `kloop compare --recheck` re-measures it K times.
#
#   bench/recheck/run.sh [--k K] [--journal NAME=FILE]... KLOOP_BIN OUTDIR [example...]   (default: matmul)
#
# --k K               re-checks per accepted change (default 2)
# --journal NAME=FILE re-check the change FILE's last run accepted, instead of optimizing the examples
#                     (NAME labels it in the table); repeatable. No example is optimized then.
# Env: RECHECK_ROUNDS   --timing-rounds of the optimize runs (default 1, as bench/llm-replay; a re-check
#                       repeats the run's final check, so it uses the same);
#      RECHECK_ARGS     compiler args after -- (default "-std=c++17"); KLOOP_NVIDIA_SMI as for kloop.
# Prints one line per re-check and per change, then the rate; writes OUTDIR/summary.json.
# Exit status: 0 when every re-check of every accepted change reproduced every kernel/shape pair, 1 when one
# did not or a step failed, 2 on usage errors.
set -u
usage() { sed -n 6,16p "$0" >&2; exit 2; }
K=2
JOURNALS=()
while [ $# -gt 0 ]; do
  case $1 in
    --k) [ $# -ge 2 ] || usage; K=$2; shift 2 ;;
    --journal) [ $# -ge 2 ] || usage; JOURNALS+=("$2"); shift 2 ;;
    --*) echo "recheck: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || usage
case $K in ''|*[!0-9]*|0) echo "recheck: --k must be a whole number >= 1, not '$K'" >&2; exit 2 ;; esac
KLOOP=$(command -v "$1") || { echo "recheck: no kloop at '$1'" >&2; exit 2; }
KLOOP=$(realpath "$KLOOP")
mkdir -p "$2" && OUT=$(realpath "$2")
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# The rewrite of each example that is meant to win (bench/llm-replay/proposals.py; docs/llm-replay.md).
win_of() {
  case $1 in
    saxpy) echo saxpy-float4 ;;
    reduction) echo reduction-warp-shuffle ;;
    matmul) echo matmul-smem-tiling ;;
    *) return 1 ;;
  esac
}

STATUS=0
ROWS="$OUT/rows.tsv"   # name, re-check number, exit code, pairs reproduced, pairs
: > "$ROWS"
CHANGES=()             # name=journal of every change to re-check
NOWIN=()
if [ ${#JOURNALS[@]} -gt 0 ]; then
  CHANGES=("${JOURNALS[@]}")
else
  for EX in ${*:-matmul}; do
    W=$(win_of "$EX") || { echo "recheck: no winning rewrite known for example '$EX' (saxpy, reduction, matmul)" >&2; exit 2; }
    echo "=== $EX: kloop optimize with the replayed $W (bench/llm-replay)"
    START=$(date +%s)
    LLM_REPLAY_ONLY=$W LLM_REPLAY_ROUNDS=${RECHECK_ROUNDS:-1} LLM_REPLAY_ARGS=${RECHECK_ARGS:--std=c++17} \
      "$ROOT/bench/llm-replay/run.sh" "$KLOOP" "$OUT/optimize" "$EX" > "$OUT/$EX.optimize.log" 2>&1
    echo "--- $EX: optimize done in $(( $(date +%s) - START )) s (log: $OUT/$EX.optimize.log)"
    if [ -f "$OUT/optimize/$EX/out/accepted.patch" ]; then
      CHANGES+=("$EX=$OUT/optimize/$EX/run.db")
    else
      echo "--- $EX: nothing accepted, so there is no win to re-check (see $OUT/optimize/$EX/out/report.md)"
      NOWIN+=("$EX")
    fi
  done
fi

for C in ${CHANGES[@]+"${CHANGES[@]}"}; do
  NAME=${C%%=*}
  DB=${C#*=}
  for I in $(seq "$K"); do
    START=$(date +%s)
    "$KLOOP" compare --recheck "$DB" --work-dir "$OUT/$NAME.recheck-$I" -o "$OUT/$NAME.recheck-$I.json" \
      > "$OUT/$NAME.recheck-$I.log" 2>&1
    RC=$?
    if [ "$RC" -ne 0 ] && [ "$RC" -ne 3 ]; then
      echo "--- $NAME: re-check $I failed (exit $RC): $(tail -n 1 "$OUT/$NAME.recheck-$I.log")"
      printf '%s\t%s\t%s\t0\t0\n' "$NAME" "$I" "$RC" >> "$ROWS"
      STATUS=1
      continue
    fi
    # shellcheck disable=SC2016
    read -r GOOD ALL LINE < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
good = sum(p["reproduced"] for p in d["pairs"])
fmt = lambda r: "%.3fx [%.3f, %.3f]" % (r["speedup"], r["ci_low"], r["ci_high"]) if r["ci_low"] is not None else "-"
print(good, len(d["pairs"]), "; ".join("%s %s: %s -> %s %s" % (p["shape"], p["kernel"], fmt(p["original"]),
      fmt(p["recheck"]), "yes" if p["reproduced"] else "NO") for p in d["pairs"]))' "$OUT/$NAME.recheck-$I.json")
    echo "--- $NAME: re-check $I (exit $RC, $(( $(date +%s) - START )) s): $LINE"
    printf '%s\t%s\t%s\t%s\t%s\n' "$NAME" "$I" "$RC" "$GOOD" "$ALL" >> "$ROWS"
    [ "$RC" -eq 0 ] || STATUS=1
  done
done

echo
echo "=== reproduce rate (a re-check reproduces when every kernel/shape speed-up lies in the run's 95% CI)"
python3 - "$ROWS" "$OUT/summary.json" ${NOWIN[@]+"${NOWIN[@]}"} <<'EOF'
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
names = []
for r in rows:
    if r[0] not in names:
        names.append(r[0])
summary = {"changes": [], "no_win": sys.argv[3:]}
tot_ok = tot = pairs_ok = pairs = 0
for n in names:
    mine = [r for r in rows if r[0] == n]
    ok = sum(1 for r in mine if r[2] == "0")
    p_ok, p_all = sum(int(r[3]) for r in mine), sum(int(r[4]) for r in mine)
    print("%-12s %d of %d re-checks reproduced (%d of %d kernel/shape pairs)" % (n, ok, len(mine), p_ok, p_all))
    summary["changes"].append({"name": n, "rechecks": len(mine), "reproduced": ok, "pairs": p_all,
                               "pairs_reproduced": p_ok})
    tot_ok, tot, pairs_ok, pairs = tot_ok + ok, tot + len(mine), pairs_ok + p_ok, pairs + p_all
for n in sys.argv[3:]:
    print("%-12s nothing accepted: no win to re-check" % n)
if tot:
    print("overall      %d of %d re-checks reproduced (%.1f%%), %d of %d kernel/shape pairs"
          % (tot_ok, tot, 100.0 * tot_ok / tot, pairs_ok, pairs))
else:
    print("overall      no accepted win to re-check")
summary.update({"rechecks": tot, "reproduced": tot_ok, "pairs": pairs, "pairs_reproduced": pairs_ok})
json.dump(summary, open(sys.argv[2], "w"), indent=2)
EOF
exit $STATUS
