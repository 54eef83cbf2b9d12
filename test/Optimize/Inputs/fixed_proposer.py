#!/usr/bin/env python3
# A command proposer: reads the context on stdin, answers one fixed proposal.
import json, sys
ctx = json.load(sys.stdin)
assert "inventory" in ctx and "history" in ctx
print(json.dumps({"version": 1, "edits": [{"kind": "set_constant", "id": "macro:BLOCK", "value": 256}],
                  "rationale": "fixed proposal from a script",
                  "provenance": {"model": "fixed-script", "tokens_in": 10, "tokens_out": 5}}))
