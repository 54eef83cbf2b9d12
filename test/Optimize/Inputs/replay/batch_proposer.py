#!/usr/bin/env python3
# A command proposer that answers batches (kloop optimize --batch; docs/proposers.md, "Batches"), for
# test/Optimize/batch.test. Each call appends "round=R batch=N" to $KLOOP_TEST_PROPOSER_LOG and replies
# with N proposals {"proposals": [...]}: set_constant of SCALE to 10*call + 1, 10*call + 2, ...
# $KLOOP_TEST_BATCH_MODE: ok (default), empty ("proposals": []), toomany (N + 1 proposals), one (a single
# proposal object, no "proposals" key).
import json, os, sys
ctx = json.load(sys.stdin)
log = os.environ["KLOOP_TEST_PROPOSER_LOG"]
calls = sum(1 for _ in open(log)) if os.path.exists(log) else 0
n = ctx.get("batch")
with open(log, "a") as f:
    f.write("round=%s batch=%s\n" % (ctx["round"], n))
mode = os.environ.get("KLOOP_TEST_BATCH_MODE", "ok")
one = lambda i: {"version": 1, "edits": [{"kind": "set_constant", "id": "macro:SCALE", "value": 10 * (calls + 1) + i + 1}],
                 "rationale": "scale %d" % i}
if mode == "one" or n is None:
    print(json.dumps(one(0)))
    sys.exit(0)
count = {"ok": n, "empty": 0, "toomany": n + 1}[mode]
print(json.dumps({"proposals": [one(i) for i in range(count)], "provenance": {"model": "batch-script", "tokens_in": 100,
                                                                              "tokens_out": 30}}))
