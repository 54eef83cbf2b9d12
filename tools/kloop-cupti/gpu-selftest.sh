#!/usr/bin/env bash
# GPU self-test of libkloop-cupti.so: builds the test programs of test/Cupti/Inputs with nvcc, runs them with
# and without CUDA_INJECTION64_PATH, and checks the JSON (launches, NVML samples, capture hashes against
# host-computed FNV-1a, poisoning, dumps, unchanged program output, injection overhead on a 50 us kernel,
# hardware counters with KLOOP_CUPTI_METRICS=1 on test/Profile/Inputs/bank_conflicts.cu).
# Needs only bash, nvcc, python3 and a GPU: no LLVM, no lit. Exits 1 on any failure.
#
# usage: tools/kloop-cupti/gpu-selftest.sh [path/to/libkloop-cupti.so]   (default: build/lib/libkloop-cupti.so)
# env:   CUDA_HOME (default /usr/local/cuda), KLOOP_CUDA_ARCH (default sm_90),
#        KLOOP_SELFTEST_DIR (work directory; default a fresh mktemp -d), OUT (if set, JSONs are copied there),
#        KLOOP_MAX_OVERHEAD_PCT (default 2: the issue's bound on a 50 us kernel, checked under concurrent tracing),
#        KLOOP_MAX_SERIAL_GAP_US (default 3: the per-launch time serial tracing may add, in us; 1.4-2.5 measured).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lib=$(realpath "${1:-$root/build/lib/libkloop-cupti.so}")
cuda=${CUDA_HOME:-/usr/local/cuda}
arch=${KLOOP_CUDA_ARCH:-sm_90}
max_pct=${KLOOP_MAX_OVERHEAD_PCT:-2}
max_gap_us=${KLOOP_MAX_SERIAL_GAP_US:-3}
inputs=$root/test/Cupti/Inputs
work=${KLOOP_SELFTEST_DIR:-$(mktemp -d)}
mkdir -p "$work"
failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

[ -f "$lib" ] || { echo "FAIL: no library at $lib"; exit 1; }
nvidia-smi -L >/dev/null 2>&1 || { echo "FAIL: no GPU (nvidia-smi -L)"; exit 1; }
echo "library: $lib"
# The driver dlopens the library: an unresolved libcupti would make it skip injection silently.
if ldd "$lib" | grep -q "not found"; then
  cupti=$(find "$cuda/" /usr/lib /usr/local -name 'libcupti.so.*' 2>/dev/null | head -1)
  [ -n "$cupti" ] && export LD_LIBRARY_PATH="$(dirname "$cupti")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  ldd "$lib" | grep -q "not found" && { echo "FAIL: unresolved dependencies:"; ldd "$lib"; exit 1; }
fi
echo "work dir: $work"
nm -D --defined-only "$lib" | grep -q ' T InitializeInjection$' && pass "exports InitializeInjection" \
  || fail "InitializeInjection not exported"

"$cuda/bin/nvcc" -O2 -arch="$arch" -o "$work/capture_app" "$inputs/capture_app.cu" -lcuda || { echo "FAIL: nvcc capture_app"; exit 1; }
"$cuda/bin/nvcc" -O2 -arch="$arch" -o "$work/overhead_app" "$inputs/overhead_app.cu" || { echo "FAIL: nvcc overhead_app"; exit 1; }

targets="saxpy,c_scale,half_writer"
inject() { # inject OUT_JSON [VAR=VALUE...] -- ARGS...
  local out=$1; shift
  local vars=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  timeout 120 env CUDA_INJECTION64_PATH="$lib" KLOOP_CUPTI_OUT="$out" ${vars[@]+"${vars[@]}"} "$@"
}
check() { # check NAME checker-args...
  local name=$1; shift
  if python3 "$inputs/check_capture.py" "$@" > "$work/$name.check" 2>&1; then pass "$name"; else fail "$name"; cat "$work/$name.check"; fi
}

# 1. Reference output without injection.
timeout 120 "$work/capture_app" > "$work/plain.txt" || fail "capture_app without injection"
grep -q "y fnv=.* bad=0" "$work/plain.txt" && grep -q "z fnv=.* bad=0" "$work/plain.txt" && grep -q "w fnv=.* nan=0" "$work/plain.txt" \
  && pass "capture_app computes the expected values" || { fail "capture_app output"; cat "$work/plain.txt"; }

# 2. Captures with dumps: output unchanged, hashes match the host-computed values, dumps hash to the same.
mkdir -p "$work/dumps"
inject "$work/dumps/run.json" KLOOP_CUPTI_TARGETS=$targets KLOOP_CUPTI_DUMP=1 -- "$work/capture_app" > "$work/injected.txt" \
  || fail "capture_app with injection exited non-zero"
cmp -s "$work/plain.txt" "$work/injected.txt" && pass "program output unchanged under injection (captures on)" \
  || { fail "program output changed under injection"; diff "$work/plain.txt" "$work/injected.txt"; }
check captures --mode plain --dumps "$work/dumps/run.json"

# 3. No KLOOP_CUPTI_OUT: the library stays passive and writes nothing.
mkdir -p "$work/passive"
(cd "$work/passive" && timeout 120 env CUDA_INJECTION64_PATH="$lib" "$work/capture_app" > "$work/passive.txt") || fail "passive run"
cmp -s "$work/plain.txt" "$work/passive.txt" && [ -z "$(ls -A "$work/passive")" ] && pass "passive without KLOOP_CUPTI_OUT" \
  || fail "passive run changed output or wrote files"

# 4. Poisoning catches the kernel that writes only half its output (NaN and sentinel patterns).
inject "$work/nan.json" KLOOP_CUPTI_TARGETS=$targets KLOOP_CUPTI_POISON=nan KLOOP_CUPTI_POISON_ARGS=half_writer:0 -- \
  "$work/capture_app" > "$work/nan.txt" || fail "poisoned run exited non-zero"
grep -q "w fnv=.* nan=2048" "$work/nan.txt" && pass "NaN poison visible in the unwritten half" || { fail "NaN poison"; cat "$work/nan.txt"; }
check poison-nan --mode nan "$work/nan.json"
inject "$work/sentinel.json" KLOOP_CUPTI_TARGETS=$targets KLOOP_CUPTI_POISON=sentinel KLOOP_CUPTI_POISON_ARGS=half_writer:0 -- \
  "$work/capture_app" > /dev/null || fail "sentinel run exited non-zero"
check poison-sentinel --mode sentinel "$work/sentinel.json"

# 5. cudaDeviceReset before exit: records flushed at context destruction are still written.
inject "$work/reset.json" KLOOP_CUPTI_TARGETS=$targets -- "$work/capture_app" --reset > "$work/reset.txt" || fail "--reset run"
check reset --mode plain "$work/reset.json"

# 6. Timing-only run (no targets): launches recorded, nothing captured, no warning.
inject "$work/timing.json" -- "$work/capture_app" > /dev/null || fail "timing run"
python3 - "$work/timing.json" <<'EOF' && pass "timing-only run: 5 launches, no captures" || fail "timing-only run"
import json, sys
d = json.load(open(sys.argv[1]))
ok = len(d["launches"]) == 5 and d["captures"] == [] and d["errors"] == [] and d["warnings"] == []
if not ok:
    print(json.dumps({k: d[k] for k in ("launches", "captures", "errors", "warnings")}, indent=1)[:4000])
sys.exit(0 if ok else 1)
EOF

# 7. Overhead on a ~50 us kernel, in both kernel tracing modes: 5 alternating rounds of 1000-launch
# batches (plain, serial, concurrent), median per-launch time of each. Bounds: concurrent tracing, the
# issue's 2% of the kernel; serial tracing (the default) adds a constant idle gap between launches
# (1.4-2.5 us on the H200, docs/results.md), bounded in absolute terms by KLOOP_MAX_SERIAL_GAP_US.
plain_t=(); ser_t=(); conc_t=()
for i in 1 2 3 4 5; do
  plain_t+=("$(timeout 120 "$work/overhead_app" 1000 | sed -n 's/per_launch_us=//p')")
  ser_t+=("$(inject "$work/overhead.json" KLOOP_CUPTI_KERNEL_TRACE=serial -- "$work/overhead_app" 1000 | sed -n 's/per_launch_us=//p')")
  conc_t+=("$(inject "$work/overhead-concurrent.json" KLOOP_CUPTI_KERNEL_TRACE=concurrent -- "$work/overhead_app" 1000 | sed -n 's/per_launch_us=//p')")
done
overhead_check() { # overhead_check MODE PROFILE "INJECTED SAMPLES"
  python3 - "$1" "$max_pct" "$max_gap_us" "$2" "${plain_t[*]}" "$3" <<'EOF'
import json, statistics, sys
mode, bound, gap_bound, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
plain = [float(v) for v in sys.argv[5].split()]
inj = [float(v) for v in sys.argv[6].split()]
mp, mi = statistics.median(plain), statistics.median(inj)
d = json.load(open(path))
if d.get("kernel_trace") != mode:
    print("overhead (%s): the profile reports kernel_trace %r" % (mode, d.get("kernel_trace")))
    sys.exit(1)
launches = len(d["launches"])
cb = d["overhead"]["wall_ns_in_callbacks"]
durations = sorted(l["duration_ns"] for l in d["launches"])
ok = (mi - mp <= gap_bound) if mode == "serial" else (mi <= mp * (1 + bound / 100))
print("overhead (%s): plain %.3f us/launch, injected %.3f us/launch, %+.3f us, %+.2f%% (bound: %s)" % (
    mode, mp, mi, mi - mp, 100 * (mi / mp - 1), "%.2f us" % gap_bound if mode == "serial" else "%.1f%%" % bound))
print("overhead (%s): CUPTI median kernel duration %.3f us over %d launches; %.0f ns in callbacks per launch" % (
    mode, durations[len(durations) // 2] / 1000.0, launches, cb / max(launches, 1)))
print("overhead (%s): samples plain %s injected %s" % (mode, plain, inj))
sys.exit(0 if ok else 1)
EOF
}
overhead_check serial "$work/overhead.json" "${ser_t[*]}" && pass "injection overhead within bound (serial tracing)" \
  || fail "injection overhead (serial tracing)"
overhead_check concurrent "$work/overhead-concurrent.json" "${conc_t[*]}" \
  && pass "injection overhead within bound (concurrent tracing)" || fail "injection overhead (concurrent tracing)"

# 8. Hardware counters (KLOOP_CUPTI_METRICS=1, CUPTI's range profiler with kernel replay): every launch
# of test/Profile/Inputs/bank_conflicts.cu has values, the program's output is unchanged, the 32x32 tile
# has load bank conflicts and the padded one (nearly) none. It prints "metrics.error" and each range's
# error (the CUPTI call that failed, with its CUptiResult name) and values, pass or fail.
if "$cuda/bin/nvcc" -O2 -arch="$arch" -o "$work/banks" "$root/test/Profile/Inputs/bank_conflicts.cu"; then
  timeout 120 "$work/banks" > "$work/banks-plain.txt" || fail "bank_conflicts without injection"
  inject "$work/metrics.json" KLOOP_CUPTI_METRICS=1 -- "$work/banks" > "$work/banks-metrics.txt" \
    || fail "bank_conflicts under KLOOP_CUPTI_METRICS=1 exited non-zero"
  cmp -s "$work/banks-plain.txt" "$work/banks-metrics.txt" && pass "program output unchanged under the range profiler" \
    || fail "program output changed under the range profiler"
  python3 - "$work/metrics.json" <<'EOF' && pass "hardware counters per launch" || fail "hardware counters per launch"
import json, sys
d = json.load(open(sys.argv[1]))
m = d.get("metrics")
if m is None:
    print("metrics: no \"metrics\" member; errors:", d.get("errors"))
    sys.exit(1)
print("metrics: chip %s, %s pass(es), error %s, unsupported %s, dropped %s; errors %s" % (
    m["chip"], m["passes"], m["error"], m["unsupported"], m["dropped_ranges"], d.get("errors")))
print("metrics: device limits", json.dumps(m["device_limits"]))
by = {}
for r in m["ranges"]:
    name = r["name"].split("(")[0]
    by[name] = r
    v = r["values"]
    print("metrics: %s: error %s; registers %s, static smem %s, driver blocks/SM %s, wall %.3f ms; dram read %s, "
          "write %s, bank conflicts ld %s st %s, achieved occupancy %s" % (
              name, r["error"], r["registers"], r["static_smem"], r["driver_blocks_per_sm"], r["wall_ns"] / 1e6,
              v.get("dram__bytes_read.sum"), v.get("dram__bytes_write.sum"),
              v.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
              v.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
              v.get("sm__warps_active.avg.pct_of_peak_sustained_active")))
ok = m["error"] is None and d["launches"] == [] and set(by) == {"transpose_conflicts", "transpose_padded", "big_smem"}
ok = ok and all(r["error"] is None and r["values"].get("dram__bytes_read.sum") is not None for r in by.values())
if ok:
    bad = by["transpose_conflicts"]["values"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] or 0
    good = by["transpose_padded"]["values"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] or 0
    ok = bad > 0 and good <= 0.01 * bad
sys.exit(0 if ok else 1)
EOF
else
  fail "nvcc bank_conflicts.cu"
fi

if [ -n "${OUT:-}" ]; then
  cp "$work/dumps/run.json" "$OUT/captures.json" 2>/dev/null
  cp "$work/nan.json" "$work/timing.json" "$work/overhead.json" "$work/overhead-concurrent.json" "$work/metrics.json" \
    "$OUT/" 2>/dev/null
fi
if [ "$failures" -ne 0 ]; then
  echo "gpu-selftest: $failures failure(s)"
  exit 1
fi
echo "gpu-selftest: all checks passed"
