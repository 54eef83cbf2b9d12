#!/usr/bin/env python3
"""Checks a capture of Inputs/replay_app.cu (gpu-capture-replay.test) against what the program computes:
the parameter layout, the pointer words found in the struct and at the interior pointer, and the
before/after contents of every allocation, decompressed from the blobs and hashed (FNV-1a 64).

usage: check_replay_capture.py CAPTURE_DIR     prints one line per check, then PASS (exit 0) or FAIL (exit 1)
"""
import array
import json
import os
import sys
import zlib

cap = sys.argv[1]
m = json.load(open(os.path.join(cap, "manifest.json")))
failed = []


def check(ok, what):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        failed.append(what)


def fnv64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def blob(name):
    raw = open(os.path.join(cap, "blobs", name), "rb").read()
    data = zlib.decompress(raw) if m["compression"] == "zlib" else raw
    h, n = name.split("-")
    check(len(data) == int(n) and "%016x" % fnv64(data) == h, "blob %s holds the bytes its name says" % name)
    return data


def floats(data):
    a = array.array("f")
    a.frombytes(data)
    return a


n = 1 << 16
hx = [0.5 * (i % 97) for i in range(n)]
hy = [float(i % 13) - 6.0 for i in range(n)]
hz = [float(i % 31) for i in range(n + 256)]

by_name = {l["kernel"]: l for l in m["launches"]}
check(m["schema"] == "kloop-capture/1", "schema")
check(sorted(by_name) == ["_Z12saxpy_structif4Bufs", "_Z14scale_interiorPfif"], "captured kernels")

s = by_name["_Z12saxpy_structif4Bufs"]
check(s["seq"] == 0, "saxpy_struct: the first of its 3 launches")
check(s["grid"] == [256, 1, 1] and s["block"] == [256, 1, 1] and s["dynamic_smem"] == 0, "saxpy_struct: configuration")
check(s["params"] == [{"offset": 0, "size": 4}, {"offset": 4, "size": 4}, {"offset": 8, "size": 16}],
      "saxpy_struct: layout (int, float, 16-byte struct)")
check([p["offset"] for p in s["pointers"]] == [8, 16], "saxpy_struct: pointers found inside the struct")
x, y = s["allocations"]
check(x["bytes"] == 4 * n and y["bytes"] == 4 * n, "saxpy_struct: allocation sizes")
check(x["before"] == x["after"], "saxpy_struct: x unchanged by the launch")
xb = floats(blob(x["before"]))
yb, ya = floats(blob(y["before"])), floats(blob(y["after"]))
check(list(xb) == hx and list(yb) == hy, "saxpy_struct: inputs before the launch")
check(all(ya[i] == yb[i] + 2.0 * xb[i] for i in range(n)), "saxpy_struct: reference y = 2x + y")

z = by_name["_Z14scale_interiorPfif"]
check(len(z["pointers"]) == 1 and z["pointers"][0]["offset"] == 0, "scale_interior: one pointer word")
za = z["allocations"][0]
check(int(z["pointers"][0]["value"], 16) - int(za["base"], 16) == 1024, "scale_interior: interior pointer base + 1024")
check(za["bytes"] == 4 * (n + 256), "scale_interior: the whole allocation")
zb, zz = floats(blob(za["before"])), floats(blob(za["after"]))
check(list(zb) == hz, "scale_interior: input before the launch")
check(list(zz[:256]) == hz[:256] and all(zz[256 + i] == 3.0 * hz[256 + i] for i in range(n)),
      "scale_interior: reference (the first 256 floats untouched)")
check(m["refusals"] == [] and m["errors"] == [], "no refusals, no errors")
print("FAIL" if failed else "PASS")
sys.exit(1 if failed else 0)
