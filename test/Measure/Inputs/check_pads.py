#!/usr/bin/env python3
"""check_pads.py LOG: summarizes the "LABEL PAD" lines fake_capture_workload.py logs (FAKE_PAD_LOG).
Labels are SIDE-SHAPE-sSEED-KIND; KIND tN is timing round N, anything else a verification run."""
import re, sys

verify, rounds = [], {}
for line in open(sys.argv[1]):
    label, pad = line.split()
    side, rest = label.split("-", 1)
    m = re.match(r"(.*)-t(\d+)$", rest)
    if m:
        rounds.setdefault((m.group(1), m.group(2)), {})[side] = pad
    else:
        verify.append(pad)
print("verification runs %d, padded %d" % (len(verify), sum(p != "-" for p in verify)))
equal = sum(1 for r in rounds.values() if len(r) == 2 and r["base"] == r["cand"])
pads = {r["base"] for r in rounds.values()}
print("timing rounds %d, sides with equal pads %d, distinct pads %d" % (len(rounds), equal, len(pads)))
mib = [int(p) / 2**20 for p in pads if p != "-"]
print("pads in MiB multiples of 2 below 128: %s" % all(m % 2 == 0 and 0 <= m < 128 for m in mib))
print("distinct nonzero pads %d" % len(mib))
