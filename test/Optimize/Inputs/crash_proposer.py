#!/usr/bin/env python3
# A command proposer for test/Optimize/apply-crash.test: round 1 proposes code that crashes clang
# (clang's `#pragma clang __debug crash` through _Pragma), later rounds a plain set_constant. It
# appends the history it was shown to the file named by argv[1], one JSON line per round.
import json, sys
ctx = json.load(sys.stdin)
with open(sys.argv[1], "a") as f:
    f.write(json.dumps([{k: h[k] for k in ("round", "outcome", "reason") if k in h} for h in ctx["history"]]) + "\n")
if ctx["round"] == 1:
    edit = {"kind": "replace_stmt", "id": "scale", "stmt": 1,
            "code": "_Pragma(\"clang __debug crash\") int i = blockIdx.x * blockDim.x + threadIdx.x;"}
else:
    edit = {"kind": "set_constant", "id": "macro:BLOCK", "value": 256}
print(json.dumps({"version": 1, "edits": [edit], "rationale": "round %d" % ctx["round"]}))
