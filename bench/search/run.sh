#!/usr/bin/env bash
# Builtin search against exhaustive search of the same tunable space, and evaluation throughput
# (issue 6; bench/search/README.md). Run from the repository root on a machine with an NVIDIA GPU:
#
#   bench/search/run.sh KLOOP_BIN SEARCH_BENCH_BIN OUT_DIR [EXAMPLE=stencil2d] [KINDS=block_size,unroll,min_blocks]
#
# 1. kloop extract the example; kloop-search-bench enumerate writes every point of the builtin
#    proposer's space (restricted to KINDS) as a proposal.
# 2. Every point is applied with `kloop apply --in-place` (checked AST edits) and built with the
#    workload's build command, JOBS at a time (default: the number of cores).
# 3. Every point that built is timed with `kloop measure --no-build` (RUNS runs per search shape,
#    default 2), one at a time: the GPU is not shared.
# 4. kloop-search-bench replay walks the builtin search over those measurements and prints quality
#    against evaluations; this script prints the time split and the candidates per minute.
set -uo pipefail
kloop=$(realpath "$1"); sb=$(realpath "$2"); out=$3; ex=${4:-stencil2d}; kinds=${5:-block_size,unroll,min_blocks}
jobs=${JOBS:-$(nproc)}; runs=${RUNS:-2}
mkdir -p "$out"; out=$(realpath "$out")
w=${WORK:-/tmp/kloop-search-bench}; rm -rf "$w"; mkdir -p "$w/pts"
cfg=examples/$ex/.kloop.yaml
[ -f "$cfg" ] || { echo "run.sh: no $cfg" >&2; exit 1; }
now() { date +%s.%N; }
T0=$(now)

"$kloop" extract "examples/$ex/$ex.cu" -o "$w/inv.json" -- -x cuda --cuda-gpu-arch=sm_90 -I examples/common \
  > "$w/extract.log" 2>&1 || { echo "extract failed"; tail "$w/extract.log"; exit 1; }
"$sb" enumerate --inventory "$w/inv.json" --out "$w/space" --kinds "$kinds" | tee "$out/space.txt" || exit 1
npts=$(ls "$w/space"/p*.json | wc -l)
cp -r examples/common "$w/pts/common"
build_cmd=$(sed -n '/^build:/,/^[a-z]/s/^  command: "\(.*\)"$/\1/p' "$cfg" | head -1)
search_shapes=$(grep -E '^\s+- \{name: ' "$cfg" | grep -v 'held_out: true' | sed -E 's/.*name: ([^,]+),.*/\1/')
shape_args=$(for s in $search_shapes; do printf -- '--shape %s ' "$s"; done)
echo "example $ex: $npts points; build: $build_cmd; search shapes: $search_shapes; jobs $jobs; runs $runs"

# 2. apply + build, in parallel. Each point writes p<i>/stage.txt: "apply_s build_s status".
prep() {
  i=$1; d=$w/pts/p$i; cp -r "examples/$ex" "$d"
  t0=$(date +%s.%N)
  # Point 0 is the unedited baseline (enumerate writes it first, with no edits).
  if [ "$i" -ne 0 ] && ! "$kloop" apply "$w/space/p$i.json" "$d/$ex.cu" --in-place -- -x cuda --cuda-gpu-arch=sm_90 \
       -I "$w/pts/common" > "$d/apply.log" 2>&1; then
    t1=$(date +%s.%N); echo "$(awk "BEGIN{print $t1 - $t0}") 0 apply-refused" > "$d/stage.txt"; return
  fi
  t1=$(date +%s.%N); mkdir -p "$d/build"
  cmd=${build_cmd//\{build_dir\}/$d/build}; cmd=${cmd//\{source_dir\}/$d}
  if (cd "$d" && sh -c "$cmd") > "$d/build.log" 2>&1; then st=built; else st=build-failed; fi
  t2=$(date +%s.%N)
  echo "$(awk "BEGIN{print $t1 - $t0}") $(awk "BEGIN{print $t2 - $t1}") $st" > "$d/stage.txt"
}
export -f prep; export w ex kloop build_cmd
TP0=$(now)
seq 0 $((npts - 1)) | xargs -P "$jobs" -I{} bash -c 'prep {}'
TP1=$(now)

# 3. measure, serially.
for i in $(seq 0 $((npts - 1))); do
  d=$w/pts/p$i; read -r a b st < "$d/stage.txt"
  if [ "$st" = built ]; then
    t0=$(now)
    if "$kloop" measure --config "$d/.kloop.yaml" --build-dir "$d/build" --no-build --no-ceilings --runs "$runs" \
         $shape_args -o "$d/measure.json" > "$d/measure.log" 2>&1; then st=measured; else st=run-failed; fi
    t1=$(now); echo "$a $b $st $(awk "BEGIN{print $t1 - $t0}")" > "$d/stage.txt"
  else
    echo "$a $b $st 0" > "$d/stage.txt"
  fi
  [ $((i % 10)) -eq 9 ] && echo "measured $((i + 1))/$npts"
done
TM1=$(now)

# 4. results.json (point 0 is the unedited baseline) and the replay.
python3 - "$w" "$npts" > "$out/results.json" <<'EOF'
import json, os, sys
w, n = sys.argv[1], int(sys.argv[2])
pts = []
for i in range(n):
    d = f"{w}/pts/p{i}"
    a, b, st, r = (open(f"{d}/stage.txt").read().split() + ["0"])[:4]
    e = {"id": i, "ok": st == "measured", "status": st, "apply_s": float(a), "build_s": float(b), "run_s": float(r)}
    if st == "measured":
        m = json.load(open(f"{d}/measure.json"))
        e["median_ns"] = {k["shape"]: k["median_ns"] for k in m["kernels"]}
    pts.append(e)
print(json.dumps({"baseline": pts[0], "points": pts}, indent=1))
EOF
"$sb" replay --space "$w/space/space.json" --results "$out/results.json" | tee "$out/search_bench.md"

python3 - "$out/results.json" "$TP0" "$TP1" "$TM1" "$T0" "$jobs" <<'EOF' | tee -a "$out/search_bench.md"
import json, sys
r = json.load(open(sys.argv[1])); tp0, tp1, tm1, t0 = map(float, sys.argv[2:6]); jobs = int(sys.argv[6])
p = r["points"]; n = len(p)
st = {}
for e in p: st[e["status"]] = st.get(e["status"], 0) + 1
apply_s = sum(e["apply_s"] for e in p); build_s = sum(e["build_s"] for e in p); run_s = sum(e["run_s"] for e in p)
prep_wall, run_wall = tp1 - tp0, tm1 - tp1
print("\n## evaluation throughput (this driver: apply + build %d at a time, then timing runs one at a time)\n" % jobs)
print("| points | statuses | apply (sum) | build (sum) | apply+build wall | timing runs wall | total wall | candidates/min |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
total = prep_wall + run_wall
print("| %d | %s | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %.1f |" % (n, ", ".join("%s %d" % kv for kv in sorted(st.items())),
      apply_s, build_s, prep_wall, run_wall, total, 60.0 * n / total))
m = [e for e in p if e["status"] == "measured"]
if m:
    print("\nper measured candidate: apply %.2f s, build %.2f s (CPU time, %d-way parallel), timing %.2f s (GPU, serial); "
          "decision: point estimates, < 1 ms" % (sum(e["apply_s"] for e in m) / len(m), sum(e["build_s"] for e in m) / len(m),
          jobs, sum(e["run_s"] for e in m) / len(m)))
print("steady-state bound with builds overlapped: %.1f candidates/min (timing alone)" %
      (60.0 / (sum(e["run_s"] for e in m) / len(m)) if m else 0))
EOF
echo "total wall $(awk "BEGIN{print $(now) - $T0}") s"
