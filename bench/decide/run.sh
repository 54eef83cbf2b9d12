#!/usr/bin/env bash
# GPU benchmark of kloop's acceptance rule (bench/decide/README.md). In one run:
#   (a) A/A false-accept rate, (b) detection rate of a planted 3% slowdown, both for kloop's rule on CUPTI
#   kernel durations and on CUDA-event timings of the same processes, and (c) injection overhead on the
#   ~50 us kernel.
#
# usage: bench/decide/run.sh KLOOP_CUPTI_LIB OUT_DIR [COMPARISONS=200] [ROUNDS=2] [LAUNCHES=100]
#
# env:   BUDGET_S (default 480): seconds from the start of this script. No comparison is started that is
#          expected to end later than BUDGET_S - RESERVE_S; what was done is then analysed and reported.
#        RESERVE_S (default 20): seconds kept for the analysis.
#        KLOOP_DECIDE_BENCH: the analysis tool (default: kloop-decide-bench in the bin/ next to the library's
#          lib/, else build/bin/ of this checkout); "skip": run the GPU part only and print the command that
#          analyses OUT_DIR/runs later, on any machine with the tool.
#        CUDA_HOME (default /usr/local/cuda), KLOOP_CUDA_ARCH (default sm_90),
#        PROC_TIMEOUT_S (default 120): limit of one process,
#        KLOOP_MAX_OVERHEAD_PCT (default 2): bound of (c).
#
# Writes OUT_DIR/ab_app, OUT_DIR/runs/<i>-<arm>-<r>.{json,events} (arm A = base, A2 = base again,
# S = planted 3% slowdown; run interleaved A A2 S per round), OUT_DIR/overhead.json,
# OUT_DIR/decide_details.tsv (one line per decision) and OUT_DIR/decide_bench.md (everything printed).
# Running it again with the same OUT_DIR resumes: complete comparisons are kept, not re-run.
# Exit 0 when every target passes, 1 when one fails or the run could not be completed, 2 on usage errors.
set -uo pipefail
t0=$(date +%s%N)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
usage() { sed -n '7,7p' "$0" | sed 's/^# //' >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 5 ] || usage
lib=$1 out=$2 comparisons=${3:-200} rounds=${4:-2} launches=${5:-100}
for v in "$comparisons" "$rounds" "$launches"; do
  [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -ge 1 ] || { echo "run.sh: COMPARISONS, ROUNDS and LAUNCHES must be integers >= 1" >&2; usage; }
done
[ "$launches" -ge 2 ] || { echo "run.sh: LAUNCHES must be >= 2 (the first launch is the warm-up)" >&2; exit 2; }
budget_s=${BUDGET_S:-480}
reserve_s=${RESERVE_S:-20}
proc_timeout=${PROC_TIMEOUT_S:-120}
max_pct=${KLOOP_MAX_OVERHEAD_PCT:-2}
cuda=${CUDA_HOME:-/usr/local/cuda}
arch=${KLOOP_CUDA_ARCH:-sm_90}

[ -f "$lib" ] || { echo "run.sh: no library at '$lib'" >&2; exit 2; }
lib=$(realpath "$lib")
# Timing runs as kloop compare does them (lib/Measure/Compare.cpp): no captures, no dumps, no poisoning, no
# L2 flush (which would also put a memset between this program's start event and its kernel).
unset KLOOP_CUPTI_TARGETS KLOOP_CUPTI_DUMP KLOOP_CUPTI_POISON KLOOP_CUPTI_POISON_ARGS KLOOP_CUPTI_L2_FLUSH
if [ "${KLOOP_DECIDE_BENCH:-}" = skip ]; then
  bench=skip
elif [ -n "${KLOOP_DECIDE_BENCH:-}" ]; then
  bench=$KLOOP_DECIDE_BENCH
elif [ -x "$(dirname "$lib")/../bin/kloop-decide-bench" ]; then
  bench=$(realpath "$(dirname "$lib")/../bin/kloop-decide-bench")
else
  bench=$root/build/bin/kloop-decide-bench
fi
# Checked before any GPU time is spent.
[ "$bench" = skip ] || [ -x "$bench" ] || { echo "run.sh: no kloop-decide-bench at '$bench' (build it: ninja kloop-decide-bench, or set KLOOP_DECIDE_BENCH)" >&2; exit 2; }
[ "$bench" = skip ] || "$bench" --help >/dev/null 2>&1 || {
  echo "run.sh: '$bench' does not run here (missing libLLVM?); KLOOP_DECIDE_BENCH=skip runs the GPU part only" >&2; exit 2; }
mkdir -p "$out/runs" || exit 2
out=$(realpath "$out")
md=$out/decide_bench.md
: >"$md"
say() { echo "$*" | tee -a "$md"; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.3f", ms / 1000 }'; }

# The driver dlopens the library: an unresolved libcupti would make it skip injection silently.
if ldd "$lib" | grep -q "not found"; then
  cupti=$(find "$cuda/" /usr/lib /usr/local -name 'libcupti.so.*' 2>/dev/null | head -1)
  [ -n "$cupti" ] && export LD_LIBRARY_PATH="$(dirname "$cupti")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  ldd "$lib" | grep -q "not found" && { echo "run.sh: unresolved dependencies of $lib:" >&2; ldd "$lib" >&2; exit 1; }
fi
nvidia-smi -L >/dev/null 2>&1 || { echo "run.sh: no GPU (nvidia-smi -L failed)" >&2; exit 1; }
gpu_state() {
  nvidia-smi --query-gpu=name,driver_version,persistence_mode,temperature.gpu,power.draw,clocks.sm,clocks.mem \
    --format=csv,noheader 2>/dev/null | head -1
}

say "# bench/decide/run.sh"
say ""
say "library: $lib"
say "analysis: $bench"
say "GPU at start (name, driver, persistence, temp, power, SM clock, mem clock): $(gpu_state)"
say "requested: $comparisons comparisons x $rounds rounds x 3 arms, $launches launches per process; budget ${budget_s} s"

"$cuda/bin/nvcc" -O3 -arch="$arch" -o "$out/ab_app" "$here/ab_app.cu" || { echo "run.sh: nvcc ab_app.cu failed" >&2; exit 1; }
app=$out/ab_app

# ---- (c) Injection overhead on the ~50 us kernel -------------------------------------------------------
# 5 alternating pairs of 1000 back-to-back launches, without and with the library (timing only, no
# captures: what kloop's timing rounds do); median per-launch time of each side (as gpu-selftest.sh).
plain_t=() inj_t=() plain_ms=0 inj_ms=0 ovh_fail=0
for k in 1 2 3 4 5; do
  s=$(date +%s%N)
  v=$(timeout "$proc_timeout" "$app" --variant base --batch --launches 1000 | sed -n 's/per_launch_us=//p')
  plain_ms=$((plain_ms + $(ms_since "$s")))
  [ -n "$v" ] || { echo "run.sh: ab_app --batch failed" >&2; ovh_fail=1; break; }
  plain_t+=("$v")
  s=$(date +%s%N)
  v=$(timeout "$proc_timeout" env CUDA_INJECTION64_PATH="$lib" KLOOP_CUPTI_OUT="$out/overhead.json" \
      "$app" --variant base --batch --launches 1000 | sed -n 's/per_launch_us=//p')
  inj_ms=$((inj_ms + $(ms_since "$s")))
  [ -n "$v" ] && [ -f "$out/overhead.json" ] || { echo "run.sh: injected ab_app --batch failed or wrote no profile" >&2; ovh_fail=1; break; }
  inj_t+=("$v")
done
say ""
say "## (c) Injection overhead"
say ""
if [ "$ovh_fail" = 0 ]; then
  python3 - "$max_pct" "$out/overhead.json" "${plain_t[*]}" "${inj_t[*]}" <<'EOF' | tee -a "$md"
import json, statistics, sys
bound, path = float(sys.argv[1]), sys.argv[2]
plain = [float(v) for v in sys.argv[3].split()]
inj = [float(v) for v in sys.argv[4].split()]
mp, mi = statistics.median(plain), statistics.median(inj)
d = json.load(open(path))
sax = sorted(l["duration_ns"] for l in d["launches"] if "saxpy" in (l.get("name") or l["kernel"]))
n = max(len(d["launches"]), 1)
pct = 100 * (mi / mp - 1)
print("kernel: saxpy, CUPTI median duration %.3f us over %d launches" % (sax[len(sax) // 2] / 1e3, len(sax)))
print("per launch, 1000 back-to-back launches, median of 5 processes each: plain %.3f us, injected %.3f us" % (mp, mi))
print("samples (us): plain %s; injected %s" % (plain, inj))
print("host time in the library's callbacks: %.0f ns per launch" % (d["overhead"]["wall_ns_in_callbacks"] / n))
print("result overhead: %+.2f%% (target <= %g%%): %s" % (pct, bound, "PASS" if pct <= bound else "FAIL"))
EOF
  say "process wall time (1000-launch batch): plain $(secs $((plain_ms / ${#plain_t[@]}))) s, injected $(secs $((inj_ms / ${#inj_t[@]}))) s"
else
  say "result overhead: not measured (ab_app --batch failed): FAIL"
fi

# ---- (a), (b) A/A and planted-slowdown comparisons --------------------------------------------------------
arms=(A A2 S)
variant() { [ "$1" = S ] && echo slow || echo base; }
complete() { # complete I: all files of comparison I exist
  local r a
  for ((r = 0; r < rounds; r++)); do
    for a in "${arms[@]}"; do
      [ -f "$out/runs/$1-$a-$r.json" ] && [ -f "$out/runs/$1-$a-$r.events" ] || return 1
    done
  done
}
stop=""
trap 'stop=signal' INT TERM
done_n=0 resumed=0 procs=0 proc_ms=0 comp_ms=0 new=0
say ""
say "## (a), (b) comparisons"
say ""
for ((i = 0; i < comparisons; i++)); do
  if complete "$i"; then
    done_n=$((done_n + 1)); resumed=$((resumed + 1)); continue
  fi
  [ -n "$stop" ] && break
  now_ms=$(ms_since "$t0")
  est_ms=0
  [ "$new" -gt 0 ] && est_ms=$((comp_ms / new))
  if [ $((now_ms + est_ms)) -gt $(((budget_s - reserve_s) * 1000)) ]; then
    stop=budget; break
  fi
  rm -f "$out/runs/$i"-*  # a partial comparison of an interrupted run
  cs=$(date +%s%N)
  for ((r = 0; r < rounds; r++)); do
    for a in "${arms[@]}"; do
      [ -n "$stop" ] && break 2
      stem=$out/runs/$i-$a-$r
      s=$(date +%s%N)
      timeout "$proc_timeout" env CUDA_INJECTION64_PATH="$lib" KLOOP_CUPTI_OUT="$stem.json" \
        "$app" --variant "$(variant "$a")" --launches "$launches" --events "$stem.events" >"$out/last.log" 2>&1
      rc=$?
      proc_ms=$((proc_ms + $(ms_since "$s"))); procs=$((procs + 1))
      if [ "$rc" -ne 0 ] || [ ! -f "$stem.json" ] || [ ! -f "$stem.events" ]; then
        cp "$out/last.log" "$stem.failed.log"
        say "process $i-$a-$r failed (exit $rc$( [ -f "$stem.json" ] || echo ', no profile written: was the library loaded?')); log: $stem.failed.log"
        tail -5 "$out/last.log" | tee -a "$md"
        stop=failure; break 2
      fi
    done
  done
  [ -n "$stop" ] && ! complete "$i" && break
  comp_ms=$((comp_ms + $(ms_since "$cs"))); new=$((new + 1)); done_n=$((done_n + 1))
  if [ "$new" = 1 ]; then
    per=$((comp_ms / new))
    left_ms=$(((budget_s - reserve_s) * 1000 - $(ms_since "$t0")))
    say "one comparison ($((3 * rounds)) processes): $(secs "$per") s; about $((left_ms / (per > 0 ? per : 1) + 1)) comparisons fit in the budget"
  fi
  if [ $((done_n % 20)) = 0 ]; then
    echo "progress: $done_n/$comparisons comparisons, $(secs "$(ms_since "$t0")") s elapsed, $(secs $((proc_ms / procs))) s per process"
  fi
done
rm -f "$out/last.log"
trap - INT TERM
say "comparisons done: $done_n of $comparisons requested ($resumed kept from an earlier run, $new run now)${stop:+; stopped early: $stop}"
if [ "$procs" -gt 0 ]; then
  say "processes run now: $procs, mean wall time per process (injected, $launches launches): $(secs $((proc_ms / procs))) s"
fi
say "GPU at end: $(gpu_state)"
say ""

status=0
if [ "$bench" = skip ] && [ "$done_n" -gt 0 ]; then
  say "analysis skipped (KLOOP_DECIDE_BENCH=skip); run it with:"
  say "  kloop-decide-bench --runs $out/runs --rounds $rounds --comparisons $done_n --details $out/decide_details.tsv"
  status=1
elif [ "$done_n" -gt 0 ]; then
  "$bench" --runs "$out/runs" --rounds "$rounds" --comparisons "$done_n" --details "$out/decide_details.tsv" \
    > "$out/bench.out" 2>&1
  rc=$?
  tee -a "$md" < "$out/bench.out"
  rm -f "$out/bench.out"
  [ "$rc" -eq 0 ] || { echo "run.sh: kloop-decide-bench failed (exit $rc)"; status=1; }
  grep -q "^overall (kloop's rule.*: PASS$" "$md" || status=1
else
  say "no complete comparison: nothing to analyse"
  status=1
fi
grep -q "^result overhead: .*PASS$" "$md" || status=1
[ "$stop" = failure ] && status=1
say ""
say "total wall time: $(secs "$(ms_since "$t0")") s; report: $md"
[ "$status" = 0 ] && say "decide bench: PASS" || say "decide bench: FAIL"
exit "$status"
