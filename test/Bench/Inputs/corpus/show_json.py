#!/usr/bin/env python3
"""Prints bench/corpus/run.sh's JSON document (argv[1]) as one line per fact, for FileCheck."""
import json
import os
import sys

doc = json.load(open(sys.argv[1]))
for p in doc["projects"]:
    s = p["tu_status"]
    print("%s tus=%d ok=%d partial=%d lost=%d nvcc=%s matched=%d" % (
        p["name"], p["tus"], s["ok"], s["partial"], s["lost"], ",".join(p["nvcc_symbol_names"]), p["matched"]))
    for x in p["lost"]:
        print("%s lost %s: %s" % (p["name"], os.path.basename(x["file"]), x["first_error"]))
    for x in p["nvcc_failed"]:
        print("%s nvcc failed %s: %s" % (p["name"], os.path.basename(x["file"]), x["first_error"]))
