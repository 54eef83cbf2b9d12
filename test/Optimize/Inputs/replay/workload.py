#!/usr/bin/env python3
# The workload of test/Optimize/replay-timing.test, run as it is: `workload.py SOURCE_DIR ITERS SEED`.
# Under capture (KLOOP_CUPTI_CAPTURE_DIR set) it writes what libkloop-cupti.so would, through
# test/Capture/Inputs/fake_capture_app.py, and appends a line to $KLOOP_TEST_CAPTURE_LOG; otherwise it
# is the fake capture workload (test/Measure/Inputs/cmp/fake_capture_workload.py) of the source
# directory's variant. With $KLOOP_TEST_FAIL_RUNS_IN=TEXT, a run whose output path (KLOOP_CUPTI_OUT) holds
# TEXT fails (exit 3): test/Optimize/replay-agreement.test's failing workload compare.
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
if os.environ.get("KLOOP_TEST_FAIL_RUNS_IN") and os.environ["KLOOP_TEST_FAIL_RUNS_IN"] in os.environ.get("KLOOP_CUPTI_OUT", ""):
    sys.stderr.write("workload.py: failing as KLOOP_TEST_FAIL_RUNS_IN asks\n")
    sys.exit(3)
if os.environ.get("KLOOP_CUPTI_CAPTURE_DIR"):
    with open(os.environ["KLOOP_TEST_CAPTURE_LOG"], "a") as f:
        f.write("capture of %s\n" % open(os.path.join(sys.argv[1], "variant")).read().strip())
    os.execv(sys.executable, [sys.executable, os.path.join(here, "..", "..", "..", "Capture", "Inputs",
                                                            "fake_capture_app.py"), "ok"])
os.execv(sys.executable, [sys.executable, os.path.join(here, "..", "..", "..", "Measure", "Inputs", "cmp",
                                                        "fake_capture_workload.py")] + sys.argv[1:])
