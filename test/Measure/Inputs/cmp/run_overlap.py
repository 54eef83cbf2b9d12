#!/usr/bin/env python3
"""Reads a FAKE_RUN_LOG (fake_capture_workload.py) and prints, for FileCheck:
    runs: N verify, M timing
    most verification runs at once: K
    timing runs that shared the time with another run: J
"""
import sys

spans = {}
for line in open(sys.argv[1]):
    event, label, kind, t = line.split()
    spans.setdefault((label, kind), []).append((event, float(t)))
runs = []  # (start, end, kind); a label run twice (made again alone) counts twice
for (label, kind), events in spans.items():
    starts = [t for e, t in events if e == "start"]
    ends = [t for e, t in events if e == "end"]
    runs += [(s, e, kind) for s, e in zip(sorted(starts), sorted(ends))]

def overlaps(a, b):
    return a[0] < b[1] and b[0] < a[1]

most = max((sum(1 for r in runs if r[2] == "verify" and r[0] <= t < r[1])
            for t, _, kind in runs if kind == "verify"), default=0)
shared = sum(1 for a in runs if a[2] == "timing" and any(b is not a and overlaps(a, b) for b in runs))
print("runs: %d verify, %d timing" % (sum(r[2] == "verify" for r in runs), sum(r[2] == "timing" for r in runs)))
print("most verification runs at once: %d" % most)
print("timing runs that shared the time with another run: %d" % shared)
