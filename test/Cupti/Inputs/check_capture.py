#!/usr/bin/env python3
"""Checks the JSON that libkloop-cupti.so wrote for a run of capture_app.cu (see that file for the launches).

Every expected hash is computed here, on the host, from the values the kernels must produce: a capture
that copied the wrong bytes, at the wrong time or the wrong length cannot match. Prints one line per
verified fact (for FileCheck) and exits 1 with the reasons on any mismatch.

usage: check_capture.py --mode plain|nan|sentinel [--dumps] [--no-nvml-required] RUN.json
"""
import argparse
import json
import os
import struct
import sys

N = 4096


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from buffer_hash import buffer_hash_hex as capture_hash  # noqa: E402  (kloop/Support/BufferHash.h)


def f32(values) -> bytes:
    return struct.pack("<%df" % len(values), *values)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["plain", "nan", "sentinel"], required=True)
    ap.add_argument("--dumps", action="store_true", help="KLOOP_CUPTI_DUMP=1 was set: check the dump files")
    ap.add_argument("--no-nvml-required", action="store_true")
    ap.add_argument("json")
    a = ap.parse_args()
    with open(a.json) as f:
        doc = json.load(f)
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)
        return cond

    expect(doc.get("schema") == "kloop-cupti/1", "schema is %r" % doc.get("schema"))
    expect(doc.get("errors") == [], "errors: %r" % doc.get("errors"))
    expect(doc.get("warnings") == [], "warnings: %r" % doc.get("warnings"))
    dev = doc.get("device") or {}
    if expect(dev.get("name") and "." in str(dev.get("cc", "")) and dev.get("l2_bytes", 0) > 0,
              "device: %r" % dev):
        print("device ok")

    launches = doc.get("launches", [])
    names = [(l["seq"], l["name"]) for l in launches]
    expected_kernels = ["saxpy(int, float, float const*, float*)"] * 3 + ["c_scale", "half_writer(float*, int)"]
    if expect([n for _, n in names] == expected_kernels and [s for s, _ in names] == list(range(5)),
              "launches (seq, name): %r" % names):
        print("launches: 5 in order")
    for l in launches:
        grid = [8, 1, 1] if l["name"].startswith("half_writer") else [16, 1, 1]
        expect(l["grid"] == grid and l["block"] == [256, 1, 1],
               "seq %s grid/block %r %r" % (l["seq"], l["grid"], l["block"]))
        expect(0 < l["start_ns"] < l["end_ns"] and l["duration_ns"] == l["end_ns"] - l["start_ns"],
               "seq %s times %r..%r" % (l["seq"], l["start_ns"], l["end_ns"]))
        expect(l["registers"] > 0, "seq %s registers %r" % (l["seq"], l["registers"]))
    if launches and launches[0]["kernel"] == "_Z5saxpyifPKfPf":
        print("mangled name ok")

    samples = doc.get("env_samples", [])
    if doc.get("nvml"):
        if expect(samples and any(s["sm_clock_mhz"] > 0 and s["power_mw"] > 0 for s in samples),
                  "NVML samples without clock/power: %r" % samples[:3]):
            print("nvml samples ok")
    else:
        expect(a.no_nvml_required, "nvml false: %r" % doc.get("nvml_error"))

    ov = doc.get("overhead", {})
    if expect(ov.get("wall_ns_in_callbacks", 0) > 0 and ov.get("callbacks", 0) >= 10, "overhead %r" % ov):
        print("overhead reported")

    # Expected bytes of every captured buffer.
    x = f32([float(i) for i in range(N)])
    y = [f32([k * i + 1.0 for i in range(N)]) for k in (2.0, 4.0, 6.0)]
    z = f32([3.0 * i for i in range(N)])
    half = f32([1.0] * (N // 2))
    tail = {"plain": f32([0.0] * (N // 2)), "nan": b"\xff" * (4 * N // 2),
            "sentinel": b"\xa5" * (4 * N // 2)}[a.mode]
    w = half + tail
    expected = {
        (0, 2): (x, 0), (0, 3): (y[0], 0),
        (1, 2): (x, 1), (1, 3): (y[1], 1),
        (2, 2): (x, 2), (2, 3): (y[2], 2),
        (3, 0): (z, 0),
        (4, 0): (w, 0),
    }
    caps = {(c["seq"], c["arg"]): c for c in doc.get("captures", [])}
    expect(sorted(caps) == sorted(expected), "captured (seq, arg): %r" % sorted(caps))
    for key, (data, ordinal) in sorted(expected.items()):
        c = caps.get(key)
        if not c:
            continue
        ok = expect(c["hash"] == capture_hash(data), "seq %d arg %d hash %s, expected %s" % (
            key[0], key[1], c["hash"], capture_hash(data)))
        ok &= expect(c["bytes"] == len(data), "seq %d arg %d bytes %r" % (key[0], key[1], c["bytes"]))
        ok &= expect(c["kernel_ordinal"] == ordinal, "seq %d ordinal %r" % (key[0], c["kernel_ordinal"]))
        poisoned = a.mode != "plain" and key == (4, 0)
        ok &= expect(c["poisoned"] == poisoned, "seq %d arg %d poisoned %r" % (key[0], key[1], c["poisoned"]))
        if a.dumps:
            path = os.path.join(os.path.dirname(os.path.abspath(a.json)), c["dump"] or "<none>")
            if expect(os.path.exists(path), "dump of seq %d arg %d missing: %r" % (key[0], key[1], c["dump"])):
                with open(path, "rb") as f:
                    ok &= expect(capture_hash(f.read()) == c["hash"], "dump %s does not hash to %s" % (path, c["hash"]))
        else:
            ok &= expect(c["dump"] is None, "dump %r without KLOOP_CUPTI_DUMP" % c["dump"])
        if ok:
            print("capture seq %d arg %d ok%s" % (key[0], key[1], " (poisoned)" if poisoned else ""))

    if failures:
        print("FAILED %s:" % a.json, file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        print("FAIL")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
