#!/usr/bin/env bash
# kloop check on a generated project with one changed file: first run (empty extract cache) and
# second run (the cache of the first), side by side.
#
#   bench/check/run.sh --kloop build/bin/kloop [--tus 50] [--jobs N] [--cuda-path DIR] [--out FILE.md]
#
# The project is bench/extract/gen_corpus.py's (real CUDA headers, nvcc compile_commands.json),
# committed to a scratch git repository. Each run changes one translation unit against HEAD:
#   first:  a kernel is appended to src/tu_0003.cu; `kloop check --from-ref HEAD -p .` with an empty
#           cache directory parses all TUs (what a first run, or a run after a kloop rebuild, costs);
#   second: the appended kernel's loop bound changes (the same file, still the only changed one);
#           the same command over the first run's cache: one TU parses, plus apply's parse and re-parse
#           of it for the fix-its.
# Target (issue 16, item 4): the second run at most 10 s on 50 TUs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kloop="" tus=50 jobs=$(nproc) out=""
cuda=${CUDA_HOME:-/usr/local/cuda}
usage() { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --kloop) kloop=$2; shift 2 ;;
    --tus) tus=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --cuda-path) cuda=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[ -x "$kloop" ] || { echo "run.sh: --kloop PATH (an executable) is required" >&2; exit 2; }
kloop=$(cd "$(dirname "$kloop")" && pwd)/$(basename "$kloop")
[ -f "$cuda/include/cuda_runtime.h" ] || { echo "run.sh: no CUDA at '$cuda' (--cuda-path)" >&2; exit 2; }
work=$(mktemp -d /tmp/kloop-check-bench.XXXXXX)
proj=$work/project
python3 "$here/../extract/gen_corpus.py" "$proj" --tus "$tus" --cuda-path "$cuda" >/dev/null
cd "$proj"
git init -q && git add -A && git -c user.email=b@b -c user.name=b commit -qm corpus
# The extract cache stores no result of a file modified within a second of its parse (ExtractCache::store,
# ccache's "file too new" rule): files just generated would be parsed again by the second run, which a
# project whose other files are older than the edit never sees.
sleep 2

# run LABEL: times `kloop check` over the cache directory $work/cache; prints "LABEL wall_s rc".
run() {
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  "$kloop" check --from-ref HEAD -p . -j "$jobs" --cache-dir "$work/cache" >"$work/$1.out" 2>"$work/$1.err" || rc=$?
  t1=$(date +%s.%N)
  echo "$1 $(python3 -c "print(f'{$t1 - $t0:.2f}')") $rc"
}
cat >>src/tu_0003.cu <<'CU'

__global__ void bench_added(float *x) {
  for (int i = 0; i < 4; ++i)
    x[threadIdx.x * 4 + i] += 1.0f;
}
CU
first=$(run first)
sed -i 's/for (int i = 0; i < 4; ++i)/for (int i = 0; i < 8; ++i)/; s/threadIdx.x \* 4 + i/threadIdx.x * 8 + i/' src/tu_0003.cu
second=$(run second)
read -r _ t1 rc1 <<<"$first"
read -r _ t2 rc2 <<<"$second"
{
  echo "kloop check, $tus TUs (bench/extract corpus), one changed file, -j$jobs, $(nproc) CPUs"
  echo ""
  echo "| run | wall s | exit | kloop's summary |"
  echo "|---|---:|---:|---|"
  echo "| first (empty cache) | $t1 | $rc1 | $(grep '^kloop check: [0-9]' "$work/first.err" | head -n 1) |"
  echo "| second (one file changed since) | $t2 | $rc2 | $(grep '^kloop check: [0-9]' "$work/second.err" | head -n 1) |"
  echo ""
  echo "second/first: $(python3 -c "print(f'{$t2 / $t1:.3f}')"); target: second <= 10 s."
  echo "Findings of the second run:"
  grep -E ': (warning|error): ' "$work/second.out" | sed 's/^/  /' || echo "  (none)"
  echo "Logs: $work"
} | tee "${out:-/dev/null}"
