"""Prints, per case of gpu-replay-device-check.test, where each worker run checked, whether the candidate
matched, and whether the two runs' per-launch mismatch messages are equal (then the first one)."""
import json
import os
import sys

d = sys.argv[1]
for case in ("aa", "wrong", "exact", "rel"):
    dev, host = (json.load(open(os.path.join(d, "%s.%s.json" % (case, side)))) for side in ("dev", "host"))
    mis = lambda j: [l["candidate"]["mismatch"] for l in j["launches"]]
    print("%s: checked on %s / %s; candidate match %s / %s; mismatches %s" % (
        case, dev["checked_on"], host["checked_on"], dev["candidate_match"], host["candidate_match"],
        "equal" if mis(dev) == mis(host) else "DIFFER: %r vs %r" % (mis(dev), mis(host))))
    first = [m for m in mis(dev) if m]
    if first:
        print("%s: %s" % (case, first[0]))
