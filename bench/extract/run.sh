#!/usr/bin/env bash
# kloop extract against the clang parse floor, in one run.
#
#   bench/extract/run.sh --kloop build/bin/kloop [--corpus DIR] [--tus 200] [--jobs "1 2 16"]
#                        [--reps 1] [--clang /usr/lib/llvm-22/bin/clang++] [--cuda-path DIR]
#                        [--out FILE.md] [--clang-only]
#
# For every N in --jobs (default: 1, 2 and nproc) and every repetition it runs, back to back:
#   clang:  the corpus's clang_commands.txt (clang++ -fsyntax-only, host and device sides, sm_90,
#           with the flags kloop derives from the nvcc database: --cuda-path, -isystem
#           <cuda>/include/cccl, -Wno-unknown-cuda-version) through `xargs -P N`;
#   kloop:  kloop extract -p CORPUS -j N -o FILE, with an empty cache directory (cold);
#   kloop-warm: the same command again over that cache directory (nothing changed).
# and prints wall time, kloop/clang, the speed-up over -j1 of each, and peak RSS (GNU time -v
# when /usr/bin/time exists, else the rusage of the children via python3). The medians over
# the repetitions are reported. Peak RSS of clang is that of the largest single clang++
# process (the parse of one TU); clang at -P N holds up to N such processes at once, so the
# table also gives N times that as an upper bound of its concurrent footprint. kloop's is the
# whole process.
# The corpus is generated (bench/extract/gen_corpus.py) when DIR has no compile_commands.json.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kloop="" corpus="" tus=200 jobs="" reps=1 out="" clang_only=0
clang=/usr/lib/llvm-22/bin/clang++
cuda=${CUDA_HOME:-/usr/local/cuda}
usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --kloop) kloop=$2; shift 2 ;;
    --corpus) corpus=$2; shift 2 ;;
    --tus) tus=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --clang) clang=$2; shift 2 ;;
    --cuda-path) cuda=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --clang-only) clang_only=1; shift ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
if [ "$clang_only" = 0 ]; then
  [ -n "$kloop" ] || { echo "run.sh: --kloop PATH is required (or --clang-only)" >&2; exit 2; }
  [ -x "$kloop" ] || { echo "run.sh: kloop '$kloop' is not an executable" >&2; exit 2; }
  kloop=$(cd "$(dirname "$kloop")" && pwd)/$(basename "$kloop")
fi
[ -x "$clang" ] || { echo "run.sh: clang++ '$clang' not found" >&2; exit 2; }
[ -f "$cuda/include/cuda_runtime.h" ] || { echo "run.sh: no CUDA at '$cuda' (--cuda-path)" >&2; exit 2; }
[ -n "$jobs" ] || jobs=$(printf '%s\n' 1 2 "$(nproc)" | sort -n -u | tr '\n' ' ')
[ -n "$corpus" ] || corpus=$(mktemp -d /tmp/kloop-extract-corpus.XXXXXX)
if [ ! -f "$corpus/compile_commands.json" ]; then
  python3 "$here/gen_corpus.py" "$corpus" --tus "$tus" --cuda-path "$cuda" --clang "$clang"
fi
corpus=$(cd "$corpus" && pwd)
ntu=$(grep -c . "$corpus/clang_commands.txt")
work=$(mktemp -d /tmp/kloop-extract-bench.XXXXXX)
results=$work/results.tsv
: >"$results"

# measure LABEL N REP -- CMD...: appends "label N rep wall_s maxrss_kb rc" to $results.
measure() {
  local label=$1 n=$2 rep=$3; shift 4
  local tf=$work/time.$label.$n.$rep log=$work/log.$label.$n.$rep rc=0 t0 t1 rss
  t0=$(date +%s.%N)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v -o "$tf" "$@" >"$log" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$tf")
  else
    python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$log" "$@" >"$tf" || rc=$?
    t1=$(date +%s.%N)
    rss=$(tail -n 1 "$tf")
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$n" "$rep" \
    "$(python3 -c "print(f'{$t1 - $t0:.3f}')")" "${rss:-0}" "$rc" >>"$results"
  # Echo each measurement as it lands, so a run cut short still leaves its numbers in the log.
  echo "    $(tail -n 1 "$results" | tr '\t' ' ')  (label jobs rep wall_s maxrss_kb rc)" >&2
  if [ "$rc" != 0 ]; then
    echo "run.sh: $label -j$n (rep $rep) exited $rc; last lines of $log:" >&2
    tail -n 5 "$log" >&2
  fi
}

echo "kloop extract benchmark: $ntu TUs in $corpus; jobs: $jobs; repetitions: $reps"
echo "clang: $clang ($("$clang" --version | head -n 1))"
[ "$clang_only" = 1 ] || echo "kloop: $kloop"
for rep in $(seq 1 "$reps"); do
  for n in $jobs; do
    echo "  rep $rep, -j$n: clang ..." >&2
    measure clang "$n" "$rep" -- xargs -d '\n' -P "$n" -n 1 sh -c 'eval "$1"' sh <"$corpus/clang_commands.txt"
    if [ "$clang_only" = 0 ]; then
      echo "  rep $rep, -j$n: kloop ..." >&2
      # Cold: an empty cache directory of its own (what a first run costs, stores included);
      # warm: the same command again over that directory, nothing changed.
      measure kloop "$n" "$rep" -- "$kloop" extract -p "$corpus" -j "$n" -o "$work/kloop.$n.$rep.json" \
        --cache-dir "$work/cache.$n.$rep"
      echo "  rep $rep, -j$n: kloop again (cache) ..." >&2
      measure kloop-warm "$n" "$rep" -- "$kloop" extract -p "$corpus" -j "$n" -o "$work/warm.$n.$rep.json" \
        --cache-dir "$work/cache.$n.$rep"
      cmp -s "$work/kloop.$n.$rep.json" "$work/warm.$n.$rep.json" ||
        echo "run.sh: WARNING: the cached inventory differs from the parsed one (-j$n rep $rep)" >&2
    fi
  done
done

python3 - "$results" "$work" "$corpus" "$ntu" "${out:-}" <<'PY'
import glob, json, os, statistics, sys
results, work, corpus, ntu, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
rows = [l.rstrip("\n").split("\t") for l in open(results) if l.strip()]
data = {}
for label, n, rep, wall, rss, rc in rows:
    d = data.setdefault((label, int(n)), {"wall": [], "rss": [], "rc": []})
    d["wall"].append(float(wall)); d["rss"].append(int(rss)); d["rc"].append(int(rc))
ns = sorted({n for _, n in data})
med = lambda k, f: statistics.median(data[k][f]) if k in data else None
lines = []
p = lines.append
p(f"Corpus: {ntu} TUs ({corpus}). Medians over {len(data[('clang', ns[0])]['wall'])} repetition(s).")
p("")
p("| -j | clang wall s | kloop wall s | kloop/clang | clang speed-up vs -j1 | kloop speed-up vs -j1 "
  "| clang peak RSS MB (1 process; xN bound) | kloop peak RSS MB | kloop again (cache) s | again/first "
  "| exit codes clang/kloop |")
p("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
c1, k1 = med(("clang", ns[0]), "wall"), med(("kloop", ns[0]), "wall")
for n in ns:
    cw, kw = med(("clang", n), "wall"), med(("kloop", n), "wall")
    crss, krss = med(("clang", n), "rss"), med(("kloop", n), "rss")
    ww = med(("kloop-warm", n), "wall")
    crc = ",".join(sorted(set(map(str, data[("clang", n)]["rc"]))))
    krc = ",".join(sorted(set(map(str, data[("kloop", n)]["rc"])))) if ("kloop", n) in data else "-"
    f = lambda v, fmt: (fmt % v) if v is not None else "-"
    p(f"| {n} | {cw:.2f} | {f(kw, '%.2f')} | {f(kw / cw if kw else None, '%.3f')} "
      f"| {c1 / cw:.2f} | {f(k1 / kw if kw else None, '%.2f')} "
      f"| {crss / 1024:.0f} ({n * crss / 1024:.0f}) | {f(krss / 1024 if krss is not None else None, '%.0f')} "
      f"| {f(ww, '%.2f')} | {f(ww / kw if ww and kw else None, '%.3f')} "
      f"| {crc}/{krc} |")
p("")
p("Targets (issues 2, 11): kloop/clang <= 1.2; near-linear speed-up with -j; again/first <= 0.05.")
if any(l == "clang" and rc != "0" for l, _, _, _, _, rc in rows):
    p("WARNING: some clang++ runs failed: the corpus does not parse cleanly; see the logs in " + work)

# Best-effort sanity check of what kloop found (the inventory schema is kloop's own).
def count(obj, key):
    if isinstance(obj, dict):
        return sum((len(v) if k == key and isinstance(v, list) else count(v, key)) for k, v in obj.items())
    if isinstance(obj, list):
        return sum(count(v, key) for v in obj)
    return 0
jsons = sorted(glob.glob(os.path.join(work, "kloop.*.json")))
if jsons:
    try:
        inv = json.load(open(jsons[-1]))
        man = json.load(open(os.path.join(corpus, "manifest.json")))
        mk = sum(len(e["kernels"]) for e in man["entries"])
        ml = sum(sum(e["launches"].values()) for e in man["entries"])
        # Top-level lists when the inventory has them, else every list under that key.
        top = lambda key: len(inv[key]) if isinstance(inv, dict) and isinstance(inv.get(key), list) else count(inv, key)
        nlaunch = top("launch_sites") if isinstance(inv, dict) and "launch_sites" in inv else top("launches")
        p(f"kloop inventory ({os.path.basename(jsons[-1])}): {top('kernels')} kernels, {nlaunch} "
          f"launch sites; the generator wrote {mk} kernel definitions per TU (headers counted "
          f"in each TU that includes them, templates once) and {ml} launch sites.")
    except Exception as e:  # the inventory is kloop's; report, never fail the benchmark on it
        p(f"(could not read the kloop inventory: {e})")
p(f"Raw timings and logs: {work}")
text = "\n".join(lines)
print(text)
if out:
    with open(out, "w") as fh:
        fh.write(text + "\n")
PY
