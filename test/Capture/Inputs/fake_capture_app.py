#!/usr/bin/env python3
"""Stands in for a CUDA program run under libkloop-cupti.so with KLOOP_CUPTI_CAPTURE_DIR set: writes the
kloop-cupti/1 profile and a kloop-capture/1 capture the way the library would (docs/capture.md), so that
`kloop capture` can be tested without a GPU.

usage: fake_capture_app.py MODE   (ok, refused, corrupt, nomanifest, fail, badversion)
"""
import json
import os
import struct
import sys
import zlib

mode = sys.argv[1]
print("fake app: kernels=%s launches=%s" % (os.environ.get("KLOOP_CUPTI_CAPTURE_KERNELS", "<unset>"),
                                             os.environ.get("KLOOP_CUPTI_CAPTURE_LAUNCHES", "<unset>")))
cap = os.environ.get("KLOOP_CUPTI_CAPTURE_DIR")
out = os.environ.get("KLOOP_CUPTI_OUT")
if mode == "fail":
    sys.stderr.write("fake app: cannot open input.bin\n")
    sys.exit(3)
if not cap or not out:
    sys.exit(0)  # an uncaptured run (kloop capture --cost): prints the same stdout


def fnv64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


os.makedirs(os.path.join(cap, "blobs"), exist_ok=True)


def blob(data):
    name = "%016x-%d" % (fnv64(data), len(data))
    with open(os.path.join(cap, "blobs", name), "wb") as f:
        f.write(zlib.compress(data))
    return name


x = struct.pack("<4f", 1, 2, 3, 4)
y0 = bytes(16)
y1 = struct.pack("<4f", 3, 5, 7, 9)
xb, yb = 0x7f0000001000, 0x7f0000002000
params = struct.pack("<ifQQ", 4, 2.0, xb, yb + 4)
launch = {"seq": 0, "kernel": "_Z5saxpyifPKfPf", "name": "saxpy(int, float, float const*, float*)",
          "grid": [1, 1, 1], "block": [4, 1, 1], "dynamic_smem": 0, "stream": "default", "cooperative": False,
          "cluster": [0, 0, 0], "params": [{"offset": 0, "size": 4}, {"offset": 4, "size": 4},
                                            {"offset": 8, "size": 8}, {"offset": 16, "size": 8}],
          "param_blob": blob(params), "param_bytes": len(params),
          "pointers": [{"offset": 8, "value": hex(xb), "allocation": 0},
                       {"offset": 16, "value": hex(yb + 4), "allocation": 1}],
          "allocations": [{"base": hex(xb), "bytes": 16, "before": blob(x), "after": blob(x)},
                          {"base": hex(yb), "bytes": 16, "before": blob(y0), "after": blob(y1)}]}
refusal = {"seq": 1, "kernel": "_Z3mgdPf", "name": "mgd(float*)",
           "reason": "managed memory: parameter word at offset 0 (0x7f0000009000) points into a managed allocation"}
manifest = {"schema": "kloop-capture/2" if mode == "badversion" else "kloop-capture/1",
            "compression": "zlib", "hash": "fnv1a64",
            "device": {"name": "Fake GPU", "cc": "9.0"}, "program": sys.argv, "kernels": [],
            "launches_per_config": 1, "globals": {"captured": False, "note": "not captured: fake"},
            "launches": [] if mode == "refused" else [launch],
            "refusals": [refusal, dict(refusal, seq=2)] if mode == "refused" else [refusal],
            "launches_skipped": 7, "cost": {"capture_ns": 1500000, "bytes_copied": 64, "blob_bytes_written": 100},
            "errors": []}
if mode == "corrupt":
    with open(os.path.join(cap, "blobs", launch["allocations"][1]["after"]), "wb") as f:
        f.write(zlib.compress(y0))
if mode != "nomanifest":
    with open(os.path.join(cap, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
profile = {"schema": "kloop-cupti/1", "device": {"name": "Fake GPU", "cc": "9.0", "l2_bytes": 1048576},
           "launches": [{"seq": i, "kernel": "_Z5saxpyifPKfPf", "name": "saxpy(int, float, float const*, float*)",
                         "grid": [1, 1, 1], "block": [4, 1, 1], "start_ns": 1000 * i, "end_ns": 1000 * i + 2500,
                         "duration_ns": 2500} for i in range(4)],
           "env_samples": [], "nvml": False, "captures": [], "overhead": {"wall_ns_in_callbacks": 0}}
with open(out, "w") as f:
    json.dump(profile, f)
