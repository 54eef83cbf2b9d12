#!/usr/bin/env python3
"""Prints what test/Measure/gpu-drain.test checks of an A/A `kloop compare -o` JSON (kloop-compare/1):
whether it was accepted, the candidate failure, and per kernel and shape whether the 95% CI of the
speed-up contains 1 and the tail, output and determinism rules held.

    aa_facts.py COMPARE.json
"""
import json, sys

c = json.load(open(sys.argv[1]))
print("accepted: %s" % ("yes" if c["accepted"] else "no"))
print("candidate failure: %s" % (c["candidate_failure"] or "none"))
for s in (c["verdict"] or {}).get("shapes", []):
    ci = s["speedup"]
    contains = ci is not None and ci["lower"] <= 1.0 <= ci["upper"]
    print("%s %s: speed-up %s; CI contains 1: %s; tail ok: %s; outputs ok: %s; determinism ok: %s" % (
        s["shape"], s["kernel"],
        "none" if ci is None else "%.4fx [%.4f, %.4f]" % (ci["estimate"], ci["lower"], ci["upper"]),
        "yes" if contains else "no", "yes" if s["tail_ok"] else "no", "yes" if s["outputs_ok"] else "no",
        "yes" if s["determinism_ok"] else "no"))
