#!/usr/bin/env bash
# Builds every example exactly as its .kloop.yaml says and runs it at every shape and every
# seed (search seeds and held-out seeds), printing one PASS/FAIL line per run and a summary.
# Needs an NVIDIA GPU (sm_90) and nvcc (CUDA_HOME, PATH or /usr/local/cuda).
#
#   examples/run_all_gpu.sh [--build-dir DIR] [--iters N] [--seeds N] [--only NAME]
#
# Also checks that the bytes per launch each harness prints match the yaml's `bytes`.
# Exit status: 0 when every build and run passed, 1 otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v nvcc >/dev/null 2>&1; then
  for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then export PATH="$d/bin:$PATH"; break; fi
  done
fi
command -v nvcc >/dev/null 2>&1 || { echo "run_all_gpu.sh: nvcc not found" >&2; exit 1; }
exec python3 - "$here" "$@" <<'PY'
import argparse, os, re, shlex, subprocess, sys, time

here = sys.argv[1]
ap = argparse.ArgumentParser(prog="run_all_gpu.sh")
ap.add_argument("--build-dir", default=os.path.join(here, "build"))
ap.add_argument("--iters", type=int, default=None, help="override the yaml's iters")
ap.add_argument("--seeds", type=int, default=None, help="run seeds 0..N-1 (default: all of the yaml's)")
ap.add_argument("--only", default=None, help="run only this example")
a = ap.parse_args(sys.argv[2:])
build_dir = os.path.abspath(a.build_dir)
os.makedirs(build_dir, exist_ok=True)


def parse(path):
    """Reads the subset of the .kloop.yaml format the examples use (flow-style shapes)."""
    y = {"shapes": []}
    section = None
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"^(\w+):\s*(.*)$", line)
        if m:
            section, val = m.group(1), m.group(2).strip()
            if val:
                y[section] = val.strip('"')
            continue
        m = re.match(r'^\s+command:\s*"(.*)"\s*$', line)
        if m:
            y[section + ".command"] = m.group(1)
            continue
        m = re.match(r"^\s+- \{name: ([\w.-]+), args: \{(.*?)\}, bytes: (\d+), flops: (\d+)(, held_out: true)?\}", line)
        if m and section == "shapes":
            args = dict(re.findall(r'(\w+): "([^"]*)"', m.group(2)))
            y["shapes"].append(dict(name=m.group(1), args=args, bytes=int(m.group(3)),
                                    flops=int(m.group(4)), held_out=bool(m.group(5))))
    return y


def subst(cmd, values):
    def rep(m):
        k = m.group(1)
        if k not in values:
            raise SystemExit(f"unknown placeholder {{{k}}} in: {cmd}")
        return str(values[k])
    return re.sub(r"\{(\w+)\}", rep, cmd)


results = []
names = sorted(d for d in os.listdir(here) if os.path.isfile(os.path.join(here, d, ".kloop.yaml")))
if a.only:
    names = [n for n in names if n == a.only]
    if not names:
        sys.exit(f"run_all_gpu.sh: no example named {a.only}")
for name in names:
    src = os.path.join(here, name)
    y = parse(os.path.join(src, ".kloop.yaml"))
    base = {"build_dir": build_dir, "source_dir": src}
    bcmd = subst(y["build.command"], base)
    t = time.time()
    b = subprocess.run(bcmd, shell=True, cwd=src, capture_output=True, text=True)
    if b.returncode != 0:
        print(f"FAIL  {name:10s} build ({bcmd})\n{b.stdout}{b.stderr}", flush=True)
        results.append((name, "build", False))
        continue
    print(f"built {name:10s} in {time.time() - t:.1f} s", flush=True)
    iters = a.iters if a.iters is not None else int(y.get("iters", 20))
    nseeds = a.seeds if a.seeds is not None else int(y.get("seeds", 1)) + int(y.get("held_out_seeds", 0))
    for sh in y["shapes"]:
        for seed in range(nseeds):
            vals = dict(base, seed=seed, iters=iters, **sh["args"])
            rcmd = subst(y["run.command"], vals)
            t = time.time()
            try:
                r = subprocess.run(rcmd, shell=True, cwd=src, capture_output=True, text=True, timeout=600)
                out, rc = r.stdout + r.stderr, r.returncode
            except subprocess.TimeoutExpired:
                out, rc = "timeout", 124
            ok = rc == 0
            m = re.search(r"bytes_per_launch=(\d+)", out)
            note = ""
            if not m or int(m.group(1)) != sh["bytes"]:
                ok = False
                note = f" bytes_per_launch {m.group(1) if m else '?'} != yaml {sh['bytes']}"
            ev = re.search(r"event_time_per_launch_us=([\d.]+)", out)
            err = re.search(r"max_abs_err=(\S+) max_rel_err=(\S+)", out)
            tag = "PASS" if ok else "FAIL"
            ho = " (held-out shape)" if sh["held_out"] else ""
            print(f"{tag}  {name:10s} {sh['name']:16s} seed={seed} rc={rc} "
                  f"event_us={ev.group(1) if ev else '?'} "
                  f"max_abs_err={err.group(1) if err else '?'} wall={time.time() - t:.1f}s{ho}{note}",
                  flush=True)
            if not ok:
                print("      " + rcmd + "\n" + "\n".join("      | " + l for l in out.splitlines()[-15:]), flush=True)
            results.append((name, sh["name"], ok))

failed = [r for r in results if not r[2]]
print(f"\nrun_all_gpu.sh: {len(results) - len(failed)} of {len(results)} passed")
sys.exit(1 if failed else 0)
PY
