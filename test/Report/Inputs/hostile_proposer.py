#!/usr/bin/env python3
# A command proposer for test/Report/html.test: round 1 proposes the fixed set_constant that
# hostile_apply.py applies (and the fake workload makes fast, so it is accepted); every later round
# proposes macro:HOSTILE, which hostile_apply.py refuses with a reason that is HTML markup.
import json, sys
ctx = json.load(sys.stdin)
target = "macro:BLOCK" if not ctx["history"] else "macro:HOSTILE"
print(json.dumps({"version": 1, "edits": [{"kind": "set_constant", "id": target, "value": 256}],
                  "rationale": "report test", "provenance": {"model": "report-script"}}))
