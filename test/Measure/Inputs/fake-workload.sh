#!/bin/sh
# Stands in for a CUDA workload run under libkloop-cupti.so (no GPU needed):
#   fake-workload.sh MODE ITERS SEED
# ok: writes a kloop-cupti/1 profile to $KLOOP_CUPTI_OUT with one warm-up launch of
#     saxpy (50 us), then ITERS launches of 1000, 1010, ... ns, one launch of a
#     non-target kernel, and an NVML sample reporting a power cap (throttle 0x4)
#     from the start of the last saxpy launch on.
# profile-errors: the same, with an "errors" entry and dropped records in the profile.
# foreign: the same launches; the NVML samples list the GPU's compute processes (the ok profile's do
#     not, like a libkloop-cupti.so older than those fields), and one of another process group
#     (pid 4242) from the start of the 5th timed launch to that of the 8th: 3 foreign launches.
# foreign-all: the same, with the foreign process there in every sample.
# With KLOOP_CUPTI_METRICS=1 and KLOOP_FAKE_METRICS=FILE, the profile also has a "metrics" member: FILE's text.
# Other modes fail the way real workloads do.
mode=$1; iters=${2:-12}; seed=${3:-0}
case $mode in
  exit3) echo "fake: bad argument --n" >&2; exit 3 ;;
  segv) echo "fake: about to dereference garbage" >&2; kill -SEGV $$ ;;
  hang) sleep 60; exit 0 ;;
  noprofile) echo "fake: ran but CUDA was never initialised"; exit 0 ;;
  nodevice) echo "CUDA error: no CUDA-capable device is detected" >&2; exit 1 ;;
  corrupt) echo '{"schema": "kloop-cupti/1", "launches": [' > "$KLOOP_CUPTI_OUT"; exit 0 ;;
  ok|profile-errors|foreign|foreign-all) ;;
  *) echo "fake: unknown mode $mode" >&2; exit 2 ;;
esac
echo "fake: seed $seed iters $iters targets=$KLOOP_CUPTI_TARGETS"
{
  printf '{"schema": "kloop-cupti/1", "device": {"name": "Fake GPU", "cc": "9.0", "l2_bytes": 1048576},\n "launches": ['
  i=0
  total=$((iters + 1))
  while [ $i -lt $total ]; do
    if [ $i -eq 0 ]; then d=50000; else d=$((1000 + 10 * (i - 1))); fi
    start=$((i * 100000)); end=$((start + d))
    printf '\n  {"seq": %d, "kernel": "_Z5saxpyifPKfPf", "name": "saxpy(int, float, float const*, float*)", "grid": [4096,1,1], "block": [256,1,1], "registers": 16, "static_smem": 0, "dynamic_smem": 0, "stream": 7, "context": 1, "start_ns": %d, "end_ns": %d, "duration_ns": %d},' $i $start $end $d
    i=$((i + 1))
  done
  start=$((total * 100000))
  printf '\n  {"seq": %d, "kernel": "_Z4initPf", "name": "init(float*)", "grid": [1,1,1], "block": [32,1,1], "registers": 8, "static_smem": 0, "dynamic_smem": 0, "stream": 7, "context": 1, "start_ns": %d, "end_ns": %d, "duration_ns": 777}' $total $start $((start + 777))
  # procs T F: what libkloop-cupti.so adds to a sample, T compute processes of which F foreign.
  procs() {
    case $mode in
      foreign|foreign-all) [ "$mode" = foreign-all ] && set -- $(($1 + 1)) $(($2 + 1))
        pids=""; [ "$2" -gt 0 ] && pids=4242
        printf ', "gpu_util_pct": 100, "mem_util_pct": 30, "compute_processes": %d, "foreign_processes": %d, "foreign_pids": [%s]' $1 $2 "$pids" ;;
    esac
  }
  printf '],\n "env_samples": [{"t_ns": 0, "sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "temp_c": 40, "power_mw": 300000, "throttle_reasons": 0%s},\n' "$(procs 1 0)"
  case $mode in
    foreign|foreign-all)
      printf '  {"t_ns": 500000, "sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "temp_c": 45, "power_mw": 500000, "throttle_reasons": 0%s},\n' "$(procs 2 1)"
      printf '  {"t_ns": 800000, "sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "temp_c": 50, "power_mw": 400000, "throttle_reasons": 0%s},\n' "$(procs 1 0)" ;;
  esac
  printf '  {"t_ns": %d, "sm_clock_mhz": 1700, "mem_clock_mhz": 3201, "temp_c": 60, "power_mw": 700000, "throttle_reasons": 4%s}],\n' $((iters * 100000)) "$(procs 1 0)"
  # Like libkloop-cupti.so, say which CUPTI activity kind timed the kernels, when kloop asked for one.
  [ -n "${KLOOP_CUPTI_KERNEL_TRACE:-}" ] && printf ' "kernel_trace": "%s",\n' "$KLOOP_CUPTI_KERNEL_TRACE"
  # profile-errors: what libkloop-cupti.so writes when a CUPTI call failed and records were dropped.
  [ "$mode" = profile-errors ] && printf ' "errors": ["cuptiActivityFlushAll failed: CUPTI_ERROR_UNKNOWN (2 times)"], "dropped_records": 7,\n'
  # A metrics run (KLOOP_CUPTI_METRICS=1): the "metrics" member is the file KLOOP_FAKE_METRICS names.
  [ "${KLOOP_CUPTI_METRICS:-}" = 1 ] && [ -n "${KLOOP_FAKE_METRICS:-}" ] && printf ' "metrics": %s,\n' "$(cat "$KLOOP_FAKE_METRICS")"
  printf ' "nvml": true, "captures": [], "overhead": {"wall_ns_in_callbacks": 5000}}\n'
} > "$KLOOP_CUPTI_OUT"
