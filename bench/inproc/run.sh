#!/usr/bin/env bash
# Side-by-side wall time of `kloop optimize` with two kloop binaries, alternated in one run so that the
# machine's load drifts alike for both: BEFORE (e.g. a build of main, which ran `kloop extract` and
# `kloop apply` as child processes) and AFTER (extract and apply in process). No GPU is needed:
# KLOOP_NVIDIA_SMI=false skips verification and measurement, so a run is extract, the baseline build,
# and per candidate propose (builtin), apply and build.
#   bench/inproc/run.sh BEFORE_KLOOP AFTER_KLOOP [REPEATS] [CONFIG] [-- COMPILER ARGS]
# Default: 3 repeats of examples/saxpy (nvcc builds) with --max-candidates 3 --no-ptxas -- -std=c++17.
# Prints each run's seconds and the ratio of the medians (after / before).
set -euo pipefail
before=$1 after=$2 reps=${3:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
cfg=${4:-$root/examples/saxpy/.kloop.yaml}
shift $(( $# < 4 ? $# : 4 ))
[ "${1:-}" = "--" ] && shift
args=("$@"); [ ${#args[@]} -eq 0 ] && args=(-std=c++17)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { # $1: binary, $2: tag; prints seconds
  local d="$work/$2" t0 t1
  rm -rf "$d"; mkdir -p "$d"
  t0=$(date +%s.%N)
  KLOOP_NVIDIA_SMI=false XDG_CACHE_HOME="$d/cache" "$1" optimize --config "$cfg" --journal "$d/run.db" -o "$d/out" \
    --max-candidates 3 --no-ptxas -- "${args[@]}" > "$d/log" 2>&1 || { cat "$d/log" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
b=() a=()
for i in $(seq "$reps"); do
  b+=("$(run "$before" "b$i")"); a+=("$(run "$after" "a$i")")
  echo "repeat $i: before ${b[-1]} s, after ${a[-1]} s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
mb=$(median "${b[@]}") ma=$(median "${a[@]}")
echo "median: before $mb s, after $ma s, after/before $(echo "scale=3; $ma / $mb" | bc)"
