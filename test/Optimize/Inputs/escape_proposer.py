#!/usr/bin/env python3
# A command proposer whose model name and edit target carry terminal control sequences: an OSC
# title change, a CSI colour, a C1 CSI (U+009B) and a right-to-left override (U+202E).
import json, sys
json.load(sys.stdin)
evil = "x\x1b]0;pwned\x07\x1b[31m\u009b2J\u202eb"
print(json.dumps({"version": 1, "edits": [{"kind": "set_constant", "id": "macro:" + evil, "value": 1}],
                  "rationale": "r" + evil, "provenance": {"model": "m" + evil}}))
