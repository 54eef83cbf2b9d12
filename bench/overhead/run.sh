#!/usr/bin/env bash
# Tracing overhead against the number of thread blocks, on the GPU machine, in one run.
#
# usage: bench/overhead/run.sh LIBKLOOP_CUPTI_SO OUTDIR [REPS]
# For each configuration (saxpy over 16 Mi floats at several grid sizes with the same work, and an
# empty kernel at several grid sizes), REPS (default 3) alternating rounds of five processes:
#   plain        no tracing;
#   kloop        CUDA_INJECTION64_PATH=libkloop-cupti.so with KLOOP_CUPTI_OUT set (kernel activity,
#                launch callbacks, NVML sampling; no targets, so no captures), default tracing (serial);
#   kloop-conc   the same with KLOOP_CUPTI_KERNEL_TRACE=concurrent;
#   cupti        the program itself enables CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL and nothing else;
#   cupti-serial the program itself enables CUPTI_ACTIVITY_KIND_KERNEL and nothing else.
# Each process times 500 back-to-back launches with two CUDA events around the batch (per-launch
# time = batch time / 500), after 20 warm-up launches. Prints, per configuration, the median
# per-launch time of each mode, the overheads against plain, the overhead per 1000 blocks, and the
# median CUPTI kernel duration. A second table shows what matters for a comparison: the ratio of
# each saxpy configuration's time to the reference configuration's (16384 x 256), untraced (per-launch
# times) against traced (CUPTI median durations), and the bias of the traced ratio.
# Writes OUTDIR/overhead.tsv (every sample) and OUTDIR/summary.txt.
set -euo pipefail
lib=$(realpath "$1"); out=$2; reps=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
"$cuda/bin/nvcc" -O2 -arch="${KLOOP_CUDA_ARCH:-sm_90}" -o "$out/sweep" "$here/sweep.cu" -lcupti
sms=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $sms"
configs=(
  "saxpy 528 256" "saxpy 4096 256" "saxpy 16384 256" "saxpy 0 256" "saxpy 0 128" "saxpy 0 1024"
  "empty 1024 256" "empty 16384 256" "empty 65536 256" "empty 262144 256"
)
tsv=$out/overhead.tsv
echo -e "kernel\tgrid\tblock\tmode\trep\tper_launch_us\tcupti_median_us" > "$tsv"
for c in "${configs[@]}"; do
  read -r k g b <<<"$c"
  for r in $(seq "$reps"); do
    for mode in plain kloop kloop-conc cupti cupti-serial; do
      case $mode in
        plain) line=$("$out/sweep" --kernel "$k" --grid "$g" --block "$b") ;;
        kloop) line=$(env CUDA_INJECTION64_PATH="$lib" KLOOP_CUPTI_OUT="$out/kloop-$k-$g-$b.json" \
                      "$out/sweep" --kernel "$k" --grid "$g" --block "$b") ;;
        kloop-conc) line=$(env CUDA_INJECTION64_PATH="$lib" KLOOP_CUPTI_OUT="$out/kloop-conc-$k-$g-$b.json" \
                      KLOOP_CUPTI_KERNEL_TRACE=concurrent "$out/sweep" --kernel "$k" --grid "$g" --block "$b") ;;
        cupti) line=$("$out/sweep" --kernel "$k" --grid "$g" --block "$b" --cupti) ;;
        cupti-serial) line=$("$out/sweep" --kernel "$k" --grid "$g" --block "$b" --cupti-serial) ;;
      esac
      grid=$(sed -n 's/.*grid=\([0-9]*\).*/\1/p' <<<"$line")
      pl=$(sed -n 's/.*per_launch_us=\([0-9.]*\).*/\1/p' <<<"$line")
      cm=$(sed -n 's/.*cupti_median_us=\([-0-9.]*\).*/\1/p' <<<"$line")
      if [ "$mode" = kloop ] || [ "$mode" = kloop-conc ]; then
        cm=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); d=sorted(l["duration_ns"] for l in p["launches"]); print("%.4f %s" % (d[len(d)//2]/1000.0, p.get("kernel_trace", "?")))' \
             "$out/$mode-$k-$g-$b.json")
        [ "${cm#* }" = "$([ "$mode" = kloop ] && echo serial || echo concurrent)" ] \
          || { echo "run.sh: $mode profile reports kernel_trace '${cm#* }'" >&2; exit 1; }
        cm=${cm% *}
      fi
      echo -e "$k\t$grid\t$b\t$mode\t$r\t$pl\t$cm" >> "$tsv"
    done
  done
done
python3 - "$tsv" <<'EOF' | tee "$out/summary.txt"
import collections, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by = collections.OrderedDict()
for k, g, b, mode, rep, pl, cm in rows:
    by.setdefault((k, int(g), int(b)), collections.defaultdict(list))[mode].append((float(pl), float(cm)))
med = lambda m, mode, i: statistics.median(v[i] for v in m[mode])
modes = ["kloop", "kloop-conc", "cupti", "cupti-serial"]
print("Per-launch time of back-to-back launches (CUDA events around the batch), overhead against plain:")
print()
print("| kernel | blocks | threads/block | plain us/launch | " + " | ".join(modes) + " |")
print("| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in modes) + " |")
for (k, g, b), m in by.items():
    p = med(m, "plain", 0)
    print("| %s | %d | %d | %.3f | %s |" % (k, g, b, p, " | ".join(
        "%.3f (%+.2f%%)" % (med(m, x, 0), 100 * (med(m, x, 0) / p - 1)) for x in modes)))
print()
ref = ("saxpy", 16384, 256)
if ref in by:
    print("Ratio to saxpy 16384 x 256, untraced (per-launch times) and traced (CUPTI median durations):")
    print()
    print("| saxpy blocks x threads | untraced ratio | " + " | ".join("%s ratio (bias)" % x for x in modes) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in modes) + " |")
    r = by[ref]
    for (k, g, b), m in by.items():
        if k != "saxpy" or (k, g, b) == ref:
            continue
        u = med(m, "plain", 0) / med(r, "plain", 0)
        cells = []
        for x in modes:
            t = med(m, x, 1) / med(r, x, 1)
            cells.append("%.4f (%+.2f%%)" % (t, 100 * (t / u - 1)))
        print("| %d x %d | %.4f | %s |" % (g, b, u, " | ".join(cells)))
EOF
