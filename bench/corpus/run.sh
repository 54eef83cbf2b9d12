#!/usr/bin/env bash
# The corpus benchmark: kloop extract on public CUDA projects, against nvcc's cubins and clang's parse.
#
#   bench/corpus/run.sh --kloop PATH [--nvcc PATH] [--clang PATH] [--cuda-path DIR] [--arch sm_90]
#                       [--jobs 2] [--nvcc-timeout 600] [--work DIR] [--json FILE] [--md FILE]
#                       [--projects a,b] [--reuse-nvcc] [--recount] MANIFEST
#
# MANIFEST: one project a line, `NAME SOURCE_DIR COMPILE_COMMANDS_JSON [sample=N]` (paths relative
# to the manifest's directory; '#' starts a comment). It fetches and builds nothing but cubins: the
# projects and their databases are made beforehand (bench/corpus/README.md). Prints Markdown tables;
# writes the full result as JSON (--json, default WORK/corpus.json) and the tables (--md).
# --reuse-nvcc: keep the nvcc results a run left in --work (measure kloop and clang again).
# --recount: measure nothing; recount the nvcc side of the run in --work/--json from its cubins.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kloop="" manifest="" recount="" reuse="" work="" json="" md="" projects="" arch=sm_90 jobs=2 nvcc_timeout=600
cuda=${CUDA_HOME:-/usr/local/cuda}
clang=/usr/lib/llvm-22/bin/clang++ nvcc=""
usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --kloop) kloop=$2; shift 2 ;;
    --nvcc) nvcc=$2; shift 2 ;;
    --clang) clang=$2; shift 2 ;;
    --cuda-path) cuda=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --nvcc-timeout) nvcc_timeout=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    --md) md=$2; shift 2 ;;
    --projects) projects=$2; shift 2 ;;
    --recount) recount=--recount; shift ;;
    --reuse-nvcc) reuse=--reuse-nvcc; shift ;;
    -h|--help) usage ;;
    -*) echo "run.sh: unknown argument '$1'" >&2; usage ;;
    *) [ -z "$manifest" ] || { echo "run.sh: more than one manifest ('$manifest', '$1')" >&2; exit 2; }
       manifest=$1; shift ;;
  esac
done
[ -n "$manifest" ] || { echo "run.sh: a MANIFEST is required" >&2; usage; }
[ -f "$manifest" ] || { echo "run.sh: manifest '$manifest' does not exist" >&2; exit 2; }
[ -n "$kloop" ] || { echo "run.sh: --kloop PATH is required" >&2; exit 2; }
case "$kloop" in */*) ;; *) kloop=$(command -v "$kloop" || echo "$kloop") ;; esac
[ -x "$kloop" ] || { echo "run.sh: kloop '$kloop' is not an executable" >&2; exit 2; }
[ -n "$nvcc" ] || nvcc=$cuda/bin/nvcc
[ -x "$nvcc" ] || { echo "run.sh: nvcc '$nvcc' is not an executable (--nvcc, --cuda-path)" >&2; exit 2; }
[ -x "$clang" ] || { echo "run.sh: clang++ '$clang' is not an executable (--clang)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "run.sh: GNU time (/usr/bin/time) is required for peak RSS" >&2; exit 2; }
command -v readelf >/dev/null || { echo "run.sh: readelf (binutils) is required" >&2; exit 2; }
demangler=$(command -v cu++filt || true)
[ -n "$demangler" ] || demangler=$(command -v "$cuda/bin/cu++filt" || command -v c++filt || true)
[ -n "$demangler" ] || { echo "run.sh: no demangler (cu++filt or c++filt)" >&2; exit 2; }
case "$jobs" in ''|*[!0-9]*|0) echo "run.sh: --jobs must be a positive integer, got '$jobs'" >&2; exit 2 ;; esac
kloop=$(cd "$(dirname "$kloop")" && pwd)/$(basename "$kloop")
[ -n "$work" ] || work=$(mktemp -d /tmp/kloop-corpus-bench.XXXXXX)
mkdir -p "$work"
[ -n "$json" ] || json=$work/corpus.json
echo "corpus: work directory $work" >&2
exec python3 "$here/corpus.py" "$manifest" --kloop "$kloop" --nvcc "$nvcc" --clang "$clang" \
  --cuda-path "$cuda" --readelf "$(command -v readelf)" --demangler "$demangler" --arch "$arch" \
  --jobs "$jobs" --nvcc-timeout "$nvcc_timeout" --work "$work" --json "$json" --md "$md" --projects "$projects" $recount $reuse
