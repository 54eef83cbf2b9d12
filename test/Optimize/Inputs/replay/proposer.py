#!/usr/bin/env python3
# A command proposer for test/Optimize/replay-timing.test: one set_constant of the macro named by
# $KLOOP_TEST_MACRO (SCALE, used only inside the kernel; BLOCK, used by the launch configuration).
import json, os, sys
ctx = json.load(sys.stdin)
macro = os.environ.get("KLOOP_TEST_MACRO", "SCALE")
print(json.dumps({"version": 1, "edits": [{"kind": "set_constant", "id": "macro:" + macro, "value": 256}],
                  "rationale": "set " + macro, "provenance": {"model": "fixed-script"}}))
