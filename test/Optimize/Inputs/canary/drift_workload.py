#!/usr/bin/env python3
"""The fake capture workload (test/Measure/Inputs/cmp/fake_capture_workload.py), with two knobs for the
drift canary and `kloop compare --recheck` tests:

    drift_workload.py SOURCE_DIR ITERS SEED

KLOOP_TEST_DRIFT_COUNTER=FILE  the baseline (variant "base") runs hot on every second run: a counter in
    FILE counts its runs, and the launches of every odd-numbered run take 10% longer. In an interleaved
    A/A (A B A B ...) one side always lands on the hot runs. A slow monotone drift would not do: the
    interleaving cancels it, which is what it is for; what an A/A can show is a side-dependent effect.
KLOOP_TEST_CAND_SCALE=X        every launch of another variant (the candidate) takes X times as long.
"""
import json, os, runpy, sys

here = os.path.dirname(os.path.abspath(__file__))
runpy.run_path(os.path.join(here, "..", "..", "..", "Measure", "Inputs", "cmp", "fake_capture_workload.py"),
               run_name="__main__")
variant = open(os.path.join(sys.argv[1], "variant")).read().strip()
scale = 1.0
counter = os.environ.get("KLOOP_TEST_DRIFT_COUNTER")
if variant == "base" and counter:
    n = int(open(counter).read()) if os.path.exists(counter) else 0
    with open(counter, "w") as f:
        f.write("%d\n" % (n + 1))
    scale = 1.10 if n % 2 else 1.0
elif variant != "base":
    scale = float(os.environ.get("KLOOP_TEST_CAND_SCALE", "1"))
if scale != 1.0:
    out = os.environ["KLOOP_CUPTI_OUT"]
    profile = json.load(open(out))
    for l in profile["launches"]:
        l["duration_ns"] = int(round(l["duration_ns"] * scale))
        l["end_ns"] = l["start_ns"] + l["duration_ns"]
    with open(out, "w") as f:
        json.dump(profile, f)
