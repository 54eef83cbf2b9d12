#!/usr/bin/env python3
# Stands in for the replay worker kloop-replay (docs/capture.md) in test/Optimize/replay-timing.test:
#   fake_worker.py CAPTURE --cubin B --candidate-cubin C --iters N ...
# The "cubins" are the source directories' variant files (search.cubin_command copies them): base
# launches take 2000 + i ns, fast 1000 + i ns. $KLOOP_TEST_WORKER_MODE: ok (default), crash (the
# candidate faults: exit 1), error (the candidate cubin lacks the kernel: exit 2). Each call appends
# "B C MODE" to $KLOOP_TEST_WORKER_LOG and prints a kloop-replay/1 result.
import json, os, sys
args = sys.argv[1:]
opt = lambda name: args[args.index(name) + 1]
base, cand = open(opt("--cubin")).read().strip(), open(opt("--candidate-cubin")).read().strip()
iters, mode = int(opt("--iters")), os.environ.get("KLOOP_TEST_WORKER_MODE", "ok")
with open(os.environ["KLOOP_TEST_WORKER_LOG"], "a") as f:
    f.write("%s %s %s iters=%d\n" % (base, cand, mode, iters))
assert os.path.exists(os.path.join(args[0], "manifest.json")), "no capture at " + args[0]
ns = lambda v: [(2000 if v == "base" else 1000) + i for i in range(iters)]
side = lambda v, ok: {"times_ns": ns(v), "median_ns": ns(v)[iters // 2], "match": ok, "mismatch": None}
out = {"schema": "kloop-replay/1", "capture": args[0], "device": "Fake GPU", "iters": iters, "relocated": False,
       "launches": [{"index": 0, "seq": 0, "kernel": "_Z5saxpyifPKfPf", "name": "saxpy(int, float, float const*, float*)",
                     "poisoned": [], "baseline": side(base, True), "candidate": side(cand, True)}],
       "baseline_match": True, "candidate_match": True, "failed": None, "timed_out": False, "error": None}
code = 0
if mode == "crash":
    out["launches"][0]["candidate"] = {"times_ns": [], "median_ns": 0, "match": False, "mismatch": None}
    out.update(candidate_match=False, failed="candidate", error="candidate: the kernel faulted: CUDA_ERROR_ILLEGAL_ADDRESS")
    code = 1
elif mode == "error":
    out["launches"] = []
    out.update(candidate_match=None, error="%s: no kernel _Z5saxpyifPKfPf in the cubin" % opt("--candidate-cubin"))
    code = 2
print(json.dumps(out, indent=1))
sys.exit(code)
