#!/usr/bin/env python3
# The workload of test/Optimize/replay-timing.test, run as it is: `workload.py SOURCE_DIR ITERS SEED`.
# Under capture (KLOOP_CUPTI_CAPTURE_DIR set) it writes what libkloop-cupti.so would, through
# test/Capture/Inputs/fake_capture_app.py, and appends a line to $KLOOP_TEST_CAPTURE_LOG; otherwise it
# is the fake capture workload (test/Measure/Inputs/cmp/fake_capture_workload.py) of the source
# directory's variant.
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
if os.environ.get("KLOOP_CUPTI_CAPTURE_DIR"):
    with open(os.environ["KLOOP_TEST_CAPTURE_LOG"], "a") as f:
        f.write("capture of %s\n" % open(os.path.join(sys.argv[1], "variant")).read().strip())
    os.execv(sys.executable, [sys.executable, os.path.join(here, "..", "..", "..", "Capture", "Inputs",
                                                            "fake_capture_app.py"), "ok"])
os.execv(sys.executable, [sys.executable, os.path.join(here, "..", "..", "..", "Measure", "Inputs", "cmp",
                                                        "fake_capture_workload.py")] + sys.argv[1:])
