#!/usr/bin/env python3
# Stands in for the replay worker kloop-replay (docs/capture.md) in the test/Optimize/replay-*.test files:
#   fake_worker.py CAPTURE --serve ...                       (kloop optimize: one worker per search)
#   fake_worker.py CAPTURE --cubin B [--candidate-cubin C] --iters N ...           (single shot)
# The "cubins" are the source directories' variant files (search.cubin_command copies them): base
# launches take 2000 + i ns, fast 1000 + i ns, slow 3000 + i ns; with --timer events and --no-gate 500 ns more
# (the host's launch latency that the gate keeps out of the CUDA event interval; CUPTI's records hold none). $KLOOP_TEST_WORKER_MODE: ok (default),
# crash (every candidate faults: the reply says so and the worker exits 1), error (the candidate cubin
# lacks the kernel: exit 2, the worker goes on), mismatch (the candidate's first difference is in allocation 1,
# the capture's written y: exit 1), and, for the first request of the whole test only
# (a marker file beside the log), crash-once, die-once (exits without a reply) and hang-once (never
# answers). Serving, each start appends "start" and each request "B C MODE iters=N" (then, per launch
# configuration the request gives, " SIDE:LAUNCH:grid=X,Y,Z:block=X,Y,Z:smem=S") to
# $KLOOP_TEST_WORKER_LOG; the single shot appends the request line only. With $KLOOP_TEST_SLOW_CAPTURE=D, on
# the capture in a directory named D (kloop optimize's capture/ or capture-SHAPE/) a fast candidate runs slow.
# With --placements N, launch i of each side ran at placement i mod N (the reply's "placements"). With
# --placement-pad-mib M >= 4 too, the reply names the seed the pads were drawn from (--placement-seed, then
# each request's placement_seed) and a pad per placement; a serving worker's start line says "pads=M seed=S"
# and each request line ends with " placement_seed=S" when the request gives one.
import json, os, sys, time
args = sys.argv[1:]
opt = lambda name: args[args.index(name) + 1]
mode = os.environ.get("KLOOP_TEST_WORKER_MODE", "ok")
log = os.environ["KLOOP_TEST_WORKER_LOG"]
pad_mib = int(opt("--placement-pad-mib")) if "--placement-pad-mib" in args else 0
seed = [int(opt("--placement-seed")) if "--placement-seed" in args else 0]
assert os.path.exists(os.path.join(args[0], "manifest.json")), "no capture at " + args[0]


def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")


def first_time():
    marker = log + ".once"
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True


def result(base_cubin, cand_cubin, iters, configs=None, placement_seed=None):
    base = open(base_cubin).read().strip()
    cand = open(cand_cubin).read().strip() if cand_cubin else None
    slow_here = os.path.basename(os.path.normpath(args[0])) == os.environ.get("KLOOP_TEST_SLOW_CAPTURE")
    if slow_here and cand == "fast":
        cand = "slow"
    note("%s %s %s iters=%d" % (base, cand, mode, iters) +
         "".join(" %s:%d:grid=%s:block=%s:smem=%d" % (c["side"], c["launch"], ",".join(map(str, c["grid"])),
                                                      ",".join(map(str, c["block"])), c["shared_memory"])
                 for c in configs or []) +
         ("" if placement_seed is None else " placement_seed=%d" % placement_seed))
    start = {"base": 2000, "fast": 1000, "slow": 3000}
    timer = opt("--timer") if "--timer" in args else "events"
    gate = "--no-gate" not in args and timer == "events"
    ns = lambda v: [start[v] + (0 if gate or timer == "cupti" else 500) + i for i in range(iters)]
    placements = copies_used()["placements"]
    side = lambda v, ok: {"times_ns": ns(v), "median_ns": ns(v)[iters // 2], "match": ok, "mismatch": None,
                          **({"placements": [i % placements for i in range(iters)]} if placements > 1 else {})}
    out = {"schema": "kloop-replay/1", "capture": args[0], "device": "Fake GPU", "iters": iters, "relocated": False,
           "launches": [{"index": 0, "seq": 0, "kernel": "_Z5saxpyifPKfPf",
                         "name": "saxpy(int, float, float const*, float*)",
                         "poisoned": [], "baseline": side(base, True), "candidate": side(cand or base, True)}],
           "baseline_match": True, "candidate_match": True, "failed": None, "timed_out": False, "error": None,
           "gated": gate, "timer": timer, **copies_used()}
    if cand is None:
        del out["launches"][0]["candidate"]
        out["candidate_match"] = None
    malform_placements(out)
    code = 0
    if mode == "crash" or (mode == "crash-once" and first_time()):
        out["launches"][0]["candidate"] = {"times_ns": [], "median_ns": 0, "match": False, "mismatch": None}
        out.update(candidate_match=False, failed="candidate",
                   error="candidate: the kernel faulted: CUDA_ERROR_ILLEGAL_ADDRESS")
        code = 1
    elif mode == "mismatch":
        out["launches"][0]["candidate"].update(
            match=False, mismatch="iteration 0: output allocation 1 (16 bytes at captured address 0x7f0000002000) "
            "byte 0 (element 0): expected 40400000 (3), got 0 (0)", mismatch_allocation=1)
        out.update(candidate_match=False)
        code = 1
    elif mode == "error":
        out["launches"] = []
        out.update(candidate_match=None, error="%s: no kernel _Z5saxpyifPKfPf in the cubin" % cand_cubin)
        code = 2
    elif mode == "die-once" and first_time():
        os._exit(9)
    elif mode == "hang-once" and first_time():
        time.sleep(3600)
    return out, code


def malform_placements(out):
    """$KLOOP_TEST_WORKER_PLACEMENTS breaks the reply's placements: short (the baseline's list one entry
    short), disjoint (the candidate at another placement than the baseline), beyond (an entry not below
    the count), more (a count above the one asked for)."""
    how = os.environ.get("KLOOP_TEST_WORKER_PLACEMENTS")
    sides = out["launches"][0] if out["launches"] else {}
    if how == "short":
        sides["baseline"]["placements"].pop()
    elif how == "disjoint":
        sides["candidate"]["placements"] = [(p + 1) % out["placements"] for p in sides["candidate"]["placements"]]
    elif how == "beyond":
        sides["baseline"]["placements"][0] = out["placements"]
        sides["candidate"]["placements"][0] = out["placements"]
    elif how == "more":
        out["placements"] += 1


def copies_used():
    """The worker's "l2", "placements" and "train" (and their notes): with KLOOP_TEST_WORKER_SETS=unusable no copy at
    other addresses can be made, so rotate-sets falls back to rotate and the launches are timed at one placement."""
    mode = opt("--l2") if "--l2" in args else "steady"
    asked = int(opt("--placements")) if "--placements" in args else 1
    if os.environ.get("KLOOP_TEST_WORKER_SETS") != "unusable":
        train = int(opt("--train")) if mode == "rotate-sets" and "--back-to-back" in args and "--train" in args else 0
        pads = {"placement_seed": seed[0], "placement_pads_mib": [(seed[0] + i) % max(pad_mib // 2, 1) * 2
                                                                  for i in range(asked)]}
        return {"l2": mode, "placements": asked, **({"train": train} if train else {}),
                **(pads if pad_mib >= 4 and asked > 1 else {})}
    why = ("allocation 0 of launch 0 (captured address 0x7f0000000000) holds a pointer into a captured allocation "
           "at byte 8: copies at other addresses would use the original's data")
    out = {"l2": mode, "placements": 1}
    if mode == "rotate-sets":
        out.update(l2="rotate", l2_note="rotate-sets: " + why + "; timed from the rotate model instead")
    if asked > 1:
        out["placement_note"] = "placements: " + why + "; timed at the captured addresses only"
    return out


if "--serve" in args:
    note("start l2=%s timer=%s placements=%s train=%s pads=%d seed=%d" % (
        opt("--l2"), opt("--timer") if "--timer" in args else "events",
        opt("--placements") if "--placements" in args else 1,
        opt("--train") if "--back-to-back" in args and "--train" in args else 0, pad_mib, seed[0]))
    print(json.dumps({"schema": "kloop-replay-serve/1", "ready": True, "device": "Fake GPU", "relocated": False,
                      "launches": 1, "gated": True, "time_ns": {"load": 5000000}, **copies_used()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        seed[0] = req.get("placement_seed", seed[0])
        out, code = result(req["cubin"], req["candidate_cubin"], req["iters"], req.get("configs"),
                           req.get("placement_seed"))
        out["exit"] = code
        out["time_ns"] = {"modules": 1000, "restore": 2000, "timed": 3000, "check": 4000, "total": 10000}
        print(json.dumps(out), flush=True)
        if out["failed"]:
            sys.exit(code)
    sys.exit(0)
out, code = result(opt("--cubin"), opt("--candidate-cubin") if "--candidate-cubin" in args else None,
                   int(opt("--iters")))
print(json.dumps(out, indent=1))
sys.exit(code)
