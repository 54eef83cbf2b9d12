#!/usr/bin/env python3
# A stand-in for `kloop apply PROPOSAL FILE... --in-place --root DIR -- ARGS` in
# test/Optimize/timing-first.test: applies the proposal like fake_apply.py (set_constant of
# macros), then makes the candidate behave as the fake capture workload's variant named by
# $KLOOP_TEST_CAND_VARIANT (base, fast, wrong; test/Measure/Inputs/cmp/fake_capture_workload.py)
# by writing it to DIR/variant.
import os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
rc = subprocess.call([sys.executable, os.path.join(here, "..", "fake_apply.py")] + sys.argv[1:])
if rc != 0:
    sys.exit(rc)
args = sys.argv[1:]
root = args[args.index("--root") + 1]
with open(os.path.join(root, "variant"), "w") as f:
    f.write(os.environ["KLOOP_TEST_CAND_VARIANT"] + "\n")
