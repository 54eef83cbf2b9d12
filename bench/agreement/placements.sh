#!/usr/bin/env bash
# Item 5 of issue 14, by placement (bench/agreement/README.md, "By placement"): for layernorm r4096c4096,
# one baseline and one candidate source, side by side in one run on the GPU machine:
#  1. per pad P (MiB): replay (kloop-replay --pad-mib P, 4 placements, train 8) with each placement's
#     speed-up, and the program under libkloop-cupti.so with KLOOP_CUPTI_PLACEMENT_PAD = P (median CUPTI
#     duration of launches 3 on, 40 iterations), so that replay and the program meet at the same pads;
#  2. per seed S: replay with drawn pads (--placement-pad-mib 128 --placement-seed S, 8 placements),
#     each placement's speed-up and pad.
# Usage (after `source .gpu/env.sh` and unpacking .gpu/kb.txz):
#   bench/agreement/placements.sh CANDIDATE.cu OUT "PADS" "SEEDS"
#   e.g. bench/agreement/placements.sh cand/layernorm.cu /tmp/pl "0 0 2 8 14 22 34 46 62 78 94 110 126" "1 2 3 4 5 6"
# CANDIDATE.cu replaces examples/layernorm/layernorm.cu (e.g. `kloop apply --rule vectorize-global-access
# --config .kloop.yaml --in-place layernorm.cu -- -std=c++17` on a copy, on the CPU machine).
set -uo pipefail
cand_src=$1; out=$2; pads=$3; seeds=$4
kb=${KLOOP_BENCH_KB:-$PWD/.gpu/kb}
w=$out/work; mkdir -p "$w"
build() { # SRC_DIR NAME
  (cd "$1" && nvcc -O3 -arch=sm_90 -o "$w/$2" layernorm.cu layernorm_main.cu &&
    nvcc -O3 -arch=sm_90 -cubin -o "$w/$2.cubin" layernorm.cu) || exit 1
}
rm -rf "$w/ex" && cp -r examples "$w/ex" && build "$w/ex/layernorm" base
cp "$cand_src" "$w/ex/layernorm/layernorm.cu" && build "$w/ex/layernorm" cand
"$kb/bin/kloop" capture --kernel layernorm_rows -o "$w/cap" -- "$w/base" --rows 4096 --cols 4096 --seed 1 --iters 4 \
  > "$out/capture.log" 2>&1 || { tail "$out/capture.log"; exit 1; }
replay() { # OUT.json extra options...
  local o=$1; shift
  "$kb/bin/kloop-replay" "$w/cap" --cubin "$w/base.cubin" --candidate-cubin "$w/cand.cubin" --tolerance abs:3e-5,f32 \
    --l2 rotate-sets --poison --back-to-back --train 8 --timer cupti "$@" > "$o" 2> "$o.err"
}
program() { # base|cand PAD_MIB -> median ns of launches 3 on
  CUDA_INJECTION64_PATH=$kb/lib/libkloop-cupti.so KLOOP_CUPTI_OUT=$w/p.json KLOOP_CUPTI_TARGETS=layernorm_rows \
    KLOOP_CUPTI_PLACEMENT_PAD=$(($2 * 1048576)) "$w/$1" --rows 4096 --cols 4096 --seed 1 --iters 40 > /dev/null 2>&1
  python3 -c "import json,statistics as s; print(s.median([l['duration_ns'] for l in json.load(open('$w/p.json'))['launches']][3:]))"
}
per_placement='
import json, statistics as st, sys
d = json.load(open(sys.argv[1])); L = d["launches"][0]; B, C = L["baseline"], L["candidate"]
n = d.get("placements", 1); pads = d.get("placement_pads_mib", [])
def at(side, p): return st.median([t for t, q in zip(side["times_ns"], side.get("placements", [0] * len(side["times_ns"]))) if q == p])
per = " ".join("%.4f%s" % (at(B, p) / at(C, p), "@%d" % pads[p] if p < len(pads) else "") for p in range(n))
print("replay %.4f match=%s/%s per placement: %s" % (B["median_ns"] / C["median_ns"], B["match"], C["match"], per), end="")
'
for pad in $pads; do
  replay "$out/pad$pad.json" --iters 80 --placements 4 --pad-mib "$pad"
  b=$(program base "$pad"); c=$(program cand "$pad")
  printf 'pad %4s ' "$pad"; python3 -c "$per_placement" "$out/pad$pad.json"
  python3 -c "print(' | program %.4f (%d/%d ns)' % ($b / $c, $b, $c))"
done
for s in $seeds; do
  replay "$out/seed$s.json" --iters 160 --placements 8 --placement-pad-mib 128 --placement-seed "$s"
  printf 'seed %s ' "$s"; python3 -c "$per_placement" "$out/seed$s.json"; echo
done
