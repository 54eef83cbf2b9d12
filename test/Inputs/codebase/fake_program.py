#!/usr/bin/env python3
"""The program of the tiny project (test/Optimize/codebase*.test), run under libkloop-cupti.so without a GPU:

    fake_program.py BUILD_DIR

It is test/Measure/Inputs/cmp/fake_capture_workload.py on BUILD_DIR (BUILD_DIR/variant, which
project/build.sh wrote) with 12 iterations and seed 0: saxpy launches of 2000 ns for "base", 1000 ns for
"fast", wrong outputs for "wrong"; then it adds to the profile launches of five more kernels, in proportion
to saxpy's time S: cub::EmptyKernel S/4 (a library kernel), scale S/5, zero 2S/15 (defined by a macro),
init S/20 (no source in the compilation database), saxpy_small S/30 (in saxpy.cu, like saxpy). A profile
of the base build thus reads saxpy 60%, cub 15%, scale 12%, zero 8%, init 3%, saxpy_small 2%.
$FAKE_PROGRAM_FAIL makes it fail (exit 3) before any kernel ran.
"""
import json, os, runpy, sys

build = sys.argv[1]
if os.environ.get("FAKE_PROGRAM_FAIL"):
    sys.stderr.write("fake_program: cannot open input file data.bin\n")
    sys.exit(3)
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = [sys.argv[0], build, "12", "0"]
try:
    runpy.run_path(os.path.join(here, "..", "..", "Measure", "Inputs", "cmp", "fake_capture_workload.py"),
                   run_name="__main__")
except SystemExit as e:
    if e.code:
        raise
out = os.environ["KLOOP_CUPTI_OUT"]
profile = json.load(open(out))
launches = profile["launches"]
saxpy = sum(l["duration_ns"] for l in launches if l["name"].startswith("saxpy("))
t = max(l["end_ns"] for l in launches) + 1000
seq = max(l["seq"] for l in launches) + 1
for mangled, name, num, den in [("_ZN3cub11EmptyKernelIvEEvv", "void cub::EmptyKernel<void>()", 1, 4),
                                ("_Z5scaleiPKfPf", "scale(int, float const*, float*)", 1, 5),
                                ("_Z4zeroPf", "zero(float*)", 2, 15),
                                ("_Z4initPf", "init(float*)", 1, 20),
                                ("_Z11saxpy_smalliPf", "saxpy_small(int, float*)", 1, 30)]:
    d = saxpy * num // den
    launches.append({"seq": seq, "kernel": mangled, "name": name, "grid": [8, 1, 1], "block": [128, 1, 1],
                     "registers": 16, "static_smem": 0, "dynamic_smem": 0, "stream": 7, "context": 1,
                     "start_ns": t, "end_ns": t + d, "duration_ns": d})
    seq += 1
    t += d + 1000
with open(out + ".tmp", "w") as f:
    json.dump(profile, f)
os.replace(out + ".tmp", out)
