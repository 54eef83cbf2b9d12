#!/usr/bin/env python3
# A stand-in for kloop's apply (`--apply-command`) in test/Optimize/timing-first.test and others:
# applies the proposal like fake_apply.py (set_constant of macros), prints its apply outcome, and when
# it applied makes the candidate behave as the fake capture workload's variant named by
# $KLOOP_TEST_CAND_VARIANT (base, fast, wrong; test/Measure/Inputs/cmp/fake_capture_workload.py)
# by writing it to DIR/variant.
import json, os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
r = subprocess.run([sys.executable, os.path.join(here, "..", "fake_apply.py")] + sys.argv[1:],
                   stdout=subprocess.PIPE, text=True)
if r.returncode != 0:
    sys.exit(r.returncode)
sys.stdout.write(r.stdout)
if json.loads(r.stdout)["applied"]:
    args = sys.argv[1:]
    root = args[args.index("--root") + 1]
    with open(os.path.join(root, "variant"), "w") as f:
        f.write(os.environ["KLOOP_TEST_CAND_VARIANT"] + "\n")
