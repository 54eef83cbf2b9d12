#!/usr/bin/env bash
# One GPU-machine session: measure, compare (A/A, planted cheats, a real variant) and the extract
# benchmark, in one call of the device tool. Run from the repository root on the GPU machine:
#   source .gpu/env.sh && bench/gpu/session.sh KLOOP_BIN OUT_DIR [steps...]
# steps: measure compare bench (default: all). Everything it prints also lands in OUT_DIR.
set -uo pipefail
kloop=$1; out=$2; shift 2
steps=${*:-measure compare bench}
mkdir -p "$out"
export KLOOP_CACHE_DIR=$out/cache
w=/tmp/kloop-session; rm -rf "$w"; mkdir -p "$w"
log() { echo "== $*"; }

if [[ " $steps " == *" measure "* ]]; then
  for ex in saxpy matmul reduction; do
    log "measure $ex"
    "$kloop" measure --config examples/$ex/.kloop.yaml --build-dir $w/m-$ex --runs 5 -o "$out/measure-$ex.json" 2>&1 | tee "$out/measure-$ex.txt" | tail -25
    echo "measure $ex rc=${PIPESTATUS[0]}"
  done
fi

if [[ " $steps " == *" compare "* ]]; then
  # Planted candidates next to the example, so that ../common/harness.h resolves the same way.
  for c in aa half harness block128 cached; do rm -rf examples/_c_$c; cp -r examples/saxpy examples/_c_$c; done
  # half: writes only the first half of the output (an unwritten output must be caught).
  sed -i 's/i < n; i += stride/i < n \/ 2; i += stride/' examples/_c_half/saxpy.cu
  # harness: the candidate edits the timing harness (a protected file).
  echo '// edited by the candidate' >> examples/_c_harness/saxpy_main.cu
  # block128: a legitimate variant.
  sed -i 's/#define BLOCK_SIZE 256/#define BLOCK_SIZE 128/' examples/_c_block128/saxpy.cu
  # cached: skips the work after the first launch on a buffer (results cached between launches).
  sed -i 's/  const int stride = blockDim.x \* gridDim.x;/  const int stride = blockDim.x * gridDim.x;\n  if (out[0] == a * x[0] + y[0] \&\& n > 1) return;/' examples/_c_cached/saxpy.cu
  for c in aa half harness block128 cached; do
    log "compare saxpy vs $c"
    "$kloop" compare --config examples/saxpy/.kloop.yaml examples/saxpy examples/_c_$c --work-dir $w/c-$c \
      --shape n1M --rounds 3 -o "$out/compare-$c.json" 2>&1 | tee "$out/compare-$c.txt" | tail -22
    echo "compare $c rc=${PIPESTATUS[0]}"
  done
fi

if [[ " $steps " == *" bench "* ]]; then
  log "extract bench"
  mkdir -p /usr/lib/llvm-22/bin && cp .gpu/clang /usr/lib/llvm-22/bin/clang && ln -sf clang /usr/lib/llvm-22/bin/clang++
  timeout 280 bench/extract/run.sh --kloop "$kloop" --tus 200 --jobs "16 8 4" --out "$out/extract_bench.md" > "$out/bench.log" 2>&1
  echo "bench rc=$?"; cat "$out/extract_bench.md" 2>/dev/null || tail -20 "$out/bench.log"
fi
